package server

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/orca-project/orca/internal/auth/pki"
	"github.com/orca-project/orca/internal/flowcontrol"
)

// newFlowControl builds the API Priority and Fairness dispatcher when it
// is on: the two max-in-flight limits add up to its seats, as upstream's.
func newFlowControl(opts Options, reg prometheus.Registerer) (*flowcontrol.Dispatcher, error) {
	if !opts.EnablePriorityAndFairness {
		return nil, nil
	}
	total := opts.MaxRequestsInFlight + opts.MaxMutatingRequestsInFlight
	if total <= 0 {
		return nil, fmt.Errorf("invalid configuration: MaxRequestsInFlight=%d and MaxMutatingRequestsInFlight=%d; they must add up to something positive", opts.MaxRequestsInFlight, opts.MaxMutatingRequestsInFlight)
	}
	return flowcontrol.New(total, reg, opts.Log)
}

// startFlowControl creates upstream's bootstrap FlowSchemas and
// PriorityLevelConfigurations, as upstream's API server does whether or
// not priority and fairness is on, and keeps them every minute. With a
// dispatcher, it also runs its config controller and returns once the
// dispatcher has the configuration, so that the components started next
// are classified by it. Both act through the API as the server's own
// administrator, whom the exempt level serves.
func startFlowControl(ctx context.Context, opts Options, tlsDir string, ca *pki.Pair, port int, d *flowcontrol.Dispatcher, run func(func() error)) error {
	client, err := adminClient(opts, tlsDir, ca, port, "orca-flowcontrol", 50, 100)
	if err != nil {
		return err
	}
	if err := retryFor(ctx, 500*time.Millisecond, "API Priority and Fairness bootstrap configuration", func() error {
		return flowcontrol.Ensure(ctx, client, opts.Log)
	}); err != nil {
		return err
	}
	run(func() error {
		flowcontrol.RunEnsurer(ctx, client, opts.Log)
		return nil
	})
	if d == nil {
		return nil
	}
	run(func() error { return d.Run(ctx, client) })
	select {
	case <-d.Synced():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
