package kubelet

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The record survives a restart of the kubelet: what was allocated and
// given comes from the pod's file, the conditions from its status.
func TestResourceStoreSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	pod := resizePod(v1.Container{Name: "c", Resources: reqs("100m", "-", "-", "-")})
	s := newResourceStore(dir)
	if a := s.ensure(pod); !a.equal(specAllocation(pod)) {
		t.Fatalf("first allocation %v", a)
	}
	resized := pod.DeepCopy()
	resized.Spec.Containers[0].Resources = reqs("300m", "-", "-", "-")
	s.setActuated(pod.UID, "c", reqs("200m", "-", "-", "-"))
	s.updateConditions(pod.UID, func(r *resizeConditions) bool { return r.setPending(v1.PodReasonDeferred, "no room", 2, testNow) })
	if p := s.pending(); len(p) != 1 || p[0] != pod.UID {
		t.Errorf("pending %v", p)
	}

	// A new kubelet: the spec asks for more than was allocated, the
	// file says what was.
	resized.Status.Conditions = []v1.PodCondition{{Type: v1.PodResizePending, Status: v1.ConditionTrue, Reason: v1.PodReasonDeferred}}
	again := newResourceStore(dir)
	if a := again.ensure(resized); valuesOf(a["c"]).cpuRequest != 100 {
		t.Errorf("allocation after a restart %v, want the old one", a)
	}
	if a := again.actuated(pod.UID); valuesOf(a["c"]).cpuRequest != 200 {
		t.Errorf("actuated after a restart %v", a)
	}
	if c := again.conditions(pod.UID); len(c) != 1 || c[0].Type != v1.PodResizePending {
		t.Errorf("conditions after a restart %v", c)
	}
	again.forget(pod.UID)
	if _, ok := again.allocated(pod.UID); ok {
		t.Errorf("forgotten pod still allocated")
	}
}

var testNow = metav1.Now().Time
