package pvcprotection

import (
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

var deletedAt = metav1.NewTime(time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC))

func claim(name string, deleting bool, finalizers ...string) *v1.PersistentVolumeClaim {
	pvc := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: "7", Finalizers: finalizers}}
	if deleting {
		pvc.DeletionTimestamp = &deletedAt
	}
	return pvc
}

// ownedBy makes pvc the ephemeral claim of pod.
func ownedBy(pvc *v1.PersistentVolumeClaim, pod *v1.Pod) *v1.PersistentVolumeClaim {
	pvc.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID, Controller: ptr.To(true)}}
	return pvc
}

type podOpt func(*v1.Pod)

func pod(name string, opts ...podOpt) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(name + "-uid")}, Spec: v1.PodSpec{NodeName: "node1"}}
	for _, o := range opts {
		o(p)
	}
	return p
}

func withClaim(claimName string) podOpt {
	return func(p *v1.Pod) {
		p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: "v" + claimName,
			VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claimName}}})
	}
}

func withEphemeral(volName string) podOpt {
	return func(p *v1.Pod) {
		p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: volName,
			VolumeSource: v1.VolumeSource{Ephemeral: &v1.EphemeralVolumeSource{}}})
	}
}

func withConfigMap(volName string) podOpt {
	return func(p *v1.Pod) {
		p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: volName,
			VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{}}})
	}
}

func unscheduled(p *v1.Pod)         { p.Spec.NodeName = "" }
func inNamespace(ns string) podOpt  { return func(p *v1.Pod) { p.Namespace = ns } }
func inPhase(ph v1.PodPhase) podOpt { return func(p *v1.Pod) { p.Status.Phase = ph } }
func deleting(grace int64) podOpt {
	return func(p *v1.Pod) { p.DeletionTimestamp = &deletedAt; p.DeletionGracePeriodSeconds = &grace }
}
func running(p *v1.Pod) {
	p.Status.ContainerStatuses = []v1.ContainerStatus{{State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}}}
}
func exited(p *v1.Pod) {
	p.Status.ContainerStatuses = []v1.ContainerStatus{{State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{}}}}
}
func initRunning(p *v1.Pod) {
	p.Status.InitContainerStatuses = []v1.ContainerStatus{{State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}}}
}

