// Package bootstraptoken holds the bootstrap tokens a machine presents to
// join the cluster before it has credentials of its own: upstream's
// bootstrap token authenticator ("ID.SECRET" names the Secret
// bootstrap-token-ID in kube-system, of type bootstrap.kubernetes.io/token),
// the Secrets behind `orca token`, and the join token that carries a pin
// of the cluster CA, so that a joining machine can tell the real API
// server from a man in the middle before it sends the token anywhere.
package bootstraptoken

import (
	"crypto/sha256"
	"crypto/subtle"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	bootstraputil "k8s.io/cluster-bootstrap/token/util"
	bootstrapsecrets "k8s.io/cluster-bootstrap/util/secrets"
)

var tokenPattern = regexp.MustCompile(bootstrapapi.BootstrapTokenPattern)

// Parse splits a bootstrap token into its ID and secret.
func Parse(token string) (id, secret string, err error) {
	m := tokenPattern.FindStringSubmatch(token)
	if m == nil {
		return "", "", fmt.Errorf("bootstrap token %q is not of the form [a-z0-9]{6}.[a-z0-9]{16}", redact(token))
	}
	return m[1], m[2], nil
}

// redact keeps a token's ID and hides its secret, for messages.
func redact(token string) string {
	if id, _, ok := strings.Cut(token, "."); ok && len(id) <= 6 {
		return id + ".<redacted>"
	}
	return "<redacted>"
}

// SecretName is the Secret in kube-system that holds the token with id.
func SecretName(id string) string { return bootstraputil.BootstrapTokenSecretName(id) }

// User is who a bootstrap token authenticates as.
type User struct {
	Name   string
	Groups []string
}

// ErrNotBootstrapToken says a bearer token is not in the bootstrap form,
// so that other authenticators may try it.
var ErrNotBootstrapToken = errors.New("not a bootstrap token")

// Authenticate checks a bearer token against the Secret it names (nil
// when there is none), as upstream's authenticator does: the Secret's
// type, secret (compared in constant time), ID, expiry, deletion and
// authentication usage; the user is system:bootstrap:ID in
// system:bootstrappers and the Secret's extra groups.
func Authenticate(token string, secret *v1.Secret, now time.Time) (User, error) {
	id, tokenSecret, err := Parse(token)
	if err != nil {
		return User{}, ErrNotBootstrapToken
	}
	if secret == nil {
		return User{}, fmt.Errorf("no secret %s to match bootstrap token", SecretName(id))
	}
	if secret.DeletionTimestamp != nil {
		return User{}, fmt.Errorf("bootstrap token secret %s is deleted and awaiting removal", secret.Name)
	}
	if secret.Type != bootstrapapi.SecretTypeBootstrapToken || secret.Data == nil {
		return User{}, fmt.Errorf("bootstrap token secret %s has invalid type, expected %s", secret.Name, bootstrapapi.SecretTypeBootstrapToken)
	}
	stored := bootstrapsecrets.GetData(secret, bootstrapapi.BootstrapTokenSecretKey)
	if subtle.ConstantTimeCompare([]byte(stored), []byte(tokenSecret)) != 1 {
		return User{}, fmt.Errorf("bootstrap token secret %s has invalid value for key %s", secret.Name, bootstrapapi.BootstrapTokenSecretKey)
	}
	if bootstrapsecrets.GetData(secret, bootstrapapi.BootstrapTokenIDKey) != id {
		return User{}, fmt.Errorf("bootstrap token secret %s has invalid value for key %s", secret.Name, bootstrapapi.BootstrapTokenIDKey)
	}
	if bootstrapsecrets.HasExpired(secret, now) {
		return User{}, fmt.Errorf("bootstrap token secret %s has expired", secret.Name)
	}
	if bootstrapsecrets.GetData(secret, bootstrapapi.BootstrapTokenUsageAuthentication) != "true" {
		return User{}, fmt.Errorf("bootstrap token secret %s not marked %s=true", secret.Name, bootstrapapi.BootstrapTokenUsageAuthentication)
	}
	groups, err := bootstrapsecrets.GetGroups(secret)
	if err != nil {
		return User{}, fmt.Errorf("bootstrap token secret %s has invalid value for key %s: %w", secret.Name, bootstrapapi.BootstrapTokenExtraGroupsKey, err)
	}
	return User{Name: bootstrapapi.BootstrapUserPrefix + id, Groups: groups}, nil
}

// NodeGroup is the extra group of the tokens nodes join with; the
// bootstrap policy binds it to creating and auto-approving node client
// certificates (bootstrappolicy.NodeBootstrapGroup).
const NodeGroup = "system:bootstrappers:orca:default-node-token"

// Spec describes a token to create.
type Spec struct {
	// Token is "ID.SECRET"; a random one when empty.
	Token       string
	Description string
	// TTL is how long the token lives; forever when 0.
	TTL    time.Duration
	Usages []string
	Groups []string
}

