package server

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/orca-project/orca/internal/auth/pki"
	"github.com/orca-project/orca/internal/scheduler"
)

// newScheduler builds the in-process scheduler. Like the controller
// manager it reaches the API server over loopback HTTPS with a client
// certificate of its own (system:kube-scheduler), as a separate process
// would.
func newScheduler(opts Options, tlsDir string, ca *pki.Pair, port int, reg prometheus.Registerer) (*scheduler.Scheduler, error) {
	cert, err := pki.LoadOrIssue(tlsDir, "scheduler", ca, pki.LeafSpec{CommonName: "system:kube-scheduler"})
	if err != nil {
		return nil, fmt.Errorf("scheduler certificate: %w", err)
	}
	host := opts.BindAddress
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	cfg := &rest.Config{
		Host: "https://" + net.JoinHostPort(host, strconv.Itoa(port)),
		TLSClientConfig: rest.TLSClientConfig{
			ServerName: "localhost",
			CAData:     ca.CertPEM, CertData: cert.CertPEM, KeyData: cert.KeyPEM,
		},
		// Binding a burst of pods is a burst of requests; a client-side
		// limit would be the scheduler's bottleneck on loopback.
		QPS: 5000, Burst: 5000,
		UserAgent: "orca-scheduler",
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("scheduler client: %w", err)
	}
	// A stable identity lets a restarted server take its own Lease back at
	// once instead of waiting for it to expire.
	host, _ = os.Hostname()
	return scheduler.New(scheduler.Config{
		Client:         client,
		Log:            opts.Log,
		Metrics:        reg,
		LeaderElection: true,
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
