package server

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"path/filepath"

	"github.com/orca-project/orca/internal/auth/bootstrappolicy"
	"github.com/orca-project/orca/internal/auth/pki"
)

// kubeletClientTLS issues the API server's client certificate for the
// kubelets' servers (logs, exec, attach, port-forward), named as upstream's
// kubeadm names it. Kubelets authorize it through the bootstrap binding of
// system:kubelet-api-admin; it has no group, so that the same certificate
// presented to the API server is no admin there (a certificate issued with
// system:masters before is replaced at start, as its subject differs).
// Kubelet serving certificates are not verified, as upstream's API server
// does by default.
func kubeletClientTLS(tlsDir string, ca *pki.Pair) (*tls.Config, error) {
	p, err := pki.LoadOrIssue(tlsDir, "apiserver-kubelet-client", ca, pki.LeafSpec{
		CommonName: bootstrappolicy.KubeletAPIClient,
	})
	if err != nil {
		return nil, fmt.Errorf("kubelet client certificate: %w", err)
	}
	return &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{p.Cert.Raw}, PrivateKey: p.Key, Leaf: p.Cert}},
		MinVersion:   tls.VersionTLS12,
	}, nil
}

// KubeletServingCert issues (or reuses) the serving certificate of the
// kubelet on nodeName, signed by the cluster CA in dataDir, for the given
// addresses, and returns it with a pool of that CA to verify the API
// server's client certificate against.
func KubeletServingCert(dataDir, nodeName string, ips []net.IP) (tls.Certificate, *x509.CertPool, error) {
	tlsDir := filepath.Join(dataDir, "tls")
	ca, err := pki.LoadOrCreateCA(tlsDir, "ca", "orca-ca")
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	leaf, err := pki.LoadOrIssue(tlsDir, "kubelet-"+nodeName, ca, pki.LeafSpec{
		CommonName: nodeName, DNSNames: []string{nodeName, "localhost"}, IPs: ips, Server: true,
	})
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("kubelet serving certificate: %w", err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	return tls.Certificate{Certificate: [][]byte{leaf.Cert.Raw}, PrivateKey: leaf.Key, Leaf: leaf.Cert}, pool, nil
}
