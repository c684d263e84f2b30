package controllerutil

import (
	"context"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

func TestExpectations(t *testing.T) {
	e := NewExpectations()
	now := time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	e.now = func() time.Time { return now }
	if !e.Satisfied("a") {
		t.Fatal("unknown key must be satisfied")
	}
	e.ExpectCreations("a", 2)
	e.CreationObserved("a")
	if e.Satisfied("a") {
		t.Fatal("satisfied with one creation outstanding")
	}
	e.CreationObserved("a")
	if !e.Satisfied("a") {
		t.Fatal("not satisfied after both creations")
	}
	e.ExpectDeletions("a", []string{"u1", "u2"})
	e.DeletionObserved("a", "u1")
	e.DeletionObserved("a", "u1") // seen twice counts once
	e.DeletionObserved("a", "other")
	if e.Satisfied("a") {
		t.Fatal("satisfied with a deletion outstanding")
	}
	now = now.Add(ExpectationsTimeout + time.Second)
	if !e.Satisfied("a") {
		t.Fatal("expired expectations still hold the controller back")
	}
}

func TestPodFromTemplateAndNamePrefix(t *testing.T) {
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web-5d9f", Namespace: "ns", UID: "rs-uid"}}
	ref := OwnerRef(rs, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))
	tmpl := &v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"a": "b"}},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "i"}}}}
	p := PodFromTemplate(tmpl, "ns", rs.Name, &ref)
	if p.GenerateName != "web-5d9f-" || p.Namespace != "ns" || p.Labels["app"] != "web" || p.Annotations["a"] != "b" {
		t.Fatalf("pod %+v", p.ObjectMeta)
	}
	if c := metav1.GetControllerOf(p); c == nil || c.UID != "rs-uid" || c.Kind != "ReplicaSet" || c.APIVersion != "apps/v1" || !*c.BlockOwnerDeletion {
		t.Fatalf("owner ref %+v", p.OwnerReferences)
	}
	tmpl.Labels["app"] = "changed"
	if p.Labels["app"] != "web" {
		t.Fatal("pod shares the template's label map")
	}
	long := GenerateNamePrefix("a-very-long-name-that-goes-on-and-on-and-on-and-on-and-on-and-on")
	if len(long) != 58 {
		t.Fatalf("prefix %q has %d characters, want 58", long, len(long))
	}
}

func TestClaimPodsAdoptsAndReleases(t *testing.T) {
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "rs", Namespace: "ns", UID: "rs-uid"}}
	gvk := appsv1.SchemeGroupVersion.WithKind("ReplicaSet")
	ref := OwnerRef(rs, gvk)
	other := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "x", UID: "x", Controller: &[]bool{true}[0]}
	pods := []*v1.Pod{
		{ObjectMeta: metav1.ObjectMeta{Name: "mine", Namespace: "ns", UID: "1", Labels: map[string]string{"app": "web"}, OwnerReferences: []metav1.OwnerReference{ref}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "orphan", Namespace: "ns", UID: "2", Labels: map[string]string{"app": "web"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "strayed", Namespace: "ns", UID: "3", Labels: map[string]string{"app": "db"}, OwnerReferences: []metav1.OwnerReference{ref}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "others", Namespace: "ns", UID: "4", Labels: map[string]string{"app": "web"}, OwnerReferences: []metav1.OwnerReference{other}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "unrelated", Namespace: "ns", UID: "5", Labels: map[string]string{"app": "db"}}},
	}
	var objs []runtimeObject
	for _, p := range pods {
		objs = append(objs, p)
	}
	client := fake.NewClientset(toObjects(objs)...)
	pc := PodControl{Client: client}
	got, err := pc.ClaimPods(context.Background(), rs, gvk, labels.SelectorFromSet(labels.Set{"app": "web"}), pods)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, p := range got {
		names[p.Name] = true
	}
	if len(got) != 2 || !names["mine"] || !names["orphan"] {
		t.Fatalf("claimed %v", names)
	}
	adopted, _ := client.CoreV1().Pods("ns").Get(context.Background(), "orphan", metav1.GetOptions{})
	if c := metav1.GetControllerOf(adopted); c == nil || c.UID != "rs-uid" {
		t.Errorf("orphan not adopted: %+v", adopted.OwnerReferences)
	}
	released, _ := client.CoreV1().Pods("ns").Get(context.Background(), "strayed", metav1.GetOptions{})
	if len(released.OwnerReferences) != 0 {
		t.Errorf("strayed pod not released: %+v", released.OwnerReferences)
	}
}

