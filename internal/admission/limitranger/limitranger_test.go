package limitranger

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orca-project/orca/internal/admission"
	"github.com/orca-project/orca/internal/admission/admissiontest"
)

func rl(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func container(name string, req, lim corev1.ResourceList) corev1.Container {
	return corev1.Container{Name: name, Resources: corev1.ResourceRequirements{Requests: req, Limits: lim}}
}

func podWith(cs ...corev1.Container) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}, Spec: corev1.PodSpec{Containers: cs}}
}

func rangeOf(items ...corev1.LimitRangeItem) *corev1.LimitRange {
	return &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "lr", Namespace: "ns"}, Spec: corev1.LimitRangeSpec{Limits: items}}
}

func TestAdmitDefaults(t *testing.T) {
	lr := rangeOf(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Default: rl("cpu", "500m", "memory", "256Mi"), DefaultRequest: rl("cpu", "100m", "memory", "128Mi")})
	objs := admissiontest.New().Add(limitRangesGVR, lr)
	pod := podWith(container("a", nil, nil), container("b", rl("cpu", "200m"), rl("cpu", "1")))
	pod.Spec.InitContainers = []corev1.Container{container("i", nil, rl("memory", "64Mi"))}
	a := &admission.Attributes{Operation: admission.Create, Resource: podsGVR, Namespace: "ns", Name: "p", Object: pod}
	if err := New(objs).Admit(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	check := func(l corev1.ResourceList, name corev1.ResourceName, want string) {
		t.Helper()
		if q := l[name]; q.Cmp(resource.MustParse(want)) != 0 {
			t.Fatalf("%s = %s, want %s", name, q.String(), want)
		}
	}
	a0, b, i := pod.Spec.Containers[0].Resources, pod.Spec.Containers[1].Resources, pod.Spec.InitContainers[0].Resources
	check(a0.Requests, "cpu", "100m")
	check(a0.Limits, "memory", "256Mi")
	check(b.Requests, "cpu", "200m")
	check(b.Requests, "memory", "128Mi")
	check(b.Limits, "cpu", "1")
	check(i.Limits, "memory", "64Mi")
	want := "LimitRanger plugin set: cpu, memory request for container a; cpu, memory limit for container a; memory request for container b; memory limit for container b; cpu, memory request for init container i; cpu limit for init container i"
	if got := pod.Annotations[Annotation]; got != want {
		t.Fatalf("annotation\n got %q\nwant %q", got, want)
	}
}

func TestValidate(t *testing.T) {
	containerMax := corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Max: rl("cpu", "1"), Min: rl("memory", "10Mi")}
	ratio := corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, MaxLimitRequestRatio: rl("cpu", "2")}
	podMax := corev1.LimitRangeItem{Type: corev1.LimitTypePod, Max: rl("memory", "1Gi")}
	pvc := corev1.LimitRangeItem{Type: corev1.LimitTypePersistentVolumeClaim, Min: rl("storage", "1Gi"), Max: rl("storage", "10Gi")}
	claim := func(size string) *corev1.PersistentVolumeClaim {
		return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns"},
			Spec: corev1.PersistentVolumeClaimSpec{Resources: corev1.VolumeResourceRequirements{Requests: rl("storage", size)}}}
	}
	cases := []struct {
		name    string
		item    corev1.LimitRangeItem
		obj     interface{}
		wantErr string
	}{
		{"within container max", containerMax, podWith(container("a", rl("memory", "20Mi"), rl("cpu", "1"))), ""},
		{"container limit over max", containerMax, podWith(container("a", rl("memory", "20Mi"), rl("cpu", "2"))),
			`pods "p" is forbidden: maximum cpu usage per Container is 1, but limit is 2`},
		{"container without limit", containerMax, podWith(container("a", rl("memory", "20Mi"), nil)),
			`pods "p" is forbidden: maximum cpu usage per Container is 1.  No limit is specified`},
		{"container under min", containerMax, podWith(container("a", rl("memory", "1Mi"), rl("cpu", "1"))),
			`pods "p" is forbidden: minimum memory usage per Container is 10Mi, but request is 1Mi`},
		{"two violations", containerMax, podWith(container("a", rl("memory", "1Mi"), rl("cpu", "3"))),
			`pods "p" is forbidden: [minimum memory usage per Container is 10Mi, but request is 1Mi, maximum cpu usage per Container is 1, but limit is 3]`},
		{"ratio ok", ratio, podWith(container("a", rl("cpu", "500m"), rl("cpu", "1"))), ""},
		{"ratio exceeded", ratio, podWith(container("a", rl("cpu", "100m"), rl("cpu", "1"))),
			`pods "p" is forbidden: cpu max limit to request ratio per Container is 2, but provided ratio is 10.000000`},
		{"pod max", podMax, podWith(container("a", nil, rl("memory", "600Mi")), container("b", nil, rl("memory", "600Mi"))),
			`pods "p" is forbidden: maximum memory usage per Pod is 1Gi, but limit is 1200Mi`},
		{"claim ok", pvc, claim("5Gi"), ""},
		{"claim too big", pvc, claim("20Gi"), `persistentvolumeclaims "c" is forbidden: maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi`},
		{"claim too small", pvc, claim("100Mi"), `persistentvolumeclaims "c" is forbidden: minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 100Mi`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			objs := admissiontest.New().Add(limitRangesGVR, rangeOf(tc.item))
			a := &admission.Attributes{Operation: admission.Create, Resource: podsGVR, Namespace: "ns"}
			switch o := tc.obj.(type) {
			case *corev1.Pod:
				a.Object, a.Name = o, o.Name
			case *corev1.PersistentVolumeClaim:
				a.Object, a.Name, a.Resource = o, o.Name, pvcsGVR
			}
			err := New(objs).Validate(context.Background(), a)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !apierrors.IsForbidden(err) || err.Error() != tc.wantErr {
				t.Fatalf("got %v\nwant 403 %q", err, tc.wantErr)
			}
		})
	}
}

func TestPodUpdateIgnored(t *testing.T) {
	objs := admissiontest.New().Add(limitRangesGVR, rangeOf(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Max: rl("cpu", "1")}))
	pod := podWith(container("a", nil, rl("cpu", "2")))
	if err := New(objs).Validate(context.Background(), &admission.Attributes{Operation: admission.Update, Resource: podsGVR, Namespace: "ns", Object: pod, OldObject: pod}); err != nil {
		t.Fatalf("pod updates cannot change containers' resources, so they are not checked: %v", err)
	}
}

// A resize is held to the limits as a create is, and filled with
// defaults without the annotation, which a resize cannot write.
func TestPodResizeChecked(t *testing.T) {
	objs := admissiontest.New().Add(limitRangesGVR, rangeOf(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Max: rl("cpu", "1"), Default: rl("memory", "64Mi")}))
	pod := podWith(container("a", nil, rl("cpu", "2")))
	a := &admission.Attributes{Operation: admission.Update, Resource: podsGVR, Subresource: "resize", Namespace: "ns", Object: pod, OldObject: pod.DeepCopy()}
	if err := New(objs).Admit(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	if pod.Spec.Containers[0].Resources.Limits.Memory().Value() != 64<<20 || pod.Annotations[Annotation] != "" {
		t.Errorf("defaults %v, annotations %v", pod.Spec.Containers[0].Resources, pod.Annotations)
	}
	if err := New(objs).Validate(context.Background(), a); !apierrors.IsForbidden(err) {
		t.Fatalf("a resize over the maximum: %v", err)
	}
}
