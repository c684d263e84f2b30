package podstatus

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The status, and every condition the kubelet writes (PodScheduled
// included, as upstream's kubelet restates it), carry the generation of
// the pod they judged; conditions others own are left alone.
func TestObservedGeneration(t *testing.T) {
	p := pod(v1.RestartPolicyAlways, []string{"init"}, "a")
	p.Generation = 3
	p.Spec.ReadinessGates = []v1.PodReadinessGate{{ConditionType: "example.com/gate"}}
	bound := metav1.NewTime(now.Add(-time.Hour))
	gate := v1.PodCondition{Type: "example.com/gate", Status: v1.ConditionTrue, ObservedGeneration: 1}
	p.Status.ObservedGeneration = 2
	p.Status.Conditions = []v1.PodCondition{
		{Type: v1.PodScheduled, Status: v1.ConditionTrue, LastTransitionTime: bound},
		{Type: v1.PodReady, Status: v1.ConditionFalse, ObservedGeneration: 2},
		gate,
	}
	st := Compute(Input{Pod: p, SandboxReady: true, Now: now,
		Instances: map[string][]Instance{"init": {exited(0, 0)}, "a": {running(0)}}})
	if st.ObservedGeneration != 3 {
		t.Errorf("status observedGeneration %d, want 3", st.ObservedGeneration)
	}
	for _, typ := range []v1.PodConditionType{v1.PodReadyToStartContainers, v1.PodInitialized, v1.ContainersReady, v1.PodReady, v1.PodScheduled} {
		if c := cond(st, typ); c.ObservedGeneration != 3 || c.Status != v1.ConditionTrue {
			t.Errorf("%s: %+v, want True at generation 3", typ, c)
		}
	}
	if c := cond(st, v1.PodScheduled); !c.LastTransitionTime.Equal(&bound) {
		t.Errorf("PodScheduled transition time %v, want the binding's %v", c.LastTransitionTime, bound)
	}
	if c := cond(st, "example.com/gate"); c != gate {
		t.Errorf("readiness gate condition changed: %+v", c)
	}
}
