package server

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/orca-project/orca/internal/apiserver"
	"github.com/orca-project/orca/internal/auth/pki"
)

// serviceAccountKeyFile is the service-account signing key in the TLS
// directory. It is kept across restarts: a new key would invalidate every
// token pods hold.
const serviceAccountKeyFile = "service-account.key"

// serviceAccountTokens loads (or creates once) the signing key and
// configures token issuing and authentication with it.
func serviceAccountTokens(tlsDir, issuer string) (*apiserver.ServiceAccountTokens, error) {
	key, err := loadOrCreateSigningKey(filepath.Join(tlsDir, serviceAccountKeyFile))
	if err != nil {
		return nil, err
	}
	return &apiserver.ServiceAccountTokens{Issuer: issuer, Key: key}, nil
}

func loadOrCreateSigningKey(path string) (*ecdsa.PrivateKey, error) {
	data, err := os.ReadFile(path)
	if err == nil {
		b, _ := pem.Decode(data)
		if b == nil {
			return nil, fmt.Errorf("%s: not PEM", path)
		}
		key, err := x509.ParseECPrivateKey(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", path, err)
		}
		if key.Curve != elliptic.P256() {
			return nil, fmt.Errorf("%s: service-account key must be ECDSA P-256", path)
		}
		return key, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read service-account key: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate service-account key: %w", err)
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("encode service-account key: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	if err := pki.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		return nil, err
	}
	return key, nil
}
