package volume

import (
	"context"
	"fmt"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/types"
)

// maxTokenTTL bounds how long a token is used, whatever it says, as upstream.
const maxTokenTTL = 24 * time.Hour

type tokenKey struct {
	namespace, serviceAccount, audiences string
	expirationSeconds                    int64
	pod                                  types.UID
}

type cachedToken struct {
	tr      *authenticationv1.TokenRequest
	fetched time.Time
}

// token returns a cached token for the request, asking for a new one when
// the cached one needs a refresh. A failed refresh keeps serving the cached
// token while it is still valid, as upstream's token manager does.
func (m *Manager) token(ctx context.Context, namespace, serviceAccount string, req *authenticationv1.TokenRequest, pod types.UID) (*authenticationv1.TokenRequest, error) {
	key := tokenKey{namespace: namespace, serviceAccount: serviceAccount, audiences: strings.Join(req.Spec.Audiences, ","), pod: pod}
	if req.Spec.ExpirationSeconds != nil {
		key.expirationSeconds = *req.Spec.ExpirationSeconds
	}
	now := m.now()
	m.mu.Lock()
	cached, ok := m.tokens[key]
	m.mu.Unlock()
	if ok && !needsRefresh(now, cached.tr, cached.fetched) {
		return cached.tr, nil
	}
	tr, err := m.Sources.Token(ctx, namespace, serviceAccount, req)
	if err != nil {
		switch {
		case !ok:
			return nil, fmt.Errorf("failed to fetch token: %w", err)
		case !now.Before(cached.tr.Status.ExpirationTimestamp.Time):
			return nil, fmt.Errorf("token for %s/%s expired and refresh failed: %w", namespace, serviceAccount, err)
		}
		m.log().Error("cannot refresh service account token, using the cached one", "serviceAccount", namespace+"/"+serviceAccount, "err", err)
		return cached.tr, nil
	}
	m.mu.Lock()
	if m.tokens == nil {
		m.tokens = map[tokenKey]cachedToken{}
	}
	m.tokens[key] = cachedToken{tr: tr, fetched: now}
	m.mu.Unlock()
	return tr, nil
}

// needsRefresh is upstream's rule, without its jitter: refresh once 80% of
// the token's lifetime has passed, or once it is older than 24 hours. The
// lifetime is the granted expirationSeconds, or the time since it was
// fetched when the response does not say.
func needsRefresh(now time.Time, tr *authenticationv1.TokenRequest, fetched time.Time) bool {
	exp := tr.Status.ExpirationTimestamp.Time
	ttl := exp.Sub(fetched)
	if tr.Spec.ExpirationSeconds != nil {
		ttl = time.Duration(*tr.Spec.ExpirationSeconds) * time.Second
	}
	issued := exp.Add(-ttl)
	if !now.Before(issued.Add(maxTokenTTL)) {
		return true
	}
	return !now.Before(exp.Add(-ttl * 20 / 100))
}

func (m *Manager) forgetTokens(pod types.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.tokens {
		if k.pod == pod {
			delete(m.tokens, k)
		}
	}
}
