package apiserver

import (
	"crypto/ecdsa"
	"encoding/base64"
	"encoding/json"
	"net"
	"net/http"
	"strconv"

	"github.com/orca-project/orca/internal/auth/serviceaccount"
)

// Service-account issuer discovery, as upstream serves it: an OpenID
// Connect provider configuration and the keys that verify the tokens,
// so that a workload identity federation or any OIDC consumer can check
// Orca's service-account tokens without talking to Orca otherwise. The
// system:service-account-issuer-discovery role grants the two paths.
const (
	oidcConfigPath = "/.well-known/openid-configuration"
	oidcJWKSPath   = "/openid/v1/jwks"
)

type oidcConfig struct {
	Issuer        string   `json:"issuer"`
	JWKSURI       string   `json:"jwks_uri"`
	ResponseTypes []string `json:"response_types_supported"`
	SubjectTypes  []string `json:"subject_types_supported"`
	SigningAlgs   []string `json:"id_token_signing_alg_values_supported"`
}

type jwk struct {
	Use string `json:"use"`
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Crv string `json:"crv"`
	Alg string `json:"alg"`
	X   string `json:"x"`
	Y   string `json:"y"`
}

// serveOIDC answers the two discovery paths; false for any other path.
func (s *Server) serveOIDC(w http.ResponseWriter, r *http.Request) bool {
	if r.URL.Path != oidcConfigPath && r.URL.Path != oidcJWKSPath {
		return false
	}
	if s.tokens == nil {
		s.writeError(w, r, errNotFoundPath())
		return true
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		w.WriteHeader(http.StatusMethodNotAllowed)
		return true
	}
	var body any
	if r.URL.Path == oidcConfigPath {
		jwksURI := s.cfg.ServiceAccountTokens.JWKSURI
		if jwksURI == "" {
			// Upstream names its external address: the advertised one.
			host := r.Host
			if ks := s.cfg.KubernetesService; ks != nil {
				host = net.JoinHostPort(ks.AdvertiseIP, strconv.Itoa(int(ks.Port)))
			}
			jwksURI = "https://" + host + oidcJWKSPath
		}
		body = oidcConfig{
			Issuer: s.tokens.issuer, JWKSURI: jwksURI,
			ResponseTypes: []string{"id_token"}, SubjectTypes: []string{"public"}, SigningAlgs: []string{"ES256"},
		}
	} else {
		keys := []jwk{}
		for _, k := range s.tokens.validator.Keys {
			if j, err := ecJWK(k); err == nil {
				keys = append(keys, j)
			}
		}
		body = map[string][]jwk{"keys": keys}
	}
	b, err := json.Marshal(body)
	if err != nil {
		s.writeError(w, r, err)
		return true
	}
	// Upstream lets OIDC consumers cache both for an hour.
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=3600")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
	return true
}

// ecJWK is a P-256 public key as a JSON Web Key with upstream's key id.
func ecJWK(k *ecdsa.PublicKey) (jwk, error) {
	kid, err := serviceaccount.KeyID(k)
	if err != nil {
		return jwk{}, err
	}
	enc := base64.RawURLEncoding
	x, y := make([]byte, 32), make([]byte, 32)
	k.X.FillBytes(x)
	k.Y.FillBytes(y)
	return jwk{Use: "sig", Kty: "EC", Kid: kid, Crv: "P-256", Alg: "ES256", X: enc.EncodeToString(x), Y: enc.EncodeToString(y)}, nil
}
