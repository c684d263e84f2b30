package server

import (
	"context"
	"fmt"
	"net"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"

	"github.com/orca-project/orca/internal/auth/pki"
	"github.com/orca-project/orca/internal/controllermanager"
)

// controllerManager builds the in-process controller manager. It reaches
// the API server over loopback HTTPS with a client certificate of its own
// (system:kube-controller-manager), exactly as a separate process would,
// so that every write passes authentication, admission and validation.
func controllerManager(opts Options, tlsDir string, ca *pki.Pair, port int, reg prometheus.Registerer) (*controllermanager.Manager, error) {
	cert, err := pki.LoadOrIssue(tlsDir, "controller-manager", ca, pki.LeafSpec{CommonName: "system:kube-controller-manager"})
	if err != nil {
		return nil, fmt.Errorf("controller manager certificate: %w", err)
	}
	host := opts.BindAddress
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	cfg := &rest.Config{
		Host: "https://" + net.JoinHostPort(host, strconv.Itoa(port)),
		TLSClientConfig: rest.TLSClientConfig{
			// The serving certificate always names localhost, whatever
			// address the listener is bound to.
			ServerName: "localhost",
			CAData:     ca.CertPEM, CertData: cert.CertPEM, KeyData: cert.KeyPEM,
		},
		// Loopback traffic: the garbage collector deletes a thousand
		// dependents in seconds rather than minutes.
		QPS: 500, Burst: 1000,
		UserAgent: "orca-controller-manager",
	}
	return controllermanager.New(controllermanager.Config{REST: cfg, Log: opts.Log, Metrics: reg})
}

// runControllerManager runs the manager until ctx ends.
func runControllerManager(ctx context.Context, m *controllermanager.Manager) error {
	if err := m.Run(ctx); err != nil {
		return fmt.Errorf("controller manager: %w", err)
	}
	return ctx.Err()
}
