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
