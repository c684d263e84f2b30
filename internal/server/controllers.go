package server

import (
	"context"
	"crypto"
	"crypto/x509"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/orca-project/orca/internal/auth/pki"
	"github.com/orca-project/orca/internal/controller/csrsigning"
	"github.com/orca-project/orca/internal/controller/nodeipam"
	"github.com/orca-project/orca/internal/controller/nodelifecycle"
	"github.com/orca-project/orca/internal/controller/podgc"
	"github.com/orca-project/orca/internal/controller/rootcacertpublisher"
	"github.com/orca-project/orca/internal/controllermanager"
)

// controllerManager builds the in-process controller manager, a loopback
// client of the API server as system:kube-controller-manager.
func controllerManager(opts Options, tlsDir string, ca *pki.Pair, port int, reg prometheus.Registerer) (*controllermanager.Manager, error) {
	// Loopback traffic: the garbage collector deletes a thousand
	// dependents in seconds rather than minutes.
	cfg, err := loopbackConfig(opts, tlsDir, ca, port, "controller-manager", "system:kube-controller-manager", nil, "orca-controller-manager", 500, 1000)
	if err != nil {
		return nil, err
	}
	return controllermanager.New(controllermanager.Config{
		REST: cfg, Log: opts.Log, Metrics: reg, UseServiceAccountCredentials: true,
		Controllers: append(controllermanager.DefaultControllers(), rootCAPublisher(ca.CertPEM), CSRSigning(ca.Cert, ca.Key, 0), NodeIPAM(opts.ClusterCIDR), ServiceLB(opts.LoadBalancerPool),
			NodeLifecycle(opts.NodeLifecycle), PodGC(opts.TerminatedPodGCThreshold)),
	})
}

// rootCAPublisher publishes the cluster CA as kube-root-ca.crt; it is
// registered here rather than among the defaults because it needs the CA.
func rootCAPublisher(caPEM []byte) controllermanager.Descriptor {
	return controllermanager.Descriptor{Name: "root-ca-cert-publisher", Workers: 1, New: func(c *controllermanager.Context) (controllermanager.Controller, error) {
		return rootcacertpublisher.New(c.Client, c.Informers, caPEM, c.QueueMetrics, c.Log)
	}}
}

// CSRSigning signs the approved requests of the built-in signers with the
// CA (cert and key), for at most maxDuration (upstream's default year
// when 0); it is registered here because it needs the CA's key.
func CSRSigning(cert *x509.Certificate, key crypto.Signer, maxDuration time.Duration) controllermanager.Descriptor {
	ca := &csrsigning.Authority{Certificate: cert, Key: key}
	return controllermanager.Descriptor{Name: "csrsigning", Workers: 5, New: func(c *controllermanager.Context) (controllermanager.Controller, error) {
		return csrsigning.New(c.Client, c.Informers, ca, maxDuration, c.QueueMetrics, c.Log)
	}}
}

// NodeIPAM assigns nodes their pod ranges out of clusterCIDR (the default
// when empty); it is registered here because it needs the range.
func NodeIPAM(clusterCIDR string) controllermanager.Descriptor {
	if clusterCIDR == "" {
		clusterCIDR = DefaultClusterCIDR
	}
	// Upstream's range allocator writes with 30 workers: a cluster of
	// thousands of nodes registering at once waits for its ranges
	// otherwise, one patch round trip each.
	return controllermanager.Descriptor{Name: "nodeipam", Workers: 30, New: func(c *controllermanager.Context) (controllermanager.Controller, error) {
		return nodeipam.New(c.Client, c.Informers, clusterCIDR, 24, c.QueueMetrics, c.Log)
	}}
}

// NodeLifecycle watches node heartbeats and taints silent nodes; it is
// registered here because its settings are flags.
func NodeLifecycle(cfg nodelifecycle.Config) controllermanager.Descriptor {
	return controllermanager.Descriptor{Name: "node-lifecycle", Workers: 1, New: func(c *controllermanager.Context) (controllermanager.Controller, error) {
		return nodelifecycle.New(c.Client, c.Informers, cfg, c.QueueMetrics, c.Log)
	}}
}

// DefaultTerminatedPodGCThreshold is upstream's --terminated-pod-gc-threshold.
const DefaultTerminatedPodGCThreshold = 12500

// PodGC removes orphaned, unscheduled terminating and surplus finished
// pods, keeping threshold finished ones (the default when 0, all when
// negative).
func PodGC(threshold int) controllermanager.Descriptor {
	if threshold == 0 {
		threshold = DefaultTerminatedPodGCThreshold
	}
	if threshold < 0 {
		threshold = 0
	}
	return controllermanager.Descriptor{Name: "pod-garbage-collector", Workers: 1, New: func(c *controllermanager.Context) (controllermanager.Controller, error) {
		return podgc.New(c.Client, c.Informers, threshold, c.QueueMetrics, c.Log)
	}}
}

// runControllerManager runs the manager until ctx ends.
func runControllerManager(ctx context.Context, m *controllermanager.Manager) error {
	if err := m.Run(ctx); err != nil {
		return fmt.Errorf("controller manager: %w", err)
	}
	return ctx.Err()
}
