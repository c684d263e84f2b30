package apiserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orca-project/orca/internal/auth/bootstraptoken"
	"github.com/orca-project/orca/internal/auth/serviceaccount"
)

// objectGetter reads the objects a token names.
type objectGetter interface {
	Get(ctx context.Context, resource, namespace, name string) (runtime.Object, error)
}

// tokenAuthenticator accepts service-account bearer tokens: a valid
// signature, issuer, audience and validity window, and — as upstream
// checks bound tokens — a service account (and bound pod or secret, or a
// directly bound node) that still exists with the uid in the token.
type tokenAuthenticator struct {
	validator serviceaccount.Validator
	objects   objectGetter
	now       func() time.Time
	log       *slog.Logger
}

// Authenticate implements Authenticator.
func (a *tokenAuthenticator) Authenticate(r *http.Request) (User, bool) {
	tok, ok := bearerToken(r.Header.Get("Authorization"))
	if !ok {
		return User{}, false
	}
	info, err := a.authenticate(r.Context(), tok)
	if err != nil {
		if !errors.Is(err, serviceaccount.ErrNotOurs) {
			a.log.Debug("bearer token rejected", "path", r.URL.Path, "err", err)
		}
		return User{}, false
	}
	return User{Name: info.UserName(), UID: info.UID, Groups: info.Groups(), Extra: tokenExtra(info)}, true
}

// tokenExtra is what upstream's service-account authenticator adds to the
// user's extra: the bound pod and node, and the token's credential ID.
func tokenExtra(info serviceaccount.Info) map[string][]string {
	extra := map[string][]string{}
	if info.Pod != nil {
		extra["authentication.kubernetes.io/pod-name"] = []string{info.Pod.Name}
		extra["authentication.kubernetes.io/pod-uid"] = []string{info.Pod.UID}
	}
	if info.Node != nil {
		extra["authentication.kubernetes.io/node-name"] = []string{info.Node.Name}
		if info.Node.UID != "" {
			extra["authentication.kubernetes.io/node-uid"] = []string{info.Node.UID}
		}
	}
	if info.CredentialID != "" {
		extra["authentication.kubernetes.io/credential-id"] = []string{info.CredentialID}
	}
	if len(extra) == 0 {
		return nil
	}
	return extra
}

// bearerToken parses an Authorization header as upstream's bearer-token
// filter does: the scheme is case-insensitive and the token is one word.
func bearerToken(header string) (string, bool) {
	parts := strings.SplitN(strings.TrimSpace(header), " ", 3)
	if len(parts) < 2 || !strings.EqualFold(parts[0], "bearer") || parts[1] == "" {
		return "", false
	}
	return parts[1], true
}

func (a *tokenAuthenticator) authenticate(ctx context.Context, tok string) (serviceaccount.Info, error) {
	now := a.now()
	info, err := a.validator.Validate(tok, now)
	if err != nil {
		return info, err
	}
	// Objects deleted within the leeway still count, as upstream allows
	// for the time a deletion takes to be seen.
	deletedBefore := now.Add(-serviceaccount.Leeway)
	if err := a.stillExists(ctx, "serviceaccounts", info.Namespace, info.Name, info.UID, "service account", deletedBefore); err != nil {
		return info, err
	}
	switch {
	case info.Pod != nil:
		err = a.stillExists(ctx, "pods", info.Namespace, info.Pod.Name, info.Pod.UID, "pod", deletedBefore)
	case info.Secret != nil:
		err = a.stillExists(ctx, "secrets", info.Namespace, info.Secret.Name, info.Secret.UID, "secret", deletedBefore)
	case info.Node != nil:
		err = a.stillExists(ctx, "nodes", "", info.Node.Name, info.Node.UID, "node", deletedBefore)
	}
	return info, err
}

// stillExists checks one named object with upstream's messages.
func (a *tokenAuthenticator) stillExists(ctx context.Context, resource, ns, name, uid, what string, deletedBefore time.Time) error {
	obj, err := a.objects.Get(ctx, resource, ns, name)
	if err != nil {
		return fmt.Errorf("%s %s/%s: %w", what, ns, name, err)
	}
	m, ok := obj.(metav1.Object)
	if !ok {
		return fmt.Errorf("%s %s/%s has no metadata", what, ns, name)
	}
	return checkBound(what, m.GetUID(), types.UID(uid), m.GetDeletionTimestamp(), deletedBefore)
}

// checkBound decides whether a stored object still backs a token.
func checkBound(what string, stored, claimed types.UID, deletion *metav1.Time, deletedBefore time.Time) error {
	if stored != claimed {
		return fmt.Errorf("%s UID (%s) does not match claim (%s)", what, stored, claimed)
	}
	if deletion != nil && deletion.Time.Before(deletedBefore) {
		return fmt.Errorf("%s has been deleted", what)
	}
	return nil
}

// coreObjects reads core/v1 objects through the server's cache.
type coreObjects struct{ s *Server }

func (c coreObjects) Get(ctx context.Context, resource, ns, name string) (runtime.Object, error) {
	return c.s.getCore(ctx, resource, ns, name)
}

// newTokenAuthenticator checks the tokens the server issues.
func (s *Server) newTokenAuthenticator() Authenticator {
	return &tokenAuthenticator{validator: s.tokens.validator, objects: coreObjects{s}, now: time.Now, log: s.log}
}

// bootstrapAuthenticator accepts bootstrap tokens, checked against their
// Secrets in kube-system through the server's cache.
type bootstrapAuthenticator struct {
	objects objectGetter
	now     func() time.Time
	log     *slog.Logger
}

// Authenticate implements Authenticator.
func (a *bootstrapAuthenticator) Authenticate(r *http.Request) (User, bool) {
	tok, ok := bearerToken(r.Header.Get("Authorization"))
	if !ok {
		return User{}, false
	}
	id, _, err := bootstraptoken.Parse(tok)
	if err != nil {
		return User{}, false
	}
	var secret *corev1.Secret
	obj, err := a.objects.Get(r.Context(), "secrets", metav1.NamespaceSystem, bootstraptoken.SecretName(id))
	switch {
	case err == nil:
		secret, _ = obj.(*corev1.Secret)
	case !apierrors.IsNotFound(err):
		a.log.Warn("bootstrap token lookup", "id", id, "err", err)
		return User{}, false
	}
	u, err := bootstraptoken.Authenticate(tok, secret, a.now())
	if err != nil {
		a.log.Debug("bootstrap token rejected", "path", r.URL.Path, "err", err)
		return User{}, false
	}
	return User{Name: u.Name, Groups: u.Groups}, true
}
