package csrsigning

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"slices"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func key(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func request(t *testing.T, k crypto.Signer, tmpl *x509.CertificateRequest) []byte {
	t.Helper()
	der, err := x509.CreateCertificateRequest(rand.Reader, tmpl, k)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

func csr(t *testing.T, signer string, subject pkix.Name, ips []net.IP, usages []certificatesv1.KeyUsage, conditions ...certificatesv1.RequestConditionType) *certificatesv1.CertificateSigningRequest {
	c := &certificatesv1.CertificateSigningRequest{Spec: certificatesv1.CertificateSigningRequestSpec{
		Request:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: request(t, key(t), &x509.CertificateRequest{Subject: subject, IPAddresses: ips})}),
		SignerName: signer, Usages: usages,
	}}
	for _, ct := range conditions {
		c.Status.Conditions = append(c.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{Type: ct, Status: corev1.ConditionTrue})
	}
	return c
}

var (
	clientUsages  = []certificatesv1.KeyUsage{"digital signature", "key encipherment", "client auth"}
	servingUsages = []certificatesv1.KeyUsage{"digital signature", "server auth"}
	node          = pkix.Name{CommonName: "system:node:n1", Organization: []string{"system:nodes"}}
	nodeIP        = []net.IP{net.ParseIP("10.0.0.1")}
)

func TestDecide(t *testing.T) {
	for _, tc := range []struct {
		name    string
		csr     *certificatesv1.CertificateSigningRequest
		want    Action
		message string
	}{
		{"pending", csr(t, certificatesv1.KubeAPIServerClientSignerName, pkix.Name{CommonName: "alice"}, nil, clientUsages), Ignore, ""},
		{"denied", csr(t, certificatesv1.KubeAPIServerClientSignerName, pkix.Name{CommonName: "alice"}, nil, clientUsages, "Denied"), Ignore, ""},
		{"approved client", csr(t, certificatesv1.KubeAPIServerClientSignerName, pkix.Name{CommonName: "alice", Organization: []string{"dev"}}, nil, clientUsages, "Approved"), Sign, ""},
		{"already failed", csr(t, certificatesv1.KubeAPIServerClientSignerName, pkix.Name{CommonName: "alice"}, nil, clientUsages, "Approved", "Failed"), Ignore, ""},
		{"client with server usage", csr(t, certificatesv1.KubeAPIServerClientSignerName, pkix.Name{CommonName: "alice"}, nil, servingUsages, "Approved"), Fail,
			"invalid usage for client certificate: server auth"},
		{"client without client auth", csr(t, certificatesv1.KubeAPIServerClientSignerName, pkix.Name{CommonName: "alice"}, nil, []certificatesv1.KeyUsage{"digital signature"}, "Approved"), Fail,
			"missing required usage for client certificate: client auth"},
		{"custom signer", csr(t, "example.com/mine", pkix.Name{CommonName: "alice"}, nil, clientUsages, "Approved"), Ignore, ""},
		{"kubelet client", csr(t, certificatesv1.KubeAPIServerClientKubeletSignerName, node, nil, clientUsages, "Approved"), Sign, ""},
		{"kubelet client not a node", csr(t, certificatesv1.KubeAPIServerClientKubeletSignerName, pkix.Name{CommonName: "alice", Organization: []string{"system:nodes"}}, nil, clientUsages, "Approved"), Fail,
			"subject common name does not begin with system:node:"},
		{"kubelet client with an IP", csr(t, certificatesv1.KubeAPIServerClientKubeletSignerName, node, nodeIP, clientUsages, "Approved"), Fail,
			"IP subjectAltNames are not allowed"},
		{"kubelet serving", csr(t, certificatesv1.KubeletServingSignerName, node, nodeIP, servingUsages, "Approved"), Sign, ""},
		{"kubelet serving without names", csr(t, certificatesv1.KubeletServingSignerName, node, nil, servingUsages, "Approved"), Fail,
			"DNS or IP subjectAltName is required"},
		{"kubelet serving with client usages", csr(t, certificatesv1.KubeletServingSignerName, node, nodeIP, clientUsages, "Approved"), Fail,
			"usages did not match [digital signature key encipherment server auth]"},
		{"legacy", csr(t, "kubernetes.io/legacy-unknown", pkix.Name{CommonName: "x"}, nil, servingUsages, "Approved"), Sign, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Decide(tc.csr)
			if err != nil {
				t.Fatal(err)
			}
			if d.Action != tc.want || d.Message != tc.message {
				t.Errorf("got %v %q, want %v %q", d.Action, d.Message, tc.want, tc.message)
			}
		})
	}
}

