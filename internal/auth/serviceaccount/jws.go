package serviceaccount

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"
)

// The compact JWS form (RFC 7515) with ES256 is all a service-account
// token needs; keeping it here avoids a JOSE library for two functions.

var b64 = base64.RawURLEncoding

type header struct {
	Alg string `json:"alg"`
	Kid string `json:"kid,omitempty"`
	Typ string `json:"typ,omitempty"`
}

// KeyID is upstream's key id: the unpadded base64url SHA-256 of the
// public key's PKIX DER, so that verifiers can pick the key.
func KeyID(pub crypto.PublicKey) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", fmt.Errorf("encode public key: %w", err)
	}
	sum := sha256.Sum256(der)
	return b64.EncodeToString(sum[:]), nil
}

func sign(key *ecdsa.PrivateKey, kid string, payload []byte) (string, error) {
	if key.Curve != elliptic.P256() {
		return "", errors.New("service-account signing key must be ECDSA P-256")
	}
	h, err := json.Marshal(header{Alg: "ES256", Kid: kid})
	if err != nil {
		return "", err
	}
	signingInput := b64.EncodeToString(h) + "." + b64.EncodeToString(payload)
	digest := sha256.Sum256([]byte(signingInput))
	r, s, err := ecdsa.Sign(rand.Reader, key, digest[:])
	if err != nil {
		return "", fmt.Errorf("sign token: %w", err)
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return signingInput + "." + b64.EncodeToString(sig), nil
}

var (
	errMalformed = errors.New("token is not a compact JWS")
	errSignature = errors.New("token signature is invalid")
)

// parse splits a compact JWS and returns its header and payload without
// checking the signature.
func parse(token string) (header, []byte, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return header{}, nil, errMalformed
	}
	hb, err := b64.DecodeString(parts[0])
	if err != nil {
		return header{}, nil, errMalformed
	}
	var h header
	if err := json.Unmarshal(hb, &h); err != nil {
		return header{}, nil, errMalformed
	}
	payload, err := b64.DecodeString(parts[1])
	if err != nil {
		return header{}, nil, errMalformed
	}
	return h, payload, nil
}

// verify checks the ES256 signature against any of keys. The algorithm
// is fixed rather than read from the header, so a token cannot pick a
// weaker one ("none").
func verify(token string, h header, keys []*ecdsa.PublicKey) error {
	if h.Alg != "ES256" {
		return fmt.Errorf("token algorithm %q is not ES256", h.Alg)
	}
	i := strings.LastIndexByte(token, '.')
	sig, err := b64.DecodeString(token[i+1:])
	if err != nil || len(sig) != 64 {
		return errSignature
	}
	digest := sha256.Sum256([]byte(token[:i]))
	r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
	for _, k := range keys {
		if ecdsa.Verify(k, digest[:], r, s) {
			return nil
		}
	}
	return errSignature
}
