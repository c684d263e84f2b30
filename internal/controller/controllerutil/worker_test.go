package controllerutil

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/workqueue"
	clocktesting "k8s.io/utils/clock/testing"
)

// recordingLimiter records what the worker asks of the rate limiter.
type recordingLimiter struct {
	when, forget []string
}

func (r *recordingLimiter) When(k string) time.Duration {
	r.when = append(r.when, k)
	return time.Hour
}
func (r *recordingLimiter) Forget(k string)          { r.forget = append(r.forget, k) }
func (r *recordingLimiter) NumRequeues(k string) int { return len(r.when) }

func TestProcessQueueOutcomes(t *testing.T) {
	conflict := apierrors.NewConflict(schema.GroupResource{Resource: "things"}, "a", errors.New("stale"))
	cases := []struct {
		name        string
		err         error
		opts        []Option
		wantWhen    int    // rate-limited retries
		wantForget  int    // failures forgotten
		wantBackIn  bool   // the key returns after the requeue delay
		wantLogPart string // "" for no log line at info level
	}{
		{name: "success forgets the failures", wantForget: 1},
		{name: "failure retries at the rate limit", err: errors.New("boom"), wantWhen: 1, wantLogPart: `level=WARN msg="sync failed; retrying" thing=a err=boom`},
		{name: "expected failure retries quietly", err: conflict, opts: []Option{Expected(apierrors.IsConflict)}, wantWhen: 1},
		{name: "unexpected conflict warns", err: conflict, wantWhen: 1, wantLogPart: "level=WARN"},
		{name: "requeue after forgets and comes back", err: RequeueAfter(time.Minute), wantForget: 1, wantBackIn: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(time.Date(2026, 11, 29, 6, 0, 0, 0, time.UTC))
			rl := &recordingLimiter{}
			q := workqueue.NewTypedRateLimitingQueueWithConfig[string](rl, workqueue.TypedRateLimitingQueueConfig[string]{Clock: clk})
			defer q.ShutDown()
			var logs bytes.Buffer
			log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
			q.Add("a")
			calls := 0
			sync := func(context.Context, string) error { calls++; return tc.err }
			if !processNext(context.Background(), q, sync, log, "thing", collect(tc.opts)) {
				t.Fatal("processNext reported a shut-down queue")
			}
			if calls != 1 || len(rl.when) != tc.wantWhen || len(rl.forget) != tc.wantForget {
				t.Errorf("calls %d, rate-limited %v, forgotten %v; want 1, %d, %d", calls, rl.when, rl.forget, tc.wantWhen, tc.wantForget)
			}
			if got := logs.String(); (tc.wantLogPart == "") != (got == "") || !strings.Contains(got, tc.wantLogPart) {
				t.Errorf("log %q, want one containing %q", got, tc.wantLogPart)
			}
			if q.Len() != 0 {
				t.Fatalf("key back at once: len %d", q.Len())
			}
			clk.Step(time.Minute)
			back := eventually(func() bool { return q.Len() == 1 })
			if back != tc.wantBackIn {
				t.Errorf("key back after a minute: %v, want %v", back, tc.wantBackIn)
			}
		})
	}
}

func collect(opts []Option) options {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// eventually polls cond for a while: the delaying queue moves a key
// across on its own goroutine.
func eventually(cond func() bool) bool {
	for deadline := time.Now().Add(300 * time.Millisecond); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

func TestProcessQueueStopsWithContext(t *testing.T) {
	q := NewQueue[string]("", nil)
	defer q.ShutDown()
	q.Add("a")
	q.Add("b")
	ctx, cancel := context.WithCancel(context.Background())
	var seen []string
	ProcessQueue(ctx, q, func(_ context.Context, k string) error {
		seen = append(seen, k)
		cancel()
		return nil
	}, slog.New(slog.DiscardHandler), "key")
	if len(seen) != 1 || q.Len() != 1 {
		t.Errorf("synced %v with %d left; want one synced and the other left", seen, q.Len())
	}
}
