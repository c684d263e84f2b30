// Package serviceaccount issues and validates service-account tokens:
// ES256-signed JWTs with upstream's claims (iss, sub, aud, exp, iat, nbf,
// jti and the private "kubernetes.io" claim naming the namespace, the
// service account and the object the token is bound to). Everything here
// is pure: the caller supplies the time and checks that the named objects
// still exist.
package serviceaccount

import (
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
)

// DefaultIssuer is upstream's conventional issuer, the in-cluster URL of
// the API server.
const DefaultIssuer = "https://kubernetes.default.svc.cluster.local"

// Leeway tolerates clock skew in exp, nbf and iat, as go-jose's
// DefaultLeeway does for upstream.
const Leeway = time.Minute

// Ref names an object by name and uid.
type Ref struct {
	Name string `json:"name"`
	UID  string `json:"uid"`
}

// Kubernetes is the private "kubernetes.io" claim.
type Kubernetes struct {
	Namespace      string `json:"namespace,omitempty"`
	ServiceAccount Ref    `json:"serviceaccount"`
	Pod            *Ref   `json:"pod,omitempty"`
	Secret         *Ref   `json:"secret,omitempty"`
	Node           *Ref   `json:"node,omitempty"`
	// WarnAfter, when set, is the time after which the API server logs
	// the token's use as stale while still accepting it.
	WarnAfter int64 `json:"warnafter,omitempty"`
}

// Claims is a token's payload.
type Claims struct {
	Issuer     string     `json:"iss"`
	Subject    string     `json:"sub"`
	Audience   Audience   `json:"aud"`
	Expiry     int64      `json:"exp"`
	IssuedAt   int64      `json:"iat"`
	NotBefore  int64      `json:"nbf"`
	ID         string     `json:"jti,omitempty"`
	Kubernetes Kubernetes `json:"kubernetes.io"`
}

// Audience is the "aud" claim, which RFC 7519 lets be a string or an
// array; it is always written as an array, as upstream does.
type Audience []string

// UnmarshalJSON accepts both forms.
func (a *Audience) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*a = Audience{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return fmt.Errorf("aud: %w", err)
	}
	*a = many
	return nil
}

// Request is what a token is issued for.
type Request struct {
	Namespace      string
	ServiceAccount Ref
	// At most one of Pod and Secret; Node alone or with Pod (the pod's
	// node).
	Pod, Secret, Node *Ref
	Audiences         []string
	Expiration        time.Duration
	// WarnAfter, when positive, is recorded as the "warnafter" claim.
	WarnAfter time.Duration
}

// MakeUsername is a service account's user name.
func MakeUsername(namespace, name string) string {
	return "system:serviceaccount:" + namespace + ":" + name
}

// NewClaims builds the claims of a token issued at now with id as its
// "jti".
func NewClaims(issuer string, req Request, now time.Time, id string) Claims {
	c := Claims{
		Issuer:    issuer,
		Subject:   MakeUsername(req.Namespace, req.ServiceAccount.Name),
		Audience:  slices.Clone(req.Audiences),
		Expiry:    now.Add(req.Expiration).Unix(),
		IssuedAt:  now.Unix(),
		NotBefore: now.Unix(),
		ID:        id,
		Kubernetes: Kubernetes{
			Namespace: req.Namespace, ServiceAccount: req.ServiceAccount,
			Pod: req.Pod, Secret: req.Secret, Node: req.Node,
		},
	}
	if req.WarnAfter > 0 {
		c.Kubernetes.WarnAfter = now.Add(req.WarnAfter).Unix()
	}
	return c
}

// Signer signs tokens with one private key.
type Signer struct {
	key   *ecdsa.PrivateKey
	keyID string
}

// NewSigner signs with key, which must be ECDSA P-256.
func NewSigner(key *ecdsa.PrivateKey) (*Signer, error) {
	kid, err := KeyID(&key.PublicKey)
	if err != nil {
		return nil, err
	}
	return &Signer{key: key, keyID: kid}, nil
}

// Issue signs claims into a compact JWT.
func (s *Signer) Issue(c Claims) (string, error) {
	payload, err := json.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("encode claims: %w", err)
	}
	return sign(s.key, s.keyID, payload)
}

// Info is what a valid token says about its bearer.
type Info struct {
	Namespace, Name, UID string
	// Pod, Secret and Node are the objects the token is bound to, if any.
	Pod, Secret, Node *Ref
	// CredentialID identifies the token in audit logs ("JTI=<jti>").
	CredentialID string
}

// UserName is the bearer's user name.
func (i Info) UserName() string { return MakeUsername(i.Namespace, i.Name) }

// Groups are the bearer's groups, system:authenticated aside.
func (i Info) Groups() []string {
	return []string{"system:serviceaccounts", "system:serviceaccounts:" + i.Namespace}
}

// ErrNotOurs reports a token this validator does not judge: not a JWT,
// or one from another issuer. Other authenticators may still accept it.
var ErrNotOurs = errors.New("not a service-account token of this issuer")

// Validator checks tokens.
type Validator struct {
	// Issuers are the accepted "iss" values.
	Issuers []string
	// Keys are the public keys a token may be signed with.
	Keys []*ecdsa.PublicKey
	// Audiences are the API server's audiences; a token must name at
	// least one of them.
	Audiences []string
}

// Validate checks a token's signature, issuer, audience and validity
// window at now. The messages are upstream's.
func (v Validator) Validate(token string, now time.Time) (Info, error) {
	h, payload, err := parse(token)
	if err != nil {
		return Info{}, ErrNotOurs
	}
	var c Claims
	if err := json.Unmarshal(payload, &c); err != nil {
		return Info{}, ErrNotOurs
	}
	if !slices.Contains(v.Issuers, c.Issuer) {
		return Info{}, ErrNotOurs
	}
	if err := verify(token, h, v.Keys); err != nil {
		return Info{}, err
	}
	if !slices.ContainsFunc(c.Audience, func(a string) bool { return slices.Contains(v.Audiences, a) }) {
		return Info{}, fmt.Errorf("token audiences %q is invalid for the target audiences %q", []string(c.Audience), v.Audiences)
	}
	if err := checkTimes(c, now); err != nil {
		return Info{}, err
	}
	k := c.Kubernetes
	if k.Namespace == "" || k.ServiceAccount.Name == "" {
		return Info{}, errors.New("service account token lacks the kubernetes.io claim")
	}
	if want := MakeUsername(k.Namespace, k.ServiceAccount.Name); c.Subject != want {
		return Info{}, fmt.Errorf("service account token subject %q does not match its kubernetes.io claim (%s)", c.Subject, want)
	}
	info := Info{Namespace: k.Namespace, Name: k.ServiceAccount.Name, UID: k.ServiceAccount.UID, Pod: k.Pod, Secret: k.Secret, Node: k.Node}
	if c.ID != "" {
		info.CredentialID = "JTI=" + c.ID
	}
	return info, nil
}

// checkTimes applies exp, nbf and iat with Leeway, in go-jose's order.
func checkTimes(c Claims, now time.Time) error {
	t := now.Unix()
	leeway := int64(Leeway / time.Second)
	switch {
	case c.NotBefore != 0 && t+leeway < c.NotBefore:
		return errors.New("service account token is not valid yet")
	case c.Expiry != 0 && t-leeway > c.Expiry:
		return errors.New("service account token has expired")
	case c.IssuedAt != 0 && t+leeway < c.IssuedAt:
		return errors.New("service account token is issued in the future")
	case c.Expiry == 0:
		return errors.New("service account token has no expiry")
	}
	return nil
}
