package replicaset

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func testRS(replicas, minReady int32) *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", Generation: 3},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To(replicas), MinReadySeconds: minReady,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web", "tier": "front"}}}},
	}
}

func labelled(l map[string]string) func(*v1.Pod) { return func(p *v1.Pod) { p.Labels = l } }

func TestStatusCounts(t *testing.T) {
	full := map[string]string{"app": "web", "tier": "front"}
	pods := []*v1.Pod{
		pod("available", labelled(full), ready(now.Add(-time.Minute))),
		pod("ready-recently", labelled(full), ready(now.Add(-2*time.Second))),
		pod("not-ready", labelled(full), notReady),
		pod("partly-labelled", labelled(map[string]string{"app": "web"})),
	}
	st := Status(testRS(4, 10), pods, 2, nil, now)
	if st.Replicas != 4 || st.FullyLabeledReplicas != 3 || st.ReadyReplicas != 3 || st.AvailableReplicas != 2 || *st.TerminatingReplicas != 2 {
		t.Fatalf("status %+v", st)
	}
	if d := AvailabilityRecheck(testRS(4, 10), pods, now); d != 9*time.Second {
		t.Errorf("recheck after %v, want 9s (8s left plus a second)", d)
	}
	if d := AvailabilityRecheck(testRS(4, 0), pods, now); d != 0 {
		t.Errorf("recheck after %v without minReadySeconds", d)
	}
}

func TestStatusReplicaFailure(t *testing.T) {
	rs := testRS(3, 0)
	quota := errors.New(`pods "web-abcde" is forbidden: exceeded quota: q`)
	st := Status(rs, []*v1.Pod{pod("one")}, 0, quota, now)
	c := condition(st.Conditions, appsv1.ReplicaSetReplicaFailure)
	if c == nil || c.Status != v1.ConditionTrue || c.Reason != "FailedCreate" || c.Message != quota.Error() {
		t.Fatalf("conditions %+v", st.Conditions)
	}
	// A second failure keeps the first condition (and its time).
	rs.Status = st
	st2 := Status(rs, []*v1.Pod{pod("one")}, 0, errors.New("other"), now.Add(time.Minute))
	if c := condition(st2.Conditions, appsv1.ReplicaSetReplicaFailure); c == nil || c.Message != quota.Error() || len(st2.Conditions) != 1 {
		t.Fatalf("conditions after second failure %+v", st2.Conditions)
	}
	// Too many pods and a failing delete: FailedDelete.
	st3 := Status(testRS(0, 0), []*v1.Pod{pod("one")}, 0, errors.New("boom"), now)
	if c := condition(st3.Conditions, appsv1.ReplicaSetReplicaFailure); c == nil || c.Reason != "FailedDelete" {
		t.Fatalf("conditions %+v", st3.Conditions)
	}
	// Success clears it.
	rs.Status = st
	if st4 := Status(rs, []*v1.Pod{pod("one")}, 0, nil, now); len(st4.Conditions) != 0 {
		t.Fatalf("condition not cleared: %+v", st4.Conditions)
	}
}

func TestSlowStartBatch(t *testing.T) {
	var calls atomic.Int32
	n, err := slowStartBatch(10, 1, func() error { calls.Add(1); return nil })
	if n != 10 || err != nil || calls.Load() != 10 {
		t.Fatalf("all succeed: %d created, %d calls, err %v", n, calls.Load(), err)
	}
	// Batches 1, 2, 4: the third call fails, so the batch of 4 never runs.
	calls.Store(0)
	n, err = slowStartBatch(10, 1, func() error {
		if calls.Add(1) == 3 {
			return errors.New("quota")
		}
		return nil
	})
	if n != 2 || err == nil || calls.Load() != 3 {
		t.Fatalf("failing: %d created, %d calls, err %v", n, calls.Load(), err)
	}
	calls.Store(0)
	if n, err := slowStartBatch(10, 1, func() error { calls.Add(1); return errors.New("denied") }); n != 0 || err == nil || calls.Load() != 1 {
		t.Fatalf("first fails: %d created, %d calls", n, calls.Load())
	}
}

func TestReplicationControllerRoundTrip(t *testing.T) {
	rc := &v1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Name: "rc", Namespace: "ns", UID: "u"},
		Spec: v1.ReplicationControllerSpec{Replicas: ptr.To[int32](2), MinReadySeconds: 5, Selector: map[string]string{"app": "x"},
			Template: &v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "x"}}}},
	}
	rs := fromRC(rc)
	if *rs.Spec.Replicas != 2 || rs.Spec.MinReadySeconds != 5 || rs.Spec.Selector.MatchLabels["app"] != "x" || rs.Spec.Template.Labels["app"] != "x" || rs.UID != "u" {
		t.Fatalf("converted %+v", rs)
	}
	st := Status(rs, nil, 0, errors.New("denied"), now)
	back := rcStatus(st)
	if len(back.Conditions) != 1 || back.Conditions[0].Type != v1.ReplicationControllerReplicaFailure || back.Conditions[0].Reason != "FailedCreate" {
		t.Fatalf("rc status %+v", back)
	}
	rc.Spec.Template = nil
	if rs := fromRC(rc); len(rs.Spec.Template.Labels) != 0 {
		t.Fatal("template-less RC got a template")
	}
}