// The Job's way of claiming: the owner is read live before adopting, and
// its tracking finalizer comes with adoption and goes with release.
func TestClaimPodsRecheckAndFinalizers(t *testing.T) {
	ctx := context.Background()
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "j", Namespace: "ns", UID: "job-uid"}}
	gvk := batchv1.SchemeGroupVersion.WithKind("Job")
	ref := OwnerRef(job, gvk)
	const fin = batchv1.JobTrackingFinalizer
	sel := labels.SelectorFromSet(labels.Set{"job": "j"})
	orphan := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "orphan", Namespace: "ns", UID: "1", Labels: map[string]string{"job": "j"}, Finalizers: []string{"example.com/keep"}}}
	strayed := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "strayed", Namespace: "ns", UID: "2", OwnerReferences: []metav1.OwnerReference{ref}, Finalizers: []string{fin, "example.com/keep"}}}

	for _, tt := range []struct {
		name    string
		fresh   *batchv1.Job
		adopted bool
	}{
		{"owner live and well", job, true},
		{"owner deleting", &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "j", Namespace: "ns", UID: "job-uid", DeletionTimestamp: &metav1.Time{Time: time.Unix(1, 0)}}}, false},
		{"owner replaced by a namesake", &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "j", Namespace: "ns", UID: "other"}}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			client := fake.NewClientset(orphan.DeepCopy(), strayed.DeepCopy())
			reads := 0
			recheck := RecheckOwner(func(context.Context) (metav1.Object, error) { reads++; return tt.fresh, nil })
			got, err := PodControl{Client: client}.ClaimPods(ctx, job, gvk, sel, []*v1.Pod{orphan, strayed}, recheck, WithFinalizers(fin))
			if tt.adopted != (err == nil) {
				t.Fatalf("err = %v, want an error only when adoption is refused", err)
			}
			if reads != 1 {
				t.Errorf("owner read %d times, want once", reads)
			}
			p, _ := client.CoreV1().Pods("ns").Get(ctx, "orphan", metav1.GetOptions{})
			if c := metav1.GetControllerOf(p); (c != nil) != tt.adopted || len(got) != map[bool]int{true: 1}[tt.adopted] {
				t.Fatalf("orphan owners %+v, claimed %d; want adopted=%v", p.OwnerReferences, len(got), tt.adopted)
			}
			if tt.adopted && (len(p.Finalizers) != 2 || !slices.Contains(p.Finalizers, fin) || !slices.Contains(p.Finalizers, "example.com/keep")) {
				t.Errorf("adopted pod finalizers = %v, want the tracking finalizer added", p.Finalizers)
			}
			// Releasing does not depend on the recheck.
			p, _ = client.CoreV1().Pods("ns").Get(ctx, "strayed", metav1.GetOptions{})
			if len(p.OwnerReferences) != 0 || !slices.Equal(p.Finalizers, []string{"example.com/keep"}) {
				t.Errorf("released pod owners %+v finalizers %v, want neither the reference nor the tracking finalizer", p.OwnerReferences, p.Finalizers)
			}
		})
	}
}

func TestIsPodAvailable(t *testing.T) {
	now := time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	p := &v1.Pod{Status: v1.PodStatus{Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(now.Add(-5 * time.Second))}}}}
	if !IsPodAvailable(p, 0, now) || !IsPodAvailable(p, 4, now) || IsPodAvailable(p, 10, now) {
		t.Error("availability against minReadySeconds is wrong")
	}
	if !IsPodActive(p) {
		t.Error("running pod not active")
	}
	p.Status.Phase = v1.PodSucceeded
	if IsPodActive(p) {
		t.Error("succeeded pod counted active")
	}
}

func TestControlledPods(t *testing.T) {
	owned := func(name, ns, uid string) *v1.Pod {
		p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
		if uid != "" {
			p.OwnerReferences = []metav1.OwnerReference{{UID: types.UID(uid), Controller: ptr.To(true), Name: "o"}}
		}
		return p
	}
	inf := cache.NewSharedIndexInformer(&cache.ListWatch{}, &v1.Pod{}, 0, cache.Indexers{})
	if err := AddPodControllerIndex(inf); err != nil {
		t.Fatal(err)
	}
	if err := AddPodControllerIndex(inf); err != nil {
		t.Fatalf("second add by a controller sharing the informer: %v", err)
	}
	notController := owned("ref-not-controller", "ns", "")
	notController.OwnerReferences = []metav1.OwnerReference{{UID: "rs", Name: "o"}}
	for _, p := range []*v1.Pod{owned("mine", "ns", "rs"), owned("orphan", "ns", ""), owned("other", "ns", "other-uid"),
		owned("orphan-elsewhere", "elsewhere", ""), notController} {
		if err := inf.GetIndexer().Add(p); err != nil {
			t.Fatal(err)
		}
	}
	owner := &metav1.ObjectMeta{Name: "rs", Namespace: "ns", UID: "rs"}
	cases := []struct {
		name    string
		orphans bool
		want    []string
	}{
		{"own pods only", false, []string{"mine"}},
		{"own pods and the namespace's orphans", true, []string{"mine", "orphan", "ref-not-controller"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pods, err := ControlledPods(inf.GetIndexer(), owner, tc.orphans)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range pods {
				got = append(got, p.Name)
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
