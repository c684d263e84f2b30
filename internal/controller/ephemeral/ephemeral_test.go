package ephemeral

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
)

func ephemeralVolume(name string) v1.Volume {
	return v1.Volume{Name: name, VolumeSource: v1.VolumeSource{Ephemeral: &v1.EphemeralVolumeSource{
		VolumeClaimTemplate: &v1.PersistentVolumeClaimTemplate{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"note": "scratch"}},
			Spec: v1.PersistentVolumeClaimSpec{
				AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
				StorageClassName: ptr.To("local-path"),
				Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}},
			},
		},
	}}}
}

func pod(volumes ...v1.Volume) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "pod-uid"}, Spec: v1.PodSpec{Volumes: volumes}}
}

func claimOwnedBy(name string, refs ...metav1.OwnerReference) *v1.PersistentVolumeClaim {
	return &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, OwnerReferences: refs}}
}

func TestClaim(t *testing.T) {
	p := pod(ephemeralVolume("scratch"))
	got := Claim(p, &p.Spec.Volumes[0])
	want := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web-scratch", Namespace: "ns",
			Labels:      map[string]string{"app": "web"},
			Annotations: map[string]string{"note": "scratch"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "web", UID: "pod-uid",
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
		},
		Spec: p.Spec.Volumes[0].Ephemeral.VolumeClaimTemplate.Spec,
	}
	if !equality.Semantic.DeepEqual(got, want) {
		t.Fatalf("Claim =\n%+v\nwant\n%+v", got, want)
	}
	got.Labels["app"] = "changed"
	got.Spec.AccessModes[0] = v1.ReadWriteMany
	if tmpl := p.Spec.Volumes[0].Ephemeral.VolumeClaimTemplate; tmpl.Labels["app"] != "web" || tmpl.Spec.AccessModes[0] != v1.ReadWriteOnce {
		t.Error("the claim shares maps or slices with the pod's template")
	}
}

