package job

import (
	"time"

	v1 "k8s.io/api/core/v1"
)

// Upstream's pod failure back-off: 10 s doubling per failure since the last
// success, capped at 10 minutes (the job controller's
// MaxJobPodFailureBackOff; older docs say six).
const (
	podFailureBackoff    = 10 * time.Second
	maxPodFailureBackoff = 10 * time.Minute
)

// backoffDelay is how long to wait after the last failure before creating
// a replacement, given the failures since the last success.
func backoffDelay(failures int) time.Duration {
	if failures <= 0 {
		return 0
	}
	d := podFailureBackoff
	for i := 1; i < failures; i++ {
		d *= 2
		if d >= maxPodFailureBackoff {
			return maxPodFailureBackoff
		}
	}
	return d
}

// finishTime is when a terminated pod finished: its last container's
// termination, or, lacking that, when it was deleted or created.
func finishTime(p *v1.Pod) time.Time {
	var t time.Time
	for _, list := range [][]v1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
		for _, cs := range list {
			if cs.State.Terminated != nil && cs.State.Terminated.FinishedAt.Time.After(t) {
				t = cs.State.Terminated.FinishedAt.Time
			}
		}
	}
	if t.IsZero() {
		for _, c := range p.Status.Conditions {
			if c.Type == v1.PodReady && c.LastTransitionTime.Time.After(t) {
				t = c.LastTransitionTime.Time
			}
		}
	}
	if t.IsZero() && p.DeletionTimestamp != nil {
		t = p.DeletionTimestamp.Time
	}
	if t.IsZero() {
		t = p.CreationTimestamp.Time
	}
	return t
}

// remainingBackoff derives the wait before the next pod from the pods
// themselves (a Job keeps its finished pods), so it survives restarts:
// failures after the last success count, timed from the latest failure.
func remainingBackoff(pods []*v1.Pod, now time.Time) time.Duration {
	var lastSuccess, lastFailure time.Time
	for _, p := range pods {
		if p.Status.Phase == v1.PodSucceeded {
			if t := finishTime(p); t.After(lastSuccess) {
				lastSuccess = t
			}
		}
	}
	failures := 0
	for _, p := range pods {
		if p.Status.Phase != v1.PodFailed {
			continue
		}
		t := finishTime(p)
		if t.Before(lastSuccess) {
			continue
		}
		failures++
		if t.After(lastFailure) {
			lastFailure = t
		}
	}
	if failures == 0 {
		return 0
	}
	left := backoffDelay(failures) - now.Sub(lastFailure)
	if left < 0 {
		return 0
	}
	return left
}
