package server

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/orca-project/orca/internal/auth/pki"
)

// loopbackConfig is the client configuration of an in-process component
// (controller manager, scheduler). It reaches the API server over loopback
// HTTPS with a client certificate of its own, exactly as a separate process
// would, so that every write passes authentication, admission and
// validation.
func loopbackConfig(opts Options, tlsDir string, ca *pki.Pair, port int, certName, user string, groups []string, agent string, qps float32, burst int) (*rest.Config, error) {
	cert, err := pki.LoadOrIssue(tlsDir, certName, ca, pki.LeafSpec{CommonName: user, Organizations: groups})
	if err != nil {
		return nil, fmt.Errorf("%s certificate: %w", certName, err)
	}
	host := opts.BindAddress
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return &rest.Config{
		Host: "https://" + net.JoinHostPort(host, strconv.Itoa(port)),
		TLSClientConfig: rest.TLSClientConfig{
			// The serving certificate always names localhost, whatever
			// address the listener is bound to.
			ServerName: "localhost",
			CAData:     ca.CertPEM, CertData: cert.CertPEM, KeyData: cert.KeyPEM,
		},
		QPS: qps, Burst: burst,
		UserAgent: agent,
	}, nil
}

// adminClient is a loopback client as the server's own administrator
// (system:admin in system:masters), for the objects the server keeps in
// place at start-up; agent names it in the API server's logs.
func adminClient(opts Options, tlsDir string, ca *pki.Pair, port int, agent string, qps float32, burst int) (kubernetes.Interface, error) {
	cfg, err := loopbackConfig(opts, tlsDir, ca, port, "admin", "system:admin", []string{"system:masters"}, agent, qps, burst)
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(cfg)
}

// retryFor calls f every interval until it succeeds, ctx ends, or a
// minute has passed, then returns f's last error wrapped as what.
// Start-up steps use it: the API server may refuse for a moment what it
// takes once its caches and policies are in.
func retryFor(ctx context.Context, interval time.Duration, what string, f func() error) error {
	for deadline := time.Now().Add(time.Minute); ; {
		err := f()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: %w", what, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(interval):
		}
	}
}
