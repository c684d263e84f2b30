package route

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TLSCert is a certificate from a TLS Secret, parsed once by Build.
type TLSCert struct {
	Secret types.NamespacedName
	// CertPEM and KeyPEM are the Secret's tls.crt and tls.key.
	CertPEM, KeyPEM []byte
	// Certificate is the parsed pair, ready for tls.Config.
	Certificate *tls.Certificate
}

// Certificate is the certificate to answer a TLS server name with: the
// TLS host's, exact then wildcard, as for rule hosts, else the default
// certificate of an entry without hosts. serverName is without a port, as
// in a ClientHello; "" (no SNI) gets the default certificate.
func (t *Table) Certificate(serverName string) (*TLSCert, bool) {
	if c, ok := lookupHost(t.certs, normalizeHost(serverName)); ok {
		return c, true
	}
	c, ok := t.certs[""]
	return c, ok
}

// HasTLS reports whether requests for host can be served over TLS, for
// a proxy that redirects plain HTTP to HTTPS. A default certificate
// serves every host, as the specification reads a TLS entry without hosts.
func (t *Table) HasTLS(host string) bool {
	_, ok := t.Certificate(host)
	return ok
}

// addTLS adds the certificates of a main Ingress's TLS entries.
func (b *builder) addTLS(ing *networkingv1.Ingress) {
	for _, entry := range ing.Spec.TLS {
		cert, ok := b.cert(ing, entry.SecretName)
		if !ok {
			continue
		}
		if len(entry.Hosts) == 0 {
			b.claimCert(ing, "", cert)
		}
		for _, h := range entry.Hosts {
			b.claimCert(ing, strings.ToLower(h), cert)
		}
	}
}

// claimCert serves cert for host ("" for the default certificate) unless
// an older Ingress serves another there. A certificate that does not
// cover its host is reported but served: there is none better to offer,
// and the client's own check makes the mistake visible.
func (b *builder) claimCert(ing *networkingv1.Ingress, host string, cert *TLSCert) {
	where := "default certificate"
	if host != "" {
		where = fmt.Sprintf("TLS host %q", host)
	}
	if old, ok := b.t.certs[host]; ok {
		if old != cert {
			b.problem(ing, "%s: already served from secret %s; secret %s ignored", where, old.Secret, cert.Secret)
		}
		return
	}
	if leaf := cert.Certificate.Leaf; host != "" && leaf != nil && leaf.VerifyHostname(host) != nil {
		b.problem(ing, "%s: the certificate of secret %s does not cover it", where, cert.Secret)
	}
	b.t.certs[host] = cert
}

// loadedCert is a TLS Secret parsed, or why it cannot be used.
type loadedCert struct {
	cert *TLSCert
	err  error
}

// cert is the certificate of the Ingress's TLS Secret named name.
func (b *builder) cert(ing *networkingv1.Ingress, name string) (*TLSCert, bool) {
	if name == "" {
		b.problem(ing, "TLS entry without secretName: Orca has no default certificate to use; ignored")
		return nil, false
	}
	key := types.NamespacedName{Namespace: ing.Namespace, Name: name}
	l, done := b.loaded[key]
	if !done {
		l.cert, l.err = loadCert(b.in.Secrets[key], key)
		b.loaded[key] = l
	}
	if l.err != nil {
		b.problem(ing, "%v; ignored", l.err)
		return nil, false
	}
	return l.cert, true
}

// loadCert parses a TLS Secret, which must have the TLS type, so that
// its keys are the ones the API server has checked are there.
func loadCert(s *corev1.Secret, key types.NamespacedName) (*TLSCert, error) {
	if s == nil {
		return nil, fmt.Errorf("TLS secret %s not found", key)
	}
	if s.Type != corev1.SecretTypeTLS {
		return nil, fmt.Errorf("TLS secret %s has type %q, not %q", key, s.Type, corev1.SecretTypeTLS)
	}
	crt, k := s.Data[corev1.TLSCertKey], s.Data[corev1.TLSPrivateKeyKey]
	pair, err := tls.X509KeyPair(crt, k)
	if err != nil {
		return nil, fmt.Errorf("TLS secret %s: %v", key, err)
	}
	// Copies, so that the table shares nothing with the informer's cache.
	return &TLSCert{Secret: key, CertPEM: bytes.Clone(crt), KeyPEM: bytes.Clone(k), Certificate: &pair}, nil
}

// LoadCert parses the TLS Secret s (nil when missing) named key, for a
// caller other than Build (the Gateway API's listeners).
func LoadCert(s *corev1.Secret, key types.NamespacedName) (*TLSCert, error) { return loadCert(s, key) }
