package priority

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/orca-project/orca/internal/admission"
	"github.com/orca-project/orca/internal/admission/admissiontest"
)

func class(name string, value int32, def bool, policy *corev1.PreemptionPolicy) *schedulingv1.PriorityClass {
	return &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value, GlobalDefault: def, PreemptionPolicy: policy}
}

func TestAdmitPod(t *testing.T) {
	never := corev1.PreemptNever
	cases := []struct {
		name       string
		classes    []*schedulingv1.PriorityClass
		spec       corev1.PodSpec
		wantErr    string
		wantClass  string
		wantValue  int32
		wantPolicy corev1.PreemptionPolicy
	}{
		{"named class", []*schedulingv1.PriorityClass{class("high", 1000, false, &never)}, corev1.PodSpec{PriorityClassName: "high"}, "", "high", 1000, corev1.PreemptNever},
		{"system class", SystemPriorityClasses(), corev1.PodSpec{PriorityClassName: SystemNodeCritical}, "", SystemNodeCritical, 2000001000, ""},
		{"global default", []*schedulingv1.PriorityClass{class("d", 7, true, nil), class("other", 9, false, nil)}, corev1.PodSpec{}, "", "d", 7, ""},
		{"lowest of two defaults", []*schedulingv1.PriorityClass{class("d1", 7, true, nil), class("d2", 3, true, nil)}, corev1.PodSpec{}, "", "d2", 3, ""},
		{"no default", nil, corev1.PodSpec{}, "", "", 0, corev1.PreemptLowerPriority},
		{"unknown class", nil, corev1.PodSpec{PriorityClassName: "nope"}, `pods "p" is forbidden: no PriorityClass with name nope was found`, "", 0, ""},
		{"own priority without class", nil, corev1.PodSpec{Priority: ptr.To[int32](5)},
			`pods "p" is forbidden: the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 0 from the given PriorityClass name`, "", 0, ""},
		{"own priority that matches", []*schedulingv1.PriorityClass{class("high", 1000, false, nil)}, corev1.PodSpec{PriorityClassName: "high", Priority: ptr.To[int32](1000)}, "", "high", 1000, ""},
		{"conflicting policy", []*schedulingv1.PriorityClass{class("high", 1000, false, &never)}, corev1.PodSpec{PriorityClassName: "high", PreemptionPolicy: ptr.To(corev1.PreemptLowerPriority)},
			`pods "p" is forbidden: the string value of PreemptionPolicy (PreemptLowerPriority) must not be provided in pod spec; priority admission controller computed Never from the given PriorityClass name`, "", 0, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			objs := admissiontest.New()
			for _, c := range tc.classes {
				objs.Add(priorityClassesGVR, c)
			}
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}, Spec: tc.spec}
			err := New(objs).Admit(context.Background(), &admission.Attributes{Operation: admission.Create, Resource: podsGVR, Namespace: "ns", Name: "p", Object: pod})
			if tc.wantErr != "" {
				if !apierrors.IsForbidden(err) || err.Error() != tc.wantErr {
					t.Fatalf("got %v, want 403 %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if pod.Spec.PriorityClassName != tc.wantClass || pod.Spec.Priority == nil || *pod.Spec.Priority != tc.wantValue {
				t.Fatalf("got class %q priority %v, want %q %d", pod.Spec.PriorityClassName, pod.Spec.Priority, tc.wantClass, tc.wantValue)
			}
			if tc.wantPolicy == "" && pod.Spec.PreemptionPolicy != nil || tc.wantPolicy != "" && (pod.Spec.PreemptionPolicy == nil || *pod.Spec.PreemptionPolicy != tc.wantPolicy) {
				t.Fatalf("preemptionPolicy %v, want %q", pod.Spec.PreemptionPolicy, tc.wantPolicy)
			}
		})
	}
}

func TestUpdateKeepsPriority(t *testing.T) {
	old := &corev1.Pod{Spec: corev1.PodSpec{Priority: ptr.To[int32](9), PreemptionPolicy: ptr.To(corev1.PreemptNever)}}
	next := &corev1.Pod{}
	if err := New(admissiontest.New()).Admit(context.Background(), &admission.Attributes{Operation: admission.Update, Resource: podsGVR, Object: next, OldObject: old}); err != nil {
		t.Fatal(err)
	}
	if *next.Spec.Priority != 9 || *next.Spec.PreemptionPolicy != corev1.PreemptNever {
		t.Fatalf("update lost the priority: %+v", next.Spec)
	}
}

func TestValidateGlobalDefault(t *testing.T) {
	objs := admissiontest.New().Add(priorityClassesGVR, class("d", 1, true, nil))
	p := New(objs)
	cases := []struct {
		name    string
		pc      *schedulingv1.PriorityClass
		wantErr bool
	}{
		{"second default", class("e", 2, true, nil), true},
		{"same default again", class("d", 2, true, nil), false},
		{"not a default", class("f", 2, false, nil), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := p.Validate(context.Background(), &admission.Attributes{Operation: admission.Create, Resource: priorityClassesGVR, Name: tc.pc.Name, Object: tc.pc})
			if tc.wantErr != (err != nil) {
				t.Fatalf("got %v", err)
			}
			if err != nil && err.Error() != `priorityclasses.scheduling.k8s.io "e" is forbidden: PriorityClass d is already marked as default. Only one default can exist` {
				t.Fatalf("message: %v", err)
			}
		})
	}
}

func TestBootstrapIdempotent(t *testing.T) {
	objs := admissiontest.New()
	for i := 0; i < 2; i++ {
		if err := Bootstrap(context.Background(), objs); err != nil {
			t.Fatal(err)
		}
	}
	if objs.Creates != 2 {
		t.Fatalf("created %d classes over two runs, want 2", objs.Creates)
	}
	for _, name := range []string{SystemClusterCritical, SystemNodeCritical} {
		obj, err := objs.Get(context.Background(), priorityClassesGVR, "", name)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]int32{SystemClusterCritical: 2000000000, SystemNodeCritical: 2000001000}[name]
		if v := obj.(*schedulingv1.PriorityClass).Value; v != want {
			t.Fatalf("%s = %d, want %d", name, v, want)
		}
	}
}