func TestDecide(t *testing.T) {
	for _, tc := range []struct {
		name string
		pvc  *v1.PersistentVolumeClaim
		want action
	}{
		{"live with the finalizer", claim("c", false, Finalizer), keep},
		{"live without it gets it", claim("c", false), addFinalizer},
		{"live with others gets it too", claim("c", false, "example.com/x"), addFinalizer},
		{"deleting with it looks at its pods", claim("c", true, "example.com/x", Finalizer), checkUse},
		{"deleting without it is left alone", claim("c", true, "example.com/x"), keep},
	} {
		if got := decide(tc.pvc); got != tc.want {
			t.Errorf("%s: decide = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestPodBlocksDeletion(t *testing.T) {
	data := claim("data", true, Finalizer)
	// The ephemeral volume "scratch" of pod "web" is the claim web-scratch.
	web := pod("web")
	scratch := ownedBy(claim("web-scratch", true, Finalizer), web)
	stranger := claim("web-scratch", true, Finalizer) // same name, not the pod's
	for _, tc := range []struct {
		name string
		pod  *v1.Pod
		pvc  *v1.PersistentVolumeClaim
		want bool
	}{
		{"a running pod naming the claim", pod("p", withClaim("data"), inPhase(v1.PodRunning), running), data, true},
		{"a pending scheduled pod naming the claim", pod("p", withClaim("data"), inPhase(v1.PodPending)), data, true},
		{"a pod naming another claim", pod("p", withClaim("other"), withConfigMap("cm")), data, false},
		{"a pod naming it after other volumes", pod("p", withConfigMap("cm"), withClaim("other"), withClaim("data")), data, true},
		{"an unscheduled pod does not count", pod("p", withClaim("data"), unscheduled), data, false},
		{"a pod of another namespace does not count", pod("p", withClaim("data"), inNamespace("other")), data, false},
		// Upstream waits for the pod object to go: a finished pod's
		// volumes may not be unmounted yet.
		{"a succeeded pod still holds it", pod("p", withClaim("data"), inPhase(v1.PodSucceeded), exited), data, true},
		{"a failed pod still holds it", pod("p", withClaim("data"), inPhase(v1.PodFailed)), data, true},
		{"a pod being deleted holds it", pod("p", withClaim("data"), deleting(30)), data, true},
		{"a shut-down pod still holds a named claim", pod("p", withClaim("data"), deleting(0)), data, true},
		{"an ephemeral volume holds the pod's claim", pod("web", withEphemeral("scratch")), scratch, true},
		{"an ephemeral volume's claim of another owner", pod("web", withEphemeral("scratch")), stranger, false},
		{"an ephemeral volume of another name", pod("web", withEphemeral("cache")), scratch, false},
		{"a pod being deleted holds its ephemeral claim", pod("web", withEphemeral("scratch"), deleting(30)), scratch, true},
		{"a shut-down pod lets its ephemeral claim go", pod("web", withEphemeral("scratch"), deleting(0)), scratch, false},
		{"an unscheduled pod lets its ephemeral claim go", pod("web", withEphemeral("scratch"), unscheduled), scratch, false},
	} {
		if got := podBlocksDeletion(tc.pod, tc.pvc); got != tc.want {
			t.Errorf("%s: podBlocksDeletion = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestFirstPod(t *testing.T) {
	data := claim("data", true, Finalizer)
	pods := []*v1.Pod{pod("a", withClaim("data"), unscheduled), pod("b", withClaim("other")), pod("c", withClaim("data")), pod("d", withClaim("data"))}
	if got := firstPod(data, pods, podBlocksDeletion); got == nil || got.Name != "c" {
		t.Errorf("firstPod = %v, want c", got)
	}
	if got := firstPod(data, pods[:2], podBlocksDeletion); got != nil {
		t.Errorf("firstPod = %s, want none", got.Name)
	}
	// The Unused condition counts the unscheduled pod.
	if got := firstPod(data, pods, podUsesClaim); got == nil || got.Name != "a" {
		t.Errorf("firstPod = %v, want a", got)
	}
}

func TestPodClaimKeys(t *testing.T) {
	got, err := podClaimKeys(pod("p", withEphemeral("scratch"), withConfigMap("cm"), withClaim("data")))
	if err != nil || !slices.Equal(got, []string{"ns/p-scratch", "ns/data"}) {
		t.Errorf("podClaimKeys = %q, %v", got, err)
	}
	if got := claimKeys(pod("p", withConfigMap("cm"))); len(got) != 0 {
		t.Errorf("claimKeys of a pod without claims = %q", got)
	}
	if got, _ := podClaimKeys("not a pod"); len(got) != 0 {
		t.Errorf("podClaimKeys of a non-pod = %q", got)
	}
}

func tombstone(p *v1.Pod) any {
	return cache.DeletedFinalStateUnknown{Key: p.Namespace + "/" + p.Name, Obj: p}
}

func TestPodUsesClaim(t *testing.T) {
	data := claim("data", false)
	web := pod("web")
	scratch := ownedBy(claim("web-scratch", false), web)
	for _, tc := range []struct {
		name string
		pod  *v1.Pod
		pvc  *v1.PersistentVolumeClaim
		want bool
	}{
		{"a running pod naming the claim", pod("p", withClaim("data"), inPhase(v1.PodRunning), running), data, true},
		{"an unscheduled pending pod counts", pod("p", withClaim("data"), unscheduled, inPhase(v1.PodPending)), data, true},
		{"a pod naming another claim", pod("p", withClaim("other")), data, false},
		{"a pod of another namespace", pod("p", withClaim("data"), inNamespace("other")), data, false},
		{"a succeeded pod does not", pod("p", withClaim("data"), inPhase(v1.PodSucceeded)), data, false},
		{"a failed pod does not", pod("p", withClaim("data"), inPhase(v1.PodFailed)), data, false},
		{"a pod being deleted while its containers run does", pod("p", withClaim("data"), deleting(30), running), data, true},
		{"a pod being deleted whose containers stopped does not", pod("p", withClaim("data"), deleting(30), exited), data, false},
		{"a pod being deleted whose init container runs does", pod("p", withClaim("data"), deleting(30), initRunning), data, true},
		{"the owner of an ephemeral claim", pod("web", withEphemeral("scratch")), scratch, true},
		{"an ephemeral claim of another owner", pod("web", withEphemeral("scratch")), claim("web-scratch", false), false},
	} {
		if got := podUsesClaim(tc.pod, tc.pvc); got != tc.want {
			t.Errorf("%s: podUsesClaim = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestUnusedCondition(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC))
	withUnused := func(status v1.ConditionStatus) *v1.PersistentVolumeClaim {
		pvc := claim("data", false, Finalizer)
		pvc.Status.Phase = v1.ClaimBound
		if status != "" {
			pvc.Status.Conditions = []v1.PersistentVolumeClaimCondition{
				{Type: v1.PersistentVolumeClaimResizing, Status: v1.ConditionTrue},
				{Type: v1.PersistentVolumeClaimUnused, Status: status, LastTransitionTime: deletedAt},
			}
		}
		return pvc
	}
	for _, tc := range []struct {
		name   string
		pvc    *v1.PersistentVolumeClaim
		used   bool
		status v1.ConditionStatus // "": no change
		reason string
	}{
		{"first look, used", withUnused(""), true, v1.ConditionFalse, "PodUsingPVC"},
		{"first look, unused", withUnused(""), false, v1.ConditionTrue, "NoPodsUsingPVC"},
		{"still used", withUnused(v1.ConditionFalse), true, "", ""},
		{"still unused", withUnused(v1.ConditionTrue), false, "", ""},
		{"used again", withUnused(v1.ConditionTrue), true, v1.ConditionFalse, "PodUsingPVC"},
		{"no longer used", withUnused(v1.ConditionFalse), false, v1.ConditionTrue, "NoPodsUsingPVC"},
		{"an unknown status becomes unused", withUnused(v1.ConditionUnknown), false, v1.ConditionTrue, "NoPodsUsingPVC"},
		{"an unknown status stays when used", withUnused(v1.ConditionUnknown), true, "", ""},
	} {
		got := unusedCondition(tc.pvc, tc.used, now)
		if tc.status == "" {
			if got != nil {
				t.Errorf("%s: wrote %+v", tc.name, *got)
			}
			continue
		}
		if got == nil || got.Type != v1.PersistentVolumeClaimUnused || got.Status != tc.status || got.Reason != tc.reason || !got.LastTransitionTime.Equal(&now) {
			t.Errorf("%s: unusedCondition = %+v, want %s %s at %v", tc.name, got, tc.status, tc.reason, now)
		}
	}
}

func TestWithCondition(t *testing.T) {
	resizing := v1.PersistentVolumeClaimCondition{Type: v1.PersistentVolumeClaimResizing, Status: v1.ConditionTrue}
	oldUnused := v1.PersistentVolumeClaimCondition{Type: v1.PersistentVolumeClaimUnused, Status: v1.ConditionFalse}
	newUnused := v1.PersistentVolumeClaimCondition{Type: v1.PersistentVolumeClaimUnused, Status: v1.ConditionTrue}
	in := []v1.PersistentVolumeClaimCondition{oldUnused, resizing}
	if got := withCondition(in, newUnused); !slices.Equal(got, []v1.PersistentVolumeClaimCondition{newUnused, resizing}) {
		t.Errorf("replace: %+v", got)
	}
	if in[0] != oldUnused {
		t.Errorf("withCondition changed its argument")
	}
	if got := withCondition([]v1.PersistentVolumeClaimCondition{resizing}, newUnused); !slices.Equal(got, []v1.PersistentVolumeClaimCondition{resizing, newUnused}) {
		t.Errorf("append: %+v", got)
	}
}

func TestTracksUnused(t *testing.T) {
	bound := claim("c", false, Finalizer)
	bound.Status.Phase = v1.ClaimBound
	pending := claim("c", false, Finalizer)
	pending.Status.Phase = v1.ClaimPending
	deletingBound := claim("c", true, Finalizer)
	deletingBound.Status.Phase = v1.ClaimBound
	for _, tc := range []struct {
		name string
		pvc  *v1.PersistentVolumeClaim
		want bool
	}{{"bound", bound, true}, {"pending", pending, false}, {"bound, being deleted", deletingBound, false}} {
		if got := tracksUnused(tc.pvc); got != tc.want {
			t.Errorf("%s: tracksUnused = %v", tc.name, got)
		}
	}
}
