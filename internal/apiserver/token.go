package apiserver

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/audit"
	authnode "github.com/orca-project/orca/internal/auth/node"
	"github.com/orca-project/orca/internal/auth/serviceaccount"
)

// ServiceAccountTokens configures the TokenRequest subresource and the
// bearer-token authenticator.
type ServiceAccountTokens struct {
	// Issuer is the tokens' "iss"; serviceaccount.DefaultIssuer when empty.
	Issuer string
	// Key signs new tokens (ECDSA P-256).
	Key *ecdsa.PrivateKey
	// PublicKeys are further keys whose tokens are accepted (a rotated
	// key's); Key's own public key is always accepted.
	PublicKeys []*ecdsa.PublicKey
	// APIAudiences are the audiences the API server accepts and that a
	// TokenRequest without audiences gets; [Issuer] when empty, as
	// upstream defaults --api-audiences to the issuer.
	APIAudiences []string
	// JWKSURI is the jwks_uri of the OpenID provider configuration
	// (upstream's --service-account-jwks-uri); the address the request
	// reached, at /openid/v1/jwks, when empty.
	JWKSURI string
}

// tokens is the configuration made ready for use.
type tokens struct {
	issuer    string
	audiences []string
	signer    *serviceaccount.Signer
	validator serviceaccount.Validator
}

func newTokens(cfg *ServiceAccountTokens) (*tokens, error) {
	if cfg == nil {
		return nil, nil
	}
	if cfg.Key == nil {
		return nil, fmt.Errorf("service-account tokens: no signing key")
	}
	t := &tokens{issuer: cfg.Issuer, audiences: cfg.APIAudiences}
	if t.issuer == "" {
		t.issuer = serviceaccount.DefaultIssuer
	}
	if len(t.audiences) == 0 {
		t.audiences = []string{t.issuer}
	}
	signer, err := serviceaccount.NewSigner(cfg.Key)
	if err != nil {
		return nil, fmt.Errorf("service-account tokens: %w", err)
	}
	t.signer = signer
	t.validator = serviceaccount.Validator{
		Issuers:   []string{t.issuer},
		Keys:      append([]*ecdsa.PublicKey{&cfg.Key.PublicKey}, cfg.PublicKeys...),
		Audiences: t.audiences,
	}
	return t, nil
}

var tokenRequestGVK = authenticationv1.SchemeGroupVersion.WithKind("TokenRequest")

const (
	// defaultTokenSeconds is upstream's default expirationSeconds.
	defaultTokenSeconds = 3600
	minTokenSeconds     = 600
	maxTokenSeconds     = 1 << 32
)

// validateTokenRequest is upstream's static validation of a TokenRequest
// whose expirationSeconds has been defaulted.
func validateTokenRequest(tr *authenticationv1.TokenRequest) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("spec", "expirationSeconds")
	secs := *tr.Spec.ExpirationSeconds
	if secs < minTokenSeconds {
		errs = append(errs, field.Invalid(p, secs, "may not specify a duration less than 10 minutes"))
	}
	if secs > maxTokenSeconds {
		errs = append(errs, field.Invalid(p, secs, "may not specify a duration larger than 2^32 seconds"))
	}
	return errs
}

