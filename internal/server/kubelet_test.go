package server

import (
	"crypto/x509"
	"net"
	"path/filepath"
	"testing"

	"github.com/orca-project/orca/internal/auth/pki"
)

func TestKubeletCertificates(t *testing.T) {
	dir := t.TempDir()
	cert, pool, err := KubeletServingCert(dir, "node-1", []net.IP{net.ParseIP("10.0.0.5")})
	if err != nil {
		t.Fatal(err)
	}
	// The kubelet's certificate verifies for its address against the
	// pool it is handed, which is also the pool that verifies the API
	// server's client certificate.
	if _, err := cert.Leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: "10.0.0.5"}); err != nil {
		t.Errorf("serving certificate: %v", err)
	}
	again, _, err := KubeletServingCert(dir, "node-1", []net.IP{net.ParseIP("10.0.0.5")})
	if err != nil || !again.Leaf.Equal(cert.Leaf) {
		t.Errorf("a second call did not reuse the certificate (%v)", err)
	}

	ca, err := pki.LoadOrCreateCA(filepath.Join(dir, "tls"), "ca", "orca-ca")
	if err != nil {
		t.Fatal(err)
	}
	client, err := kubeletClientTLS(filepath.Join(dir, "tls"), ca)
	if err != nil {
		t.Fatal(err)
	}
	leaf := client.Certificates[0].Leaf
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("client certificate: %v", err)
	}
	// Its rights on kubelets come from the bootstrap binding alone.
	if leaf.Subject.CommonName != "kube-apiserver-kubelet-client" || len(leaf.Subject.Organization) != 0 {
		t.Errorf("client certificate subject %v", leaf.Subject)
	}
}
