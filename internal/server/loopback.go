package server

import (
	"fmt"
	"net"
	"strconv"

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
