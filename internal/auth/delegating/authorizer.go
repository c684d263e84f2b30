package delegating

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// SubjectAccessReviews creates SubjectAccessReviews; client-go's
// AuthorizationV1().SubjectAccessReviews() is one.
type SubjectAccessReviews interface {
	Create(ctx context.Context, review *authorizationv1.SubjectAccessReview, opts metav1.CreateOptions) (*authorizationv1.SubjectAccessReview, error)
}

// Upstream's kubelet defaults (--authorization-webhook-cache-authorized-ttl
// and -unauthorized-ttl): a refusal is reused for a shorter time, so that a
// newly granted right takes effect soon.
const (
	DefaultAllowedTTL = 5 * time.Minute
	DefaultDeniedTTL  = 30 * time.Second
)

const (
	// decisionCacheSize is upstream's webhook authorizer's.
	decisionCacheSize = 8192
	// maxCachedAttributes is upstream's limit on what a caller controls
	// in a cache key; larger requests are reviewed every time.
	maxCachedAttributes = 10000
)

// Authorizer decides with a SubjectAccessReview to the API server, as
// upstream's webhook authorizer: allowed, denied, or no opinion when the
// API server has neither.
type Authorizer struct {
	reviews               SubjectAccessReviews
	allowedTTL, deniedTTL time.Duration
	timeout               time.Duration
	cache                 *cache.LRUExpireCache
}

// AuthorizerOption changes an Authorizer's defaults.
type AuthorizerOption func(*Authorizer)

// WithDecisionTTL sets how long allowed and not-allowed answers are reused.
func WithDecisionTTL(allowed, denied time.Duration) AuthorizerOption {
	return func(a *Authorizer) { a.allowedTTL, a.deniedTTL = allowed, denied }
}

// WithDecisionClock replaces the clock that expires cached answers.
func WithDecisionClock(c cache.Clock) AuthorizerOption {
	return func(a *Authorizer) { a.cache = cache.NewLRUExpireCacheWithClock(decisionCacheSize, c) }
}

// NewAuthorizer returns an Authorizer asking reviews.
func NewAuthorizer(reviews SubjectAccessReviews, opts ...AuthorizerOption) *Authorizer {
	a := &Authorizer{
		reviews: reviews, allowedTTL: DefaultAllowedTTL, deniedTTL: DefaultDeniedTTL,
		timeout: DefaultReviewTimeout, cache: cache.NewLRUExpireCache(decisionCacheSize),
	}
	for _, o := range opts {
		o(a)
	}
	return a
}

var _ authorizer.UnconditionalAuthorizer = (*Authorizer)(nil)

// Authorize reviews attrs. When the review cannot be made the decision is
// no opinion with the error, which callers refuse.
func (a *Authorizer) Authorize(ctx context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	spec := ReviewSpec(attrs)
	key, err := json.Marshal(spec)
	if err != nil {
		return authorizer.DecisionNoOpinion, "", err
	}
	var st authorizationv1.SubjectAccessReviewStatus
	if v, ok := a.cache.Get(string(key)); ok {
		st = v.(authorizationv1.SubjectAccessReviewStatus)
	} else {
		rctx, cancel := context.WithTimeout(ctx, a.timeout)
		defer cancel()
		var review *authorizationv1.SubjectAccessReview
		err := withRetries(rctx, func() error {
			var err error
			review, err = a.reviews.Create(rctx, &authorizationv1.SubjectAccessReview{Spec: spec}, metav1.CreateOptions{})
			return err
		})
		if err != nil {
			return authorizer.DecisionNoOpinion, "", err
		}
		st = review.Status
		if cacheable(attrs) {
			ttl := a.deniedTTL
			if st.Allowed {
				ttl = a.allowedTTL
			}
			a.cache.Add(string(key), st, ttl)
		}
	}
	switch {
	case st.Allowed && st.Denied:
		return authorizer.DecisionDeny, st.Reason, errors.New("webhook subject access review returned both allow and deny response")
	case st.Denied:
		return authorizer.DecisionDeny, st.Reason, nil
	case st.Allowed:
		return authorizer.DecisionAllow, st.Reason, nil
	}
	return authorizer.DecisionNoOpinion, st.Reason, nil
}

// ReviewSpec is the SubjectAccessReview that asks about attrs, as
// upstream's webhook authorizer writes it.
func ReviewSpec(attrs authorizer.Attributes) authorizationv1.SubjectAccessReviewSpec {
	var spec authorizationv1.SubjectAccessReviewSpec
	if u := attrs.GetUser(); u != nil {
		spec.User, spec.UID, spec.Groups = u.GetName(), u.GetUID(), u.GetGroups()
		if extra := u.GetExtra(); len(extra) > 0 {
			spec.Extra = map[string]authorizationv1.ExtraValue{}
			for k, v := range extra {
				spec.Extra[k] = v
			}
		}
	}
	if attrs.IsResourceRequest() {
		spec.ResourceAttributes = &authorizationv1.ResourceAttributes{
			Namespace: attrs.GetNamespace(), Verb: attrs.GetVerb(),
			Group: attrs.GetAPIGroup(), Version: attrs.GetAPIVersion(),
			Resource: attrs.GetResource(), Subresource: attrs.GetSubresource(), Name: attrs.GetName(),
		}
	} else {
		spec.NonResourceAttributes = &authorizationv1.NonResourceAttributes{Path: attrs.GetPath(), Verb: attrs.GetVerb()}
	}
	return spec
}

func cacheable(attrs authorizer.Attributes) bool {
	n := len(attrs.GetNamespace()) + len(attrs.GetVerb()) + len(attrs.GetAPIGroup()) + len(attrs.GetAPIVersion()) +
		len(attrs.GetResource()) + len(attrs.GetSubresource()) + len(attrs.GetName()) + len(attrs.GetPath())
	return n < maxCachedAttributes
}