func TestDuration(t *testing.T) {
	for _, tc := range []struct {
		seconds *int32
		want    time.Duration
	}{
		{nil, DefaultDuration},
		{ptr.To[int32](3600), time.Hour},
		{ptr.To[int32](600), 10 * time.Minute},
		{ptr.To[int32](60), 10 * time.Minute},
		{ptr.To[int32](1 << 30), DefaultDuration},
	} {
		if got := Duration(tc.seconds, DefaultDuration); got != tc.want {
			t.Errorf("%v: %v, want %v", tc.seconds, got, tc.want)
		}
	}
}

func testCA(t *testing.T, notAfter time.Time) *Authority {
	k := key(t)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: notAfter, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, k.Public(), k)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &Authority{Certificate: cert, Key: k}
}

func TestSign(t *testing.T) {
	now := time.Now().Truncate(time.Second)
	ca := testCA(t, now.Add(10*365*24*time.Hour))
	req := request(t, key(t), &x509.CertificateRequest{Subject: pkix.Name{CommonName: "alice", Organization: []string{"dev"}}, DNSNames: []string{"a.example"}})
	for _, tc := range []struct {
		ttl      time.Duration
		lifetime time.Duration
	}{
		// Short certificates keep their length after the backdating;
		// long ones give it back.
		{time.Hour, time.Hour + backdate},
		{DefaultDuration, DefaultDuration},
	} {
		der, err := ca.Sign(req, []certificatesv1.KeyUsage{"digital signature", "client auth", "key encipherment", "client auth"}, tc.ttl, now)
		if err != nil {
			t.Fatal(err)
		}
		cert, err := x509.ParseCertificate(der)
		if err != nil {
			t.Fatal(err)
		}
		if err := cert.CheckSignatureFrom(ca.Certificate); err != nil {
			t.Error(err)
		}
		if got := cert.NotAfter.Sub(cert.NotBefore); got != tc.lifetime {
			t.Errorf("ttl %v: lifetime %v, want %v", tc.ttl, got, tc.lifetime)
		}
		if cert.Subject.CommonName != "alice" || !slices.Equal(cert.Subject.Organization, []string{"dev"}) || !slices.Equal(cert.DNSNames, []string{"a.example"}) {
			t.Errorf("subject or names not kept: %v %v", cert.Subject, cert.DNSNames)
		}
		if cert.IsCA || cert.KeyUsage != x509.KeyUsageDigitalSignature|x509.KeyUsageKeyEncipherment || !slices.Equal(cert.ExtKeyUsage, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}) {
			t.Errorf("usages: ca=%v %v %v", cert.IsCA, cert.KeyUsage, cert.ExtKeyUsage)
		}
	}
	// Never beyond the signer's own expiry.
	short := testCA(t, now.Add(time.Hour))
	der, err := short.Sign(req, []certificatesv1.KeyUsage{"client auth"}, DefaultDuration, now)
	if err != nil {
		t.Fatal(err)
	}
	if cert, _ := x509.ParseCertificate(der); !cert.NotAfter.Equal(short.Certificate.NotAfter) {
		t.Errorf("NotAfter %v beyond the CA's %v", cert.NotAfter, short.Certificate.NotAfter)
	}
	if _, err := ca.Sign(req, []certificatesv1.KeyUsage{"flying"}, time.Hour, now); err == nil || err.Error() != `unrecognized usage values: ["flying"]` {
		t.Errorf("unknown usage: %v", err)
	}
}
