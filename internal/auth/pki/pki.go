// Package pki creates and keeps the cluster's certificates: a CA, the API
// server's serving certificate and client certificates, stored as PEM files
// in a directory and reused on restart.
package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Pair is a certificate and its private key.
type Pair struct {
	Cert *x509.Certificate
	Key  crypto.Signer
	// CertPEM and KeyPEM are the files' contents.
	CertPEM, KeyPEM []byte
}

const (
	caValidity   = 10 * 365 * 24 * time.Hour
	leafValidity = 365 * 24 * time.Hour
	// renewBefore reissues a leaf certificate that expires within it.
	renewBefore = 90 * 24 * time.Hour
)

// LoadOrCreateCA returns the CA kept as NAME.crt and NAME.key in dir,
// creating it on first use.
func LoadOrCreateCA(dir, name, commonName string) (*Pair, error) {
	if p, err := load(dir, name); err == nil {
		return p, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate CA key: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: commonName},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(caValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("create CA certificate: %w", err)
	}
	return save(dir, name, der, key)
}

// LeafSpec describes a certificate signed by the CA.
type LeafSpec struct {
	CommonName    string
	Organizations []string
	DNSNames      []string
	IPs           []net.IP
	Server        bool // serving certificate (else client)
	// Peer makes a certificate for both ends of a connection (etcd
	// peers dial each other and serve each other).
	Peer bool
}

// LoadOrIssue returns the certificate kept as NAME.crt/NAME.key in dir if it
// was signed by ca, matches spec and is not about to expire; otherwise it
// issues a new one. A serving certificate is thus reissued when the
// server's addresses change.
func LoadOrIssue(dir, name string, ca *Pair, spec LeafSpec) (*Pair, error) {
	if p, err := load(dir, name); err == nil && matches(p.Cert, ca, spec) {
		return p, nil
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate key for %s: %w", name, err)
	}
	now := time.Now()
	usages := []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	switch {
	case spec.Peer:
		usages = append(usages, x509.ExtKeyUsageServerAuth)
	case spec.Server:
		usages = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: spec.CommonName, Organization: spec.Organizations},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(leafValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  usages,
		DNSNames:     spec.DNSNames,
		IPAddresses:  spec.IPs,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, key.Public(), ca.Key)
	if err != nil {
		return nil, fmt.Errorf("issue %s: %w", name, err)
	}
	return save(dir, name, der, key)
}

func matches(c *x509.Certificate, ca *Pair, spec LeafSpec) bool {
	if c.CheckSignatureFrom(ca.Cert) != nil || time.Until(c.NotAfter) < renewBefore {
		return false
	}
	if c.Subject.CommonName != spec.CommonName || !slices.Equal(c.Subject.Organization, spec.Organizations) {
		return false
	}
	if spec.Peer && !(slices.Contains(c.ExtKeyUsage, x509.ExtKeyUsageClientAuth) && slices.Contains(c.ExtKeyUsage, x509.ExtKeyUsageServerAuth)) {
		return false
	}
	for _, d := range spec.DNSNames {
		if !slices.Contains(c.DNSNames, d) {
			return false
		}
	}
	for _, ip := range spec.IPs {
		if !slices.ContainsFunc(c.IPAddresses, ip.Equal) {
			return false
		}
	}
	return true
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err))
	}
	return n
}

func save(dir, name string, der []byte, key *ecdsa.PrivateKey) (*Pair, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("encode key %s: %w", name, err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	// Key first: a crash between the two writes leaves a key without its
	// certificate, which is reissued, never a certificate without its key.
	if err := writeAtomic(filepath.Join(dir, name+".key"), keyPEM, 0o600); err != nil {
		return nil, err
	}
	if err := writeAtomic(filepath.Join(dir, name+".crt"), certPEM, 0o644); err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &Pair{Cert: cert, Key: key, CertPEM: certPEM, KeyPEM: keyPEM}, nil
}

func load(dir, name string) (*Pair, error) {
	certPEM, err := os.ReadFile(filepath.Join(dir, name+".crt"))
	if err != nil {
		return nil, err
	}
	keyPEM, err := os.ReadFile(filepath.Join(dir, name+".key"))
	if err != nil {
		return nil, err
	}
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, fmt.Errorf("%s: not PEM", name)
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, fmt.Errorf("parse %s.crt: %w", name, err)
	}
	key, err := x509.ParseECPrivateKey(kb.Bytes)
	if err != nil {
		return nil, fmt.Errorf("parse %s.key: %w", name, err)
	}
	return &Pair{Cert: cert, Key: key, CertPEM: certPEM, KeyPEM: keyPEM}, nil
}

// writeAtomic replaces path with data so that readers never see half a
// file.
func writeAtomic(path string, data []byte, mode os.FileMode) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, mode); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// WriteFile atomically writes a file the cluster hands out (a kubeconfig).
func WriteFile(path string, data []byte, mode os.FileMode) error {
	return writeAtomic(path, data, mode)
}