func TestPlan(t *testing.T) {
	p := pod(ephemeralVolume("scratch"), v1.Volume{Name: "cfg", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}})
	mine := metav1.OwnerReference{APIVersion: "v1", Kind: "Pod", Name: "web", UID: "pod-uid", Controller: ptr.To(true)}
	notController := mine
	notController.Controller = nil
	earlierPod := mine
	earlierPod.UID = "earlier-uid"
	const foreign = "PVC ns/web-scratch was not created for pod ns/web (pod is not owner)"
	for _, tc := range []struct {
		name     string
		vol      int
		existing *v1.PersistentVolumeClaim
		create   bool
		err      string
	}{
		{"missing claim is created", 0, nil, true, ""},
		{"own claim is left as it is", 0, claimOwnedBy("web-scratch", mine), false, ""},
		{"a claim nobody owns is not the pod's", 0, claimOwnedBy("web-scratch"), false, foreign},
		{"owned but not controlled by the pod", 0, claimOwnedBy("web-scratch", notController), false, foreign},
		{"controlled by an earlier pod of the same name", 0, claimOwnedBy("web-scratch", earlierPod), false, foreign},
		{"not an ephemeral volume", 1, nil, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Plan(p, &p.Spec.Volumes[tc.vol], tc.existing)
			if (got != nil) != tc.create {
				t.Errorf("claim to create = %v, want one: %v", got, tc.create)
			}
			if msg := errString(err); msg != tc.err {
				t.Errorf("err = %q, want %q", msg, tc.err)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestWants(t *testing.T) {
	deleting := pod(ephemeralVolume("scratch"))
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
	for _, tc := range []struct {
		name string
		pod  *v1.Pod
		want bool
	}{
		{"ephemeral volume", pod(ephemeralVolume("scratch")), true},
		{"no ephemeral volume", pod(v1.Volume{Name: "cfg", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}), false},
		{"being deleted", deleting, false},
	} {
		if got := wants(tc.pod); got != tc.want {
			t.Errorf("%s: wants = %v", tc.name, got)
		}
	}
}

type harness struct {
	client  *fake.Clientset
	factory informers.SharedInformerFactory
	rec     *record.FakeRecorder
	c       *Controller
}

func newHarness(t *testing.T, objs ...runtime.Object) *harness {
	t.Helper()
	client := fake.NewClientset(objs...)
	factory := informers.NewSharedInformerFactory(client, 0)
	rec := record.NewFakeRecorder(10)
	c, err := newController(client, factory, nil, slog.New(slog.NewTextHandler(io.Discard, nil)), nil, rec)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		var err error
		switch o := o.(type) {
		case *v1.Pod:
			err = factory.Core().V1().Pods().Informer().GetIndexer().Add(o)
		case *v1.PersistentVolumeClaim:
			err = factory.Core().V1().PersistentVolumeClaims().Informer().GetIndexer().Add(o)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	client.ClearActions()
	return &harness{client: client, factory: factory, rec: rec, c: c}
}

func (h *harness) creates() []*v1.PersistentVolumeClaim {
	var out []*v1.PersistentVolumeClaim
	for _, a := range h.client.Actions() {
		if ca, ok := a.(clienttesting.CreateAction); ok && a.GetResource().Resource == "persistentvolumeclaims" {
			out = append(out, ca.GetObject().(*v1.PersistentVolumeClaim))
		}
	}
	return out
}

func (h *harness) events() []string {
	var out []string
	for {
		select {
		case e := <-h.rec.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func TestSyncCreatesClaims(t *testing.T) {
	p := pod(ephemeralVolume("scratch"), ephemeralVolume("cache"))
	own := Claim(p, &p.Spec.Volumes[1]) // made by an earlier sync
	h := newHarness(t, p, own)
	if err := h.c.sync(context.Background(), "ns/web"); err != nil {
		t.Fatal(err)
	}
	got := h.creates()
	if len(got) != 1 || !equality.Semantic.DeepEqual(got[0], Claim(p, &p.Spec.Volumes[0])) {
		t.Fatalf("created %+v, want only web-scratch", got)
	}
	if ev := h.events(); len(ev) != 0 {
		t.Errorf("events %q, want none", ev)
	}
}

func TestSyncReportsForeignClaim(t *testing.T) {
	p := pod(ephemeralVolume("scratch"))
	h := newHarness(t, p, claimOwnedBy("web-scratch"))
	err := h.c.sync(context.Background(), "ns/web")
	if err == nil {
		t.Fatal("a foreign claim was taken as the pod's")
	}
	if got := h.creates(); len(got) != 0 {
		t.Errorf("created %v", got)
	}
	want := "Warning FailedBinding ephemeral volume scratch: PVC ns/web-scratch was not created for pod ns/web (pod is not owner)"
	if ev := h.events(); len(ev) != 1 || ev[0] != want {
		t.Errorf("events %q, want %q", ev, want)
	}
	for _, a := range h.client.Actions() {
		if a.GetVerb() != "get" && a.GetVerb() != "list" && a.GetVerb() != "watch" {
			t.Errorf("wrote %s %s to a claim that is not the pod's", a.GetVerb(), a.GetResource().Resource)
		}
	}
}

func TestSyncSkipsDeletingAndGonePods(t *testing.T) {
	p := pod(ephemeralVolume("scratch"))
	p.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
	p.Finalizers = []string{"example.com/hold"}
	h := newHarness(t, p)
	for _, key := range []string{"ns/web", "ns/gone"} {
		if err := h.c.sync(context.Background(), key); err != nil {
			t.Fatalf("%s: %v", key, err)
		}
	}
	if got := h.creates(); len(got) != 0 {
		t.Errorf("created %v", got)
	}
}

func TestClaimDeletedRequeuesItsPod(t *testing.T) {
	p := pod(ephemeralVolume("scratch"))
	other := pod(v1.Volume{Name: "data", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "web-scratch"}}})
	other.Name, other.UID = "reader", "reader-uid"
	h := newHarness(t, p, other)
	h.c.claimDeleted(Claim(p, &p.Spec.Volumes[0]))
	if h.c.queue.Len() != 1 {
		t.Fatalf("queue holds %d keys, want the owner pod only", h.c.queue.Len())
	}
	if key, _ := h.c.queue.Get(); key != "ns/web" {
		t.Errorf("queued %q", key)
	}
	h.c.claimDeleted(claimOwnedBy("unrelated"))
	if h.c.queue.Len() != 0 {
		t.Error("an unrelated claim's deletion queued a pod")
	}
}
