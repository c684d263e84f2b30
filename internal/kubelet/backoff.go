package kubelet

import (
	"time"

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

// restartGate decides whether a container that finished at finishedAt may
// start again now. If not, it returns how long the current back-off is
// and how much of it is left; if so, it records the restart, doubling the
// next back-off.
func restartGate(b *flowcontrol.Backoff, key string, finishedAt time.Time, now time.Time) (wait, left time.Duration, blocked bool) {
	if b.IsInBackOffSince(key, finishedAt) {
		wait = b.Get(key)
		return wait, finishedAt.Add(wait).Sub(now), true
	}
	b.Next(key, finishedAt)
	return 0, 0, false
}
