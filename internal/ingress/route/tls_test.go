package route

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// tlsSecret is a TLS Secret named by key holding a fresh self-signed
// ECDSA certificate for dnsNames.
func tlsSecret(t *testing.T, key string, dnsNames ...string) *corev1.Secret {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: key},
		DNSNames:     dnsNames,
		NotBefore:    epoch, NotAfter: epoch.Add(365 * 24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	k := nn(key)
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: k.Namespace, Name: k.Name},
		Type:       corev1.SecretTypeTLS,
		Data: map[string][]byte{
			corev1.TLSCertKey:       pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
			corev1.TLSPrivateKeyKey: pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
		},
	}
}

func withTLS(key string, age int, tls ...networkingv1.IngressTLS) *networkingv1.Ingress {
	return ingress(key, age, networkingv1.IngressSpec{TLS: tls})
}

func tlsEntry(secret string, hosts ...string) networkingv1.IngressTLS {
	return networkingv1.IngressTLS{SecretName: secret, Hosts: hosts}
}

// TestCertificate: TLS hosts match as rule hosts do, exact over wildcard
// over the default certificate of an entry without hosts; secrets that
// cannot be used are reported and left out.
func TestCertificate(t *testing.T) {
	secrets := []*corev1.Secret{
		tlsSecret(t, "ns/shop", "shop.example.com"),
		tlsSecret(t, "ns/wild", "*.example.com"),
		tlsSecret(t, "ns/fallback", "fallback.test"),
		tlsSecret(t, "ns/other", "shop.example.com"),
		tlsSecret(t, "ns/wrong-host", "elsewhere.test"),
		tlsSecret(t, "team/fallback", "fallback.test"),
	}
	opaque := tlsSecret(t, "ns/opaque", "opaque.example.com")
	opaque.Type = corev1.SecretTypeOpaque
	garbage := tlsSecret(t, "ns/garbage", "garbage.example.com")
	garbage.Data[corev1.TLSPrivateKeyKey] = tlsSecret(t, "x/y").Data[corev1.TLSPrivateKeyKey] // not the certificate's key
	secrets = append(secrets, opaque, garbage)

	in := input(
		withTLS("ns/main", 1,
			tlsEntry("shop", "shop.example.com"),
			tlsEntry("wild", "*.example.com", "Shop.Example.com"), // same host, same secret: no conflict
			tlsEntry("fallback"),
			tlsEntry("opaque", "opaque.example.com"),
			tlsEntry("garbage", "garbage.example.com"),
			tlsEntry("missing", "missing.example.com"),
			tlsEntry("", "no-secret.example.com"),
			tlsEntry("wrong-host", "wrong.test"),
		),
		withTLS("ns/younger", 2, tlsEntry("other", "shop.example.com"), tlsEntry("shop", "shop.example.com")),
		withTLS("team/younger", 3, tlsEntry("fallback")),
	)
	in.Secrets = map[types.NamespacedName]*corev1.Secret{}
	for _, s := range secrets {
		in.Secrets[types.NamespacedName{Namespace: s.Namespace, Name: s.Name}] = s
	}
	tb, ps := Build(in)
	checkProblems(t, ps,
		`ns/main: TLS host "shop.example.com": already served from secret ns/shop; secret ns/wild ignored`,
		`ns/main: TLS secret ns/opaque has type "Opaque", not "kubernetes.io/tls"; ignored`,
		`ns/main: TLS secret ns/garbage: tls: private key does not match public key; ignored`,
		`ns/main: TLS secret ns/missing not found; ignored`,
		`ns/main: TLS entry without secretName: Orca has no default certificate to use; ignored`,
		`ns/main: TLS host "wrong.test": the certificate of secret ns/wrong-host does not cover it`,
		`ns/younger: TLS host "shop.example.com": already served from secret ns/shop; secret ns/other ignored`,
		`team/younger: default certificate: already served from secret ns/fallback; secret team/fallback ignored`,
	)

	for _, tc := range []struct{ serverName, want string }{
		{"shop.example.com", "ns/shop"},
		{"SHOP.example.com.", "ns/shop"},
		{"blog.example.com", "ns/wild"},
		// A wildcard covers one label; the rest get the default.
		{"a.blog.example.com", "ns/fallback"},
		{"example.com", "ns/fallback"},
		{"opaque.example.com", "ns/wild"},
		{"garbage.example.com", "ns/wild"},
		{"wrong.test", "ns/wrong-host"},
		{"anything.test", "ns/fallback"},
		{"", "ns/fallback"}, // no SNI
	} {
		c, ok := tb.Certificate(tc.serverName)
		if !ok || c.Secret.String() != tc.want {
			t.Errorf("Certificate(%q) = %v, want %s", tc.serverName, c, tc.want)
			continue
		}
		s := in.Secrets[c.Secret]
		if !bytes.Equal(c.CertPEM, s.Data[corev1.TLSCertKey]) || !bytes.Equal(c.KeyPEM, s.Data[corev1.TLSPrivateKeyKey]) ||
			c.Certificate == nil || c.Certificate.Leaf == nil {
			t.Errorf("Certificate(%q): certificate not as in its secret", tc.serverName)
		}
		if !tb.HasTLS(tc.serverName) {
			t.Errorf("HasTLS(%q) = false", tc.serverName)
		}
	}
}

// TestCertificateWithoutDefault: with no entry without hosts, a name no
// entry lists has no certificate and no TLS.
func TestCertificateWithoutDefault(t *testing.T) {
	in := input(withTLS("ns/main", 1, tlsEntry("wild", "*.example.com")))
	in.Secrets = map[types.NamespacedName]*corev1.Secret{nn("ns/wild"): tlsSecret(t, "ns/wild", "*.example.com")}
	tb, ps := Build(in)
	checkProblems(t, ps)
	for _, tc := range []struct {
		name string
		want bool
	}{
		{"a.example.com", true},
		{"*.example.com", false},
		{"example.com", false},
		{"a.b.example.com", false},
		{"", false},
	} {
		if got := tb.HasTLS(tc.name); got != tc.want {
			t.Errorf("HasTLS(%q) = %v, want %v", tc.name, got, tc.want)
		}
		if _, ok := tb.Certificate(tc.name); ok != tc.want {
			t.Errorf("Certificate(%q) found = %v, want %v", tc.name, ok, tc.want)
		}
	}
}
