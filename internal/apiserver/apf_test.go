package apiserver

import (
	"context"
	"testing"
	"time"
)

func TestWaitContext(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name     string
		deadline time.Duration // 0: none
		want     time.Duration
	}{
		{"no deadline", 0, 15 * time.Second},
		{"a quarter of what the deadline leaves", 20 * time.Second, 5 * time.Second},
		{"never more than a minute", 10 * time.Minute, time.Minute},
	} {
		ctx := context.Background()
		if tc.deadline > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithDeadline(ctx, now.Add(tc.deadline))
			defer cancel()
		}
		wctx, cancel := waitContext(ctx, now)
		dl, _ := wctx.Deadline()
		cancel()
		if got := dl.Sub(now); got != tc.want {
			t.Errorf("%s: waits %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestWatchInitializedWithoutFlowControl(t *testing.T) {
	// A watch served without priority and fairness has nothing to signal.
	watchInitialized(context.Background())
	called := 0
	watchInitialized(context.WithValue(context.Background(), watchInitKey{}, func() { called++ }))
	if called != 1 {
		t.Errorf("signal called %d times", called)
	}
}
