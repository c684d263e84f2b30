package pki

import (
	"net"
	"testing"
)

func TestCertificatesAreReusedAndReissuedOnChange(t *testing.T) {
	dir := t.TempDir()
	ca, err := LoadOrCreateCA(dir, "ca", "orca-ca")
	if err != nil {
		t.Fatal(err)
	}
	ca2, err := LoadOrCreateCA(dir, "ca", "orca-ca")
	if err != nil {
		t.Fatal(err)
	}
	if !ca.Cert.Equal(ca2.Cert) {
		t.Fatal("CA was recreated instead of reused")
	}
	spec := LeafSpec{CommonName: "orca-apiserver", DNSNames: []string{"localhost"}, IPs: []net.IP{net.ParseIP("127.0.0.1")}, Server: true}
	a, err := LoadOrIssue(dir, "serving", ca, spec)
	if err != nil {
		t.Fatal(err)
	}
	b, err := LoadOrIssue(dir, "serving", ca, spec)
	if err != nil {
		t.Fatal(err)
	}
	if !a.Cert.Equal(b.Cert) {
		t.Fatal("serving certificate was reissued although nothing changed")
	}
	spec.IPs = append(spec.IPs, net.ParseIP("10.0.0.5"))
	c, err := LoadOrIssue(dir, "serving", ca, spec)
	if err != nil {
		t.Fatal(err)
	}
	if a.Cert.Equal(c.Cert) {
		t.Fatal("serving certificate was not reissued for a new address")
	}
	if err := c.Cert.CheckSignatureFrom(ca.Cert); err != nil {
		t.Fatalf("not signed by the CA: %v", err)
	}
}
