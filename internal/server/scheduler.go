package server

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/kubernetes"

	"github.com/orca-project/orca/internal/auth/pki"
	"github.com/orca-project/orca/internal/scheduler"
)

// newScheduler builds the in-process scheduler, a loopback client of the
// API server as system:kube-scheduler.
func newScheduler(opts Options, tlsDir string, ca *pki.Pair, port int, reg prometheus.Registerer) (*scheduler.Scheduler, error) {
	// Binding a burst of pods is a burst of requests; a client-side
	// limit would be the scheduler's bottleneck on loopback.
	cfg, err := loopbackConfig(opts, tlsDir, ca, port, "scheduler", "system:kube-scheduler", nil, "orca-scheduler", 5000, 5000)
	if err != nil {
		return nil, err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("scheduler client: %w", err)
	}
	// A stable identity lets a restarted server take its own Lease back at
	// once instead of waiting for it to expire.
	host, _ := os.Hostname()
	return scheduler.New(scheduler.Config{
		Client:         client,
		Log:            opts.Log,
		Metrics:        reg,
		Configuration:  opts.SchedulerConfig,
		LeaderElection: true,
		Explanations:   opts.SchedulerExplanations,
		Identity:       fmt.Sprintf("%s_%s", host, net.JoinHostPort(opts.AdvertiseAddress, strconv.Itoa(port))),
	})
}

// runScheduler runs the scheduler until ctx ends.
func runScheduler(ctx context.Context, s *scheduler.Scheduler) error {
	if err := s.Run(ctx); err != nil {
		return fmt.Errorf("scheduler: %w", err)
	}
	return ctx.Err()
}

// schedulerExplanations reaches the in-process scheduler's explanations
// for the API server's pods/explanation, once the scheduler exists (it is
// built after the API server).
type schedulerExplanations struct {
	s atomic.Pointer[scheduler.Scheduler]
}

func (e *schedulerExplanations) get(namespace, name, uid string) ([]byte, bool) {
	s := e.s.Load()
	if s == nil {
		return nil, false
	}
	return s.ExplanationJSON(namespace, name, uid)
}