// Secret builds the Secret for a token spec at now, checking the spec as
// upstream's kubeadm does.
func (s Spec) Secret(now time.Time) (*v1.Secret, string, error) {
	token := s.Token
	if token == "" {
		var err error
		if token, err = bootstraputil.GenerateBootstrapToken(); err != nil {
			return nil, "", fmt.Errorf("generate bootstrap token: %w", err)
		}
	}
	id, secret, err := Parse(token)
	if err != nil {
		return nil, "", err
	}
	if err := bootstraputil.ValidateUsages(s.Usages); err != nil {
		return nil, "", err
	}
	for _, g := range s.Groups {
		if err := bootstraputil.ValidateBootstrapGroupName(g); err != nil {
			return nil, "", err
		}
	}
	if s.TTL < 0 {
		return nil, "", fmt.Errorf("token TTL %v is negative", s.TTL)
	}
	data := map[string][]byte{
		bootstrapapi.BootstrapTokenIDKey:     []byte(id),
		bootstrapapi.BootstrapTokenSecretKey: []byte(secret),
	}
	if s.Description != "" {
		data[bootstrapapi.BootstrapTokenDescriptionKey] = []byte(s.Description)
	}
	if s.TTL > 0 {
		data[bootstrapapi.BootstrapTokenExpirationKey] = []byte(now.Add(s.TTL).UTC().Format(time.RFC3339))
	}
	for _, u := range s.Usages {
		data[bootstrapapi.BootstrapTokenUsagePrefix+u] = []byte("true")
	}
	if len(s.Groups) > 0 {
		data[bootstrapapi.BootstrapTokenExtraGroupsKey] = []byte(strings.Join(s.Groups, ","))
	}
	return &v1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: SecretName(id), Namespace: metav1.NamespaceSystem},
		Type:       bootstrapapi.SecretTypeBootstrapToken,
		Data:       data,
	}, token, nil
}

// Info is what `orca token list` shows of a token Secret.
type Info struct {
	ID          string
	Expires     *time.Time
	Usages      []string
	Description string
	Groups      []string
}

// InfoOf reads a token Secret; ok is false for other Secrets.
func InfoOf(s *v1.Secret) (Info, bool) {
	if s.Type != bootstrapapi.SecretTypeBootstrapToken {
		return Info{}, false
	}
	in := Info{
		ID:          bootstrapsecrets.GetData(s, bootstrapapi.BootstrapTokenIDKey),
		Description: bootstrapsecrets.GetData(s, bootstrapapi.BootstrapTokenDescriptionKey),
	}
	if exp := bootstrapsecrets.GetData(s, bootstrapapi.BootstrapTokenExpirationKey); exp != "" {
		if t, err := time.Parse(time.RFC3339, exp); err == nil {
			in.Expires = &t
		}
	}
	for _, u := range bootstrapapi.KnownTokenUsages {
		if bootstrapsecrets.GetData(s, bootstrapapi.BootstrapTokenUsagePrefix+u) == "true" {
			in.Usages = append(in.Usages, u)
		}
	}
	if g := bootstrapsecrets.GetData(s, bootstrapapi.BootstrapTokenExtraGroupsKey); g != "" {
		in.Groups = strings.Split(g, ",")
	}
	return in, true
}

// joinPrefix marks a join token, as k3s's secure tokens are marked.
const joinPrefix = "K10"

// Pin is the sha256 of a CA certificate's public key (its
// SubjectPublicKeyInfo), kubeadm's discovery-token-ca-cert-hash: it stays
// the same whatever the certificate's encoding.
func Pin(ca *x509.Certificate) string {
	sum := sha256.Sum256(ca.RawSubjectPublicKeyInfo)
	return hex.EncodeToString(sum[:])
}

// JoinToken is a bootstrap token with the pin of the CA the server's
// certificate must chain to: K10<pin>::<ID>.<SECRET>.
func JoinToken(ca *x509.Certificate, token string) string {
	return joinPrefix + Pin(ca) + "::" + token
}

// ParseJoinToken splits a join token into its CA pin and bootstrap token.
func ParseJoinToken(s string) (pin, token string, err error) {
	s = strings.TrimSpace(s)
	rest, ok := strings.CutPrefix(s, joinPrefix)
	if !ok {
		return "", "", fmt.Errorf("join token does not start with %s: pass the token `orca server` printed (or `orca token create`), which carries the hash of the cluster CA", joinPrefix)
	}
	pin, token, ok = strings.Cut(rest, "::")
	if !ok || len(pin) != sha256.Size*2 {
		return "", "", fmt.Errorf("join token is malformed: want K10<sha256 of the CA public key>::<id>.<secret>")
	}
	if _, err := hex.DecodeString(pin); err != nil {
		return "", "", fmt.Errorf("join token's CA hash is not hexadecimal")
	}
	if _, _, err := Parse(token); err != nil {
		return "", "", err
	}
	return strings.ToLower(pin), token, nil
}

// VerifyPin finds the certificate among certs whose key has the pin.
func VerifyPin(certs []*x509.Certificate, pin string) (*x509.Certificate, error) {
	for _, c := range certs {
		if subtle.ConstantTimeCompare([]byte(Pin(c)), []byte(pin)) == 1 {
			return c, nil
		}
	}
	return nil, fmt.Errorf("the cluster CA's public key hash does not match the join token's (%s…): refusing to trust this server", pin[:12])
}

// OnlyTokens narrows a list or watch of Secrets to bootstrap tokens.
func OnlyTokens(o *metav1.ListOptions) {
	o.FieldSelector = fields.OneTermEqualSelector("type", string(bootstrapapi.SecretTypeBootstrapToken)).String()
}
