package runtimeclass

import (
	"context"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/orca-project/orca/internal/admission"
	"github.com/orca-project/orca/internal/admission/admissiontest"
)

func class(name string, overhead corev1.ResourceList, scheduling *nodev1.Scheduling) *nodev1.RuntimeClass {
	rc := &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Handler: name, Scheduling: scheduling}
	if overhead != nil {
		rc.Overhead = &nodev1.Overhead{PodFixed: overhead}
	}
	return rc
}

func cpuMem(cpu, mem string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}
}

func podWith(mutate func(*corev1.PodSpec)) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
	if mutate != nil {
		mutate(&p.Spec)
	}
	return p
}

func runtimeClassName(name string) func(*corev1.PodSpec) {
	return func(s *corev1.PodSpec) { s.RuntimeClassName = ptr.To(name) }
}

// TestAdmission runs both halves of the plugin, as the server does around
// validation, and compares the pod that comes out or the refusal.
func TestAdmission(t *testing.T) {
	kata := class("kata", cpuMem("250m", "120Mi"), &nodev1.Scheduling{
		NodeSelector: map[string]string{"sandbox": "kata"},
		Tolerations:  []corev1.Toleration{{Key: "sandbox", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
	})
	runc := class("runc", nil, nil)
	for _, tc := range []struct {
		name    string
		pod     *corev1.Pod
		wantErr string
		want    func(*corev1.PodSpec)
	}{
		{name: "no class", pod: podWith(nil)},
		{name: "class without overhead or scheduling", pod: podWith(runtimeClassName("runc")), want: runtimeClassName("runc")},
		{
			name:    "missing class",
			pod:     podWith(runtimeClassName("gvisor")),
			wantErr: `pods "p" is forbidden: pod rejected: RuntimeClass "gvisor" not found`,
		},
		{
			name: "overhead and scheduling from the class",
			pod:  podWith(runtimeClassName("kata")),
			want: func(s *corev1.PodSpec) {
				s.RuntimeClassName = ptr.To("kata")
				s.Overhead = cpuMem("250m", "120Mi")
				s.NodeSelector = map[string]string{"sandbox": "kata"}
				s.Tolerations = []corev1.Toleration{{Key: "sandbox", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
			},
		},
		{
			name: "the class's own overhead stated by the pod",
			pod:  podWith(func(s *corev1.PodSpec) { s.RuntimeClassName, s.Overhead = ptr.To("kata"), cpuMem("0.25", "120Mi") }),
			want: func(s *corev1.PodSpec) {
				s.RuntimeClassName = ptr.To("kata")
				s.Overhead = cpuMem("250m", "120Mi")
				s.NodeSelector = map[string]string{"sandbox": "kata"}
				s.Tolerations = []corev1.Toleration{{Key: "sandbox", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
			},
		},
		{
			name:    "another overhead",
			pod:     podWith(func(s *corev1.PodSpec) { s.RuntimeClassName, s.Overhead = ptr.To("kata"), cpuMem("1", "120Mi") }),
			wantErr: `pods "p" is forbidden: pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead`,
		},
		{
			name:    "overhead without a class",
			pod:     podWith(func(s *corev1.PodSpec) { s.Overhead = cpuMem("1", "1Mi") }),
			wantErr: `pods "p" is forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead`,
		},
		{
			name:    "overhead with a class that defines none",
			pod:     podWith(func(s *corev1.PodSpec) { s.RuntimeClassName, s.Overhead = ptr.To("runc"), cpuMem("1", "1Mi") }),
			wantErr: `pods "p" is forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead`,
		},
		{
			name: "node selectors merge",
			pod: podWith(func(s *corev1.PodSpec) {
				s.RuntimeClassName, s.NodeSelector = ptr.To("kata"), map[string]string{"zone": "a"}
			}),
			want: func(s *corev1.PodSpec) {
				s.RuntimeClassName = ptr.To("kata")
				s.Overhead = cpuMem("250m", "120Mi")
				s.NodeSelector = map[string]string{"zone": "a", "sandbox": "kata"}
				s.Tolerations = []corev1.Toleration{{Key: "sandbox", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
			},
		},
		{
			name: "conflicting node selector",
			pod: podWith(func(s *corev1.PodSpec) {
				s.RuntimeClassName, s.NodeSelector = ptr.To("kata"), map[string]string{"sandbox": "gvisor"}
			}),
			wantErr: `pods "p" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[sandbox] = kata; pod.spec.nodeSelector[sandbox] = gvisor`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := admissiontest.New().Add(runtimeClassesGVR, kata).Add(runtimeClassesGVR, runc)
			p := New(objs)
			attrs := &admission.Attributes{Operation: admission.Create, Resource: podsGVR, Namespace: "ns", Name: "p", Object: tc.pod}
			err := p.Admit(context.Background(), attrs)
			if err == nil {
				err = p.Validate(context.Background(), attrs)
			}
			if tc.wantErr != "" {
				if !apierrors.IsForbidden(err) || err.Error() != tc.wantErr {
					t.Fatalf("got %v, want 403 %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := podWith(tc.want)
			if !reflect.DeepEqual(normalized(tc.pod.Spec), normalized(want.Spec)) {
				t.Errorf("pod spec\n got  %+v\n want %+v", tc.pod.Spec, want.Spec)
			}
		})
	}
}

// normalized prints quantities canonically, so that 0.25 and 250m compare
// equal as they do semantically.
func normalized(s corev1.PodSpec) corev1.PodSpec {
	out := *s.DeepCopy()
	for k, q := range out.Overhead {
		out.Overhead[k] = resource.MustParse(q.String())
	}
	return out
}

func TestClassObjectsStayUntouched(t *testing.T) {
	kata := class("kata", cpuMem("1", "1Mi"), &nodev1.Scheduling{NodeSelector: map[string]string{"sandbox": "kata"}})
	pod := podWith(runtimeClassName("kata"))
	if err := setScheduling(pod, kata); err != nil {
		t.Fatal(err)
	}
	_ = setOverhead(pod, kata)
	pod.Spec.NodeSelector["zone"] = "b"
	pod.Spec.Overhead[corev1.ResourceCPU] = resource.MustParse("9")
	if len(kata.Scheduling.NodeSelector) != 1 || kata.Overhead.PodFixed.Cpu().String() != "1" {
		t.Errorf("changing the pod changed the class: %+v", kata)
	}
}

func TestOnlyPodCreates(t *testing.T) {
	p := New(admissiontest.New())
	missing := podWith(runtimeClassName("gone"))
	for _, a := range []*admission.Attributes{
		{Operation: admission.Update, Resource: podsGVR, Object: missing, OldObject: missing},
		{Operation: admission.Create, Resource: podsGVR, Subresource: "binding", Object: missing},
		{Operation: admission.Create, Resource: corev1.SchemeGroupVersion.WithResource("configmaps"), Object: &corev1.ConfigMap{}},
	} {
		if err := p.Admit(context.Background(), a); err != nil {
			t.Errorf("%s %s/%s: %v", a.Operation, a.Resource.Resource, a.Subresource, err)
		}
		if err := p.Validate(context.Background(), a); err != nil {
			t.Errorf("%s %s/%s: %v", a.Operation, a.Resource.Resource, a.Subresource, err)
		}
	}
}

func TestMergeTolerations(t *testing.T) {
	exists := func(key string, effect corev1.TaintEffect) corev1.Toleration {
		return corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: effect}
	}
	equal := func(key, value string, effect corev1.TaintEffect) corev1.Toleration {
		return corev1.Toleration{Key: key, Operator: corev1.TolerationOpEqual, Value: value, Effect: effect}
	}
	noExecuteFor := func(key string, seconds int64) corev1.Toleration {
		return corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To(seconds)}
	}
	for _, tc := range []struct {
		name          string
		first, second []corev1.Toleration
		want          []corev1.Toleration
	}{
		{"nothing", nil, nil, nil},
		{"disjoint", []corev1.Toleration{exists("a", "")}, []corev1.Toleration{exists("b", "")}, []corev1.Toleration{exists("a", ""), exists("b", "")}},
		{"equal ones once", []corev1.Toleration{exists("a", "")}, []corev1.Toleration{exists("a", "")}, []corev1.Toleration{exists("a", "")}},
		{"any effect covers one", []corev1.Toleration{exists("a", corev1.TaintEffectNoSchedule)}, []corev1.Toleration{exists("a", "")}, []corev1.Toleration{exists("a", "")}},
		{"exists covers a value", []corev1.Toleration{equal("a", "x", "")}, []corev1.Toleration{exists("a", "")}, []corev1.Toleration{exists("a", "")}},
		{"empty key with exists covers all", []corev1.Toleration{equal("a", "x", ""), exists("b", "")}, []corev1.Toleration{{Operator: corev1.TolerationOpExists}}, []corev1.Toleration{{Operator: corev1.TolerationOpExists}}},
		{"a longer NoExecute tolerance covers a shorter one", []corev1.Toleration{noExecuteFor("a", 60)}, []corev1.Toleration{noExecuteFor("a", 30)}, []corev1.Toleration{noExecuteFor("a", 60)}},
		{"different values", []corev1.Toleration{equal("a", "x", "")}, []corev1.Toleration{equal("a", "y", "")}, []corev1.Toleration{equal("a", "x", ""), equal("a", "y", "")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := mergeTolerations(tc.first, tc.second); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