// serveToken issues a token for a service account:
// POST .../serviceaccounts/NAME/token with a TokenRequest.
func (s *Server) serveToken(w http.ResponseWriter, r *http.Request, res *resource, ri requestInfo) {
	if s.tokens == nil {
		s.writeError(w, r, errNotFoundPath())
		return
	}
	// A TokenRequest is never stored, so a dry run differs in nothing but
	// the flag having been accepted; upstream issues the token alike.
	_, fv, body, err := s.writeInput(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var warn warnings
	obj, err := s.decodeObject(body, r.Header.Get("Content-Type"), fv, func() runtime.Object { return &authenticationv1.TokenRequest{} }, &warn)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	audit.LogRequestObject(r.Context(), obj, s.codecs.json)
	req, ok := obj.(*authenticationv1.TokenRequest)
	if !ok {
		s.writeError(w, r, apierrors.NewBadRequest(fmt.Sprintf("expected a TokenRequest, got %T", obj)))
		return
	}
	out, err := s.issueToken(r.Context(), res, ri.Namespace, ri.Name, req, time.Now())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	warn.write(w)
	s.writeObject(w, r, http.StatusCreated, out)
}

// issueToken follows upstream's TokenREST.Create step by step, so that
// errors come in the same order.
func (s *Server) issueToken(ctx context.Context, saRes *resource, ns, name string, req *authenticationv1.TokenRequest, now time.Time) (*authenticationv1.TokenRequest, error) {
	if req.Name != "" && req.Name != name {
		return nil, apierrors.NewInvalid(tokenRequestGVK.GroupKind(), name, field.ErrorList{
			field.Invalid(field.NewPath("metadata", "name"), req.Name, "must match the service account name if specified"),
		})
	}
	if req.Namespace != "" && req.Namespace != ns {
		return nil, apierrors.NewInvalid(tokenRequestGVK.GroupKind(), name, field.ErrorList{
			field.Invalid(field.NewPath("metadata", "namespace"), req.Namespace, "must match the service account namespace if specified"),
		})
	}
	saObj, err := s.get(ctx, saRes, ns, name, "")
	if err != nil {
		return nil, err
	}
	if err := s.nodeMayRequestToken(ctx, ns, name, req); err != nil {
		return nil, err
	}
	sa := saObj.(*corev1.ServiceAccount)
	out := req.DeepCopy()
	if len(out.Spec.Audiences) == 0 {
		out.Spec.Audiences = s.tokens.audiences
	}
	if out.Spec.ExpirationSeconds == nil {
		secs := int64(defaultTokenSeconds)
		out.Spec.ExpirationSeconds = &secs
	}
	out.Name, out.Namespace = sa.Name, sa.Namespace
	out.CreationTimestamp = metav1.NewTime(now)
	out.Status = authenticationv1.TokenRequestStatus{}
	if errs := validateTokenRequest(out); len(errs) > 0 {
		return nil, apierrors.NewInvalid(tokenRequestGVK.GroupKind(), "", errs)
	}

	treq := serviceaccount.Request{
		Namespace:      ns,
		ServiceAccount: serviceaccount.Ref{Name: sa.Name, UID: string(sa.UID)},
		Audiences:      out.Spec.Audiences,
		Expiration:     time.Duration(*out.Spec.ExpirationSeconds) * time.Second,
	}
	if ref := out.Spec.BoundObjectRef; ref != nil {
		if err := s.bindToken(ctx, ns, name, ref, &treq); err != nil {
			return nil, err
		}
	}
	tok, err := s.tokens.signer.Issue(serviceaccount.NewClaims(s.tokens.issuer, treq, now, uuid.NewString()))
	if err != nil {
		return nil, fmt.Errorf("failed to generate token: %w", err)
	}
	out.Status = authenticationv1.TokenRequestStatus{
		Token:               tok,
		ExpirationTimestamp: metav1.NewTime(now.Add(treq.Expiration)),
	}
	out.SetGroupVersionKind(tokenRequestGVK)
	return out, nil
}

// bindToken resolves a bound object reference into the token's claims.
func (s *Server) bindToken(ctx context.Context, ns, saName string, ref *authenticationv1.BoundObjectReference, treq *serviceaccount.Request) error {
	gvk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
	var uid types.UID
	switch {
	case gvk.Group == "" && gvk.Kind == "Pod":
		obj, err := s.getCore(ctx, "pods", ns, ref.Name)
		if err != nil {
			return err
		}
		pod := obj.(*corev1.Pod)
		if pod.Spec.ServiceAccountName != saName {
			return apierrors.NewBadRequest(fmt.Sprintf("cannot bind token for serviceaccount %q to pod running with different serviceaccount name.", saName))
		}
		uid = pod.UID
		treq.Pod = &serviceaccount.Ref{Name: pod.Name, UID: string(pod.UID)}
		if node := pod.Spec.NodeName; node != "" {
			// A node that is gone still leaves its name in the token, as
			// upstream does, so the token shows where the pod ran.
			treq.Node = &serviceaccount.Ref{Name: node}
			nobj, err := s.getCore(ctx, "nodes", "", node)
			switch {
			case apierrors.IsNotFound(err):
			case err != nil:
				return apierrors.NewInternalError(err)
			default:
				treq.Node.UID = string(nobj.(*corev1.Node).UID)
			}
		}
	case gvk.Group == "" && gvk.Kind == "Node":
		obj, err := s.getCore(ctx, "nodes", "", ref.Name)
		if err != nil {
			return err
		}
		node := obj.(*corev1.Node)
		uid = node.UID
		treq.Node = &serviceaccount.Ref{Name: node.Name, UID: string(node.UID)}
	case gvk.Group == "" && gvk.Kind == "Secret":
		obj, err := s.getCore(ctx, "secrets", ns, ref.Name)
		if err != nil {
			return err
		}
		secret := obj.(*corev1.Secret)
		uid = secret.UID
		treq.Secret = &serviceaccount.Ref{Name: secret.Name, UID: string(secret.UID)}
	default:
		return apierrors.NewBadRequest(fmt.Sprintf("cannot bind token to object of type %s", gvk.String()))
	}
	if ref.UID != "" && ref.UID != uid {
		return apierrors.NewConflict(schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}, ref.Name,
			fmt.Errorf("the UID in the bound object reference (%s) does not match the UID in record. The object might have been deleted and then recreated", ref.UID))
	}
	return nil
}

// getCore reads a core/v1 object through the cache, falling back to etcd
// (an object created a moment ago may not be cached yet).
func (s *Server) getCore(ctx context.Context, resource, ns, name string) (runtime.Object, error) {
	return objects{s}.Get(ctx, corev1.SchemeGroupVersion.WithResource(resource), ns, name)
}

// nodeMayRequestToken is NodeRestriction's rule for token requests: a
// node's identity gets tokens only bound to a pod that runs on it, so
// that a node cannot mint lasting credentials for accounts its pods use.
func (s *Server) nodeMayRequestToken(ctx context.Context, ns, name string, req *authenticationv1.TokenRequest) error {
	u, _ := UserFrom(ctx)
	node, isNode := authnode.Identity(u.Info())
	if !isNode {
		return nil
	}
	gr := corev1.Resource("serviceaccounts")
	ref := req.Spec.BoundObjectRef
	if ref == nil || ref.Kind != "Pod" {
		return apierrors.NewForbidden(gr, name, errors.New("node requested token not bound to a pod"))
	}
	obj, err := s.getCore(ctx, "pods", ns, ref.Name)
	if err != nil {
		return apierrors.NewForbidden(gr, name, fmt.Errorf("node requested token bound to a pod that could not be read: %v", err))
	}
	if pod := obj.(*corev1.Pod); pod.Spec.NodeName != node {
		return apierrors.NewForbidden(gr, name, errors.New("node requested token bound to a pod scheduled on a different node"))
	}
	return nil
}
