package kubelet

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestActiveDeadline(t *testing.T) {
	start := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	pod := func(deadline *int64, started bool) *v1.Pod {
		p := &v1.Pod{Spec: v1.PodSpec{ActiveDeadlineSeconds: deadline}}
		if started {
			p.Status.StartTime = &metav1.Time{Time: start}
		}
		return p
	}
	five, hour := int64(5), int64(3600)
	for _, tc := range []struct {
		name     string
		pod      *v1.Pod
		now      time.Time
		exceeded bool
		left     time.Duration
	}{
		{"no deadline", pod(nil, true), start.Add(time.Hour), false, 0},
		{"not started", pod(&five, false), start.Add(time.Hour), false, 0},
		{"time left", pod(&five, true), start.Add(2 * time.Second), false, 3 * time.Second},
		{"at the deadline", pod(&five, true), start.Add(5 * time.Second), true, 0},
		// A deadline set on a pod that has run longer fails it at once.
		{"set late", pod(&five, true), start.Add(time.Minute), true, 0},
		{"raised", pod(&hour, true), start.Add(time.Minute), false, 59 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			exceeded, left := activeDeadline(tc.pod, tc.now)
			if exceeded != tc.exceeded || left != tc.left {
				t.Errorf("got %v %v, want %v %v", exceeded, left, tc.exceeded, tc.left)
			}
		})
	}
}
