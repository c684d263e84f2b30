package kubelet

import (
	"time"

	v1 "k8s.io/api/core/v1"
)

// Upstream's reason and message for a pod that ran past its
// activeDeadlineSeconds.
const (
	deadlineReason  = "DeadlineExceeded"
	deadlineMessage = "Pod was active on the node longer than the specified deadline"
)

// activeDeadline reports whether the pod has been active longer than its
// spec.activeDeadlineSeconds, counted from status.startTime as upstream
// does, and otherwise how long it has left (0 without a deadline or a
// start time). The deadline may be set or shortened while the pod runs.
func activeDeadline(pod *v1.Pod, now time.Time) (exceeded bool, left time.Duration) {
	if pod.Spec.ActiveDeadlineSeconds == nil || pod.Status.StartTime == nil || pod.Status.StartTime.IsZero() {
		return false, 0
	}
	allowed := time.Duration(*pod.Spec.ActiveDeadlineSeconds) * time.Second
	active := now.Sub(pod.Status.StartTime.Time)
	if active >= allowed {
		return true, 0
	}
	return false, allowed - active
}
