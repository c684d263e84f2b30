package kubelet

import (
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/utils/clock"
)

// Upstream's crash-loop back-off: 10 s, doubling to 5 minutes; a
// container that ran for longer than twice the maximum starts over at 10 s.
const (
	initialRestartBackoff = 10 * time.Second
	maxRestartBackoff     = 300 * time.Second
)

func newRestartBackoff(c clock.Clock) *flowcontrol.Backoff {
	return flowcontrol.NewFakeBackOff(initialRestartBackoff, maxRestartBackoff, c)
}

// restartHold is the back-off of a container whose last run finished at
// finishedAt: how long the current back-off is, and whether it still
// holds the restart (the back-off's clock tells). It changes nothing.
func restartHold(b *flowcontrol.Backoff, key string, finishedAt time.Time) backoffHold {
	return backoffHold{wait: b.Get(key), held: b.IsInBackOffSince(key, finishedAt)}
}

// recordRestart counts a restart after a run that finished at
// finishedAt, doubling the next back-off.
func recordRestart(b *flowcontrol.Backoff, key string, finishedAt time.Time) {
	b.Next(key, finishedAt)
}

// Upstream's image pull back-off: 10 s after a failed pull, doubling to
// 5 minutes, kept per pod and image so that one pod's failures do not
// hold back another's pull.
const (
	initialPullBackoff = 10 * time.Second
	maxPullBackoff     = 300 * time.Second
)

func newPullBackoff(c clock.Clock) *flowcontrol.Backoff {
	return flowcontrol.NewFakeBackOff(initialPullBackoff, maxPullBackoff, c)
}

// pullKey names a container's image pull in the pull back-off.
func pullKey(pod *v1.Pod, c *v1.Container) string {
	return string(pod.UID) + "_" + c.Image
}

// pullHeld reports whether the back-off since the last failed pull of
// key still holds a new pull back at now, and for how long it lasts. The
// window runs from the failure, as upstream's image manager asks
// (IsInBackOffSinceUpdate): asked from now instead, it never ends.
func pullHeld(b *flowcontrol.Backoff, key string, now time.Time) backoffHold {
	return backoffHold{wait: b.Get(key), held: b.IsInBackOffSinceUpdate(key, now)}
}
