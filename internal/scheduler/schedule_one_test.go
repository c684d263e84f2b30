package scheduler

import (
	"encoding/json"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDisruptionPatch(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	victim := &v1.Pod{}
	victim.Generation = 3
	var got struct {
		Status struct {
			Conditions []map[string]any `json:"conditions"`
		} `json:"status"`
	}
	if err := json.Unmarshal(disruptionPatch(victim, now), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler",
		"message":            "default-scheduler: preempting to accommodate a higher priority pod",
		"lastTransitionTime": "2026-01-02T03:04:05Z", "observedGeneration": float64(3),
	}
	if len(got.Status.Conditions) != 1 {
		t.Fatalf("conditions = %v, want one", got.Status.Conditions)
	}
	for k, v := range want {
		if got.Status.Conditions[0][k] != v {
			t.Errorf("%s = %v, want %v", k, got.Status.Conditions[0][k], v)
		}
	}

	// Marked already (a retried preemption): nothing to write.
	victim.Status.Conditions = []v1.PodCondition{{Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: v1.PodReasonPreemptionByScheduler}}
	if p := disruptionPatch(victim, now); p != nil {
		t.Errorf("patch for a marked victim = %s, want none", p)
	}
}

func TestOlderThan(t *testing.T) {
	claim := func(rv string) *v1.PersistentVolumeClaim {
		return &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{ResourceVersion: rv}}
	}
	for _, tc := range []struct {
		cached, written string
		want            bool
	}{
		{"9", "10", true}, {"10", "10", false}, {"11", "10", false}, {"", "10", false},
	} {
		if got := olderThan(claim(tc.cached), claim(tc.written)); got != tc.want {
			t.Errorf("olderThan(%q, %q) = %v", tc.cached, tc.written, got)
		}
	}
}
