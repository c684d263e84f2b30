package controllerutil

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"k8s.io/client-go/util/workqueue"
)

// NewQueue is a controller's workqueue: client-go's default controller
// rate limiter (per-key exponential back-off under an overall bucket),
// reporting depth, latency and retries to metrics under name. A nil
// metrics reports to client-go's global provider, as an unnamed queue
// would.
func NewQueue[K comparable](name string, metrics workqueue.MetricsProvider) workqueue.TypedRateLimitingInterface[K] {
	return workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[K](),
		workqueue.TypedRateLimitingQueueConfig[K]{Name: name, MetricsProvider: metrics})
}

// ProcessQueue is the body of a controller's worker goroutine: it hands
// each key the queue gives out to sync until the queue shuts down or ctx
// ends, retrying a failed key with the queue's rate limit and forgetting
// the failures of one that succeeded. A sync that returns RequeueAfter
// succeeded but wants its key back later. what names the key in the log.
func ProcessQueue[K comparable](ctx context.Context, q workqueue.TypedRateLimitingInterface[K], sync func(context.Context, K) error, log *slog.Logger, what string, opts ...Option) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	for ctx.Err() == nil && processNext(ctx, q, sync, log, what, o) {
	}
}

func processNext[K comparable](ctx context.Context, q workqueue.TypedRateLimitingInterface[K], sync func(context.Context, K) error, log *slog.Logger, what string, o options) bool {
	key, quit := q.Get()
	if quit {
		return false
	}
	defer q.Done(key)
	err := sync(ctx, key)
	var later *requeue
	switch {
	case err == nil:
		q.Forget(key)
	case errors.As(err, &later):
		q.Forget(key)
		q.AddAfter(key, later.after)
	default:
		level := slog.LevelWarn
		if o.expected != nil && o.expected(err) {
			level = slog.LevelDebug
		}
		log.Log(ctx, level, "sync failed; retrying", what, key, "err", err)
		q.AddRateLimited(key)
	}
	return true
}

// RequeueAfter is what a sync returns when it did all it can for now and
// wants its key again after d (a CronJob's next schedule, a namespace
// whose contents are still going): the key's failures are forgotten and
// it comes back after d, not at the rate limiter's pace.
func RequeueAfter(d time.Duration) error { return &requeue{after: d} }

type requeue struct{ after time.Duration }

func (r *requeue) Error() string { return fmt.Sprintf("requeue after %v", r.after) }

// Option changes how ProcessQueue treats a key's outcome.
type Option func(*options)

type options struct {
	expected func(error) bool
}

// Expected names failures that are part of normal work (an update that
// lost a race, an owner not yet observed): they are retried as any other
// but logged at debug level, not as warnings.
func Expected(is func(error) bool) Option {
	return func(o *options) { o.expected = is }
}
