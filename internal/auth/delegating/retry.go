package delegating

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"
)

// reviewBackoff is upstream's webhook retry backoff
// (DefaultAuthWebhookRetryBackoff): a restarting API server should cost a
// caller a short wait, not a refusal.
var reviewBackoff = wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5}

// withRetries calls review until it succeeds, fails for good, the
// backoff runs out, or ctx ends; the last error of review wins over the
// backoff's own.
func withRetries(ctx context.Context, review func() error) error {
	var last error
	err := wait.ExponentialBackoffWithContext(ctx, reviewBackoff, func(context.Context) (bool, error) {
		last = review()
		switch {
		case last == nil:
			return true, nil
		case transient(last):
			return false, nil
		}
		return false, last
	})
	if last != nil {
		return last
	}
	return err
}

// transient is upstream's DefaultShouldRetry: errors of the connection or
// of a server that asks to be called again.
func transient(err error) bool {
	if utilnet.IsConnectionReset(err) || utilnet.IsHTTP2ConnectionLost(err) ||
		apierrors.IsInternalError(err) || apierrors.IsTimeout(err) || apierrors.IsTooManyRequests(err) {
		return true
	}
	_, retry := apierrors.SuggestsClientDelay(err)
	return retry
}
