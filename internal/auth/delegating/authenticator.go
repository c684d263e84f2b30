// Package delegating authenticates and authorizes requests to a component
// other than the API server by asking the API server, as upstream's
// delegating authenticator and authorizer do for the kubelet
// (--authentication-token-webhook, --authorization-mode=Webhook): client
// certificates are checked locally, bearer tokens with a TokenReview, and
// every decision with a SubjectAccessReview. Answers are cached briefly so
// that a burst of requests costs one review.
package delegating

import (
	"context"
	"crypto/sha256"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
)

// TokenReviews creates TokenReviews; client-go's
// AuthenticationV1().TokenReviews() is one.
type TokenReviews interface {
	Create(ctx context.Context, review *authenticationv1.TokenReview, opts metav1.CreateOptions) (*authenticationv1.TokenReview, error)
}

// Upstream's kubelet defaults: --authentication-token-webhook-cache-ttl
// (2m), which its delegating authenticator applies to valid and invalid
// tokens alike, and the TokenReview timeout.
const (
	DefaultTokenTTL      = 2 * time.Minute
	DefaultReviewTimeout = 10 * time.Second
)

// tokenCacheSize bounds the memory an attacker spraying tokens can take.
const tokenCacheSize = 4096

// errInvalidToken is upstream's bearertoken answer for a token the review
// did not accept without saying why.
var errInvalidToken = errors.New("invalid bearer token")

// Authenticator identifies a request by its verified client certificate
// (CN the user, O the groups), else by its bearer token as the API server's
// TokenReview says. Requests with neither are not authenticated: there is
// no anonymous user, as upstream's kubelet with webhook authentication.
type Authenticator struct {
	reviews    TokenReviews
	successTTL time.Duration
	failureTTL time.Duration
	timeout    time.Duration
	cache      *cache.LRUExpireCache
}

// AuthenticatorOption changes an Authenticator's defaults.
type AuthenticatorOption func(*Authenticator)

// WithTokenTTL sets how long a review's answer is reused: success for a
// token the API server accepted, failure for one it refused.
func WithTokenTTL(success, failure time.Duration) AuthenticatorOption {
	return func(a *Authenticator) { a.successTTL, a.failureTTL = success, failure }
}

// WithTokenClock replaces the clock that expires cached answers.
func WithTokenClock(c cache.Clock) AuthenticatorOption {
	return func(a *Authenticator) { a.cache = cache.NewLRUExpireCacheWithClock(tokenCacheSize, c) }
}

// NewAuthenticator returns an Authenticator that reviews tokens with
// reviews; nil reviews accepts client certificates only.
func NewAuthenticator(reviews TokenReviews, opts ...AuthenticatorOption) *Authenticator {
	a := &Authenticator{
		reviews: reviews, successTTL: DefaultTokenTTL, failureTTL: DefaultTokenTTL,
		timeout: DefaultReviewTimeout, cache: cache.NewLRUExpireCache(tokenCacheSize),
	}
	for _, o := range opts {
		o(a)
	}
	return a
}

var _ authenticator.Request = (*Authenticator)(nil)

// AuthenticateRequest identifies r. A refused or unreviewable token is an
// error; a request without credentials is simply not authenticated.
func (a *Authenticator) AuthenticateRequest(r *http.Request) (*authenticator.Response, bool, error) {
	if resp, ok := clientCertificate(r); ok {
		return withAuthenticated(resp), true, nil
	}
	token, ok := bearerToken(r)
	if !ok || a.reviews == nil {
		return nil, false, nil
	}
	resp, ok, err := a.AuthenticateToken(r.Context(), token)
	if !ok {
		if err == nil {
			err = errInvalidToken
		}
		return nil, false, err
	}
	// The token has done its work here; nothing behind this server (the
	// runtime's streaming server) needs to see it.
	r.Header.Del("Authorization")
	return withAuthenticated(resp), true, nil
}

// clientCertificate reads the user from a certificate the TLS handshake
// has already verified against the client CA.
func clientCertificate(r *http.Request) (*authenticator.Response, bool) {
	if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 || len(r.TLS.VerifiedChains[0]) == 0 {
		return nil, false
	}
	leaf := r.TLS.VerifiedChains[0][0]
	if leaf.Subject.CommonName == "" {
		return nil, false
	}
	return &authenticator.Response{User: &user.DefaultInfo{
		Name: leaf.Subject.CommonName, Groups: slices.Clone(leaf.Subject.Organization),
	}}, true
}

// bearerToken reads `Authorization: Bearer TOKEN` as upstream does: the
// scheme in any case, nothing after the token.
func bearerToken(r *http.Request) (string, bool) {
	h := strings.TrimSpace(r.Header.Get("Authorization"))
	parts := strings.SplitN(h, " ", 3)
	if len(parts) < 2 || !strings.EqualFold(parts[0], "bearer") || parts[1] == "" {
		return "", false
	}
	return parts[1], true
}

// withAuthenticated adds system:authenticated, as upstream's
// AuthenticatedGroupAdder does for every authenticated user.
func withAuthenticated(resp *authenticator.Response) *authenticator.Response {
	u := resp.User
	groups := u.GetGroups()
	if slices.Contains(groups, user.AllAuthenticated) {
		return resp
	}
	return &authenticator.Response{Audiences: resp.Audiences, User: &user.DefaultInfo{
		Name: u.GetName(), UID: u.GetUID(), Extra: u.GetExtra(),
		Groups: append(slices.Clone(groups), user.AllAuthenticated),
	}}
}

type tokenAnswer struct {
	resp *authenticator.Response
	ok   bool
}

// AuthenticateToken asks the API server who token belongs to. Answers are
// reused for the TTLs; errors (the review failed, or the API server
// reported one) are not, so the next request asks again.
func (a *Authenticator) AuthenticateToken(ctx context.Context, token string) (*authenticator.Response, bool, error) {
	key := sha256.Sum256([]byte(token))
	if v, ok := a.cache.Get(key); ok {
		ans := v.(tokenAnswer)
		return ans.resp, ans.ok, nil
	}
	ctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	var review *authenticationv1.TokenReview
	err := withRetries(ctx, func() error {
		var err error
		review, err = a.reviews.Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return nil, false, err
	}
	st := review.Status
	if !st.Authenticated {
		if st.Error != "" {
			return nil, false, errors.New(st.Error)
		}
		a.cache.Add(key, tokenAnswer{}, a.failureTTL)
		return nil, false, nil
	}
	u := &user.DefaultInfo{Name: st.User.Username, UID: st.User.UID, Groups: st.User.Groups}
	if len(st.User.Extra) > 0 {
		u.Extra = map[string][]string{}
		for k, v := range st.User.Extra {
			u.Extra[k] = v
		}
	}
	resp := &authenticator.Response{User: u, Audiences: st.Audiences}
	a.cache.Add(key, tokenAnswer{resp: resp, ok: true}, a.successTTL)
	return resp, true, nil
}
