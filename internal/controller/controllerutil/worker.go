package controllerutil

import (
	"context"
	"log/slog"

	"k8s.io/client-go/util/workqueue"
)

// ProcessQueue is the body of a controller's worker goroutine: it hands
// each key the queue gives out to sync until the queue shuts down,
// retrying a failed key with the queue's rate limit and forgetting the
// failures of one that succeeded. what names the key in the log.
func ProcessQueue[K comparable](ctx context.Context, q workqueue.TypedRateLimitingInterface[K], sync func(context.Context, K) error, log *slog.Logger, what string) {
	for processNext(ctx, q, sync, log, what) {
	}
}

func processNext[K comparable](ctx context.Context, q workqueue.TypedRateLimitingInterface[K], sync func(context.Context, K) error, log *slog.Logger, what string) bool {
	key, quit := q.Get()
	if quit {
		return false
	}
	defer q.Done(key)
	if err := sync(ctx, key); err != nil {
		log.Warn("sync failed; retrying", what, key, "err", err)
		q.AddRateLimited(key)
		return true
	}
	q.Forget(key)
	return true
}
