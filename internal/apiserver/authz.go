package apiserver

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/streaming/pkg/httpstream/wsstream"
)

// Authorizer decides whether the caller may do what a request asks; the
// first authorizer with an opinion wins (see AuthorizerChain).
type Authorizer = authorizer.UnconditionalAuthorizer

// AuthorizerChain asks each authorizer in turn, as upstream's union: the
// first Allow or Deny decides, NoOpinion passes on. Reasons of the
// authorizers without an opinion are joined for the 403 message.
type AuthorizerChain []Authorizer

// Authorize implements Authorizer.
func (c AuthorizerChain) Authorize(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	var reasons []string
	var errs []error
	for _, az := range c {
		d, reason, err := az.Authorize(ctx, a)
		if err != nil {
			errs = append(errs, err)
		}
		if reason != "" {
			reasons = append(reasons, reason)
		}
		switch d {
		case authorizer.DecisionAllow, authorizer.DecisionDeny:
			return d, reason, err
		}
	}
	if len(errs) > 0 {
		return authorizer.DecisionNoOpinion, strings.Join(reasons, "\n"), fmt.Errorf("%v", errs)
	}
	return authorizer.DecisionNoOpinion, strings.Join(reasons, "\n"), nil
}

// PrivilegedGroups allows every request of a member of one of its
// groups, before any other authorizer is asked (system:masters).
type PrivilegedGroups []string

// Authorize implements Authorizer.
func (p PrivilegedGroups) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if u := a.GetUser(); u != nil {
		for _, g := range u.GetGroups() {
			for _, want := range p {
				if g == want {
					return authorizer.DecisionAllow, "", nil
				}
			}
		}
	}
	return authorizer.DecisionNoOpinion, "", nil
}

// AlwaysAllow is upstream's --authorization-mode=AlwaysAllow.
type AlwaysAllow struct{}

// Authorize implements Authorizer.
func (AlwaysAllow) Authorize(context.Context, authorizer.Attributes) (authorizer.Decision, string, error) {
	return authorizer.DecisionAllow, "", nil
}

// AlwaysDeny is upstream's --authorization-mode=AlwaysDeny.
type AlwaysDeny struct{}

// Authorize implements Authorizer.
func (AlwaysDeny) Authorize(context.Context, authorizer.Attributes) (authorizer.Decision, string, error) {
	return authorizer.DecisionNoOpinion, "Everything is forbidden.", nil
}

// Anonymous is who a request without credentials is, as upstream's
// anonymous authenticator names it.
var Anonymous = User{Name: user.Anonymous, Groups: []string{user.AllUnauthenticated}}

// Info returns the user as upstream's user.Info.
func (u User) Info() user.Info {
	return &user.DefaultInfo{Name: u.Name, UID: u.UID, Groups: u.Groups, Extra: u.Extra}
}

// requestAttributes are the authorization attributes of a request, as
// upstream's request info factory computes them: the verb from the method
// (list/watch/get on GET, deletecollection on a DELETE of a collection), a
// list or watch of one object by metadata.name field selector names it,
// and a WebSocket GET of exec, attach or portforward needs create, as POST
// does.
func requestAttributes(r *http.Request, u User) authorizer.AttributesRecord {
	a := authorizer.AttributesRecord{User: u.Info(), Path: r.URL.Path}
	// The chain's first filter parsed the request already.
	st, parsed := stateOf(r.Context())
	if !parsed {
		st = &requestState{}
		st.info, st.resource = parseRequestInfo(r)
	}
	if !st.resource {
		a.Verb = strings.ToLower(r.Method)
		return a
	}
	ri := st.info
	a.ResourceRequest = true
	a.Verb, a.APIGroup, a.APIVersion = ri.Verb, ri.Group, ri.Version
	a.Resource, a.Subresource, a.Namespace, a.Name = ri.Resource, ri.Subresource, ri.Namespace, ri.Name
	if a.Verb == "list" || a.Verb == "watch" || a.Verb == "deletecollection" {
		q := r.URL.Query()
		if fs := q.Get("fieldSelector"); fs != "" {
			sel, err := fields.ParseSelector(fs)
			if err != nil {
				a.FieldSelectorParsingErr = err
			} else {
				a.FieldSelectorRequirements = sel.Requirements()
				if name, found := sel.RequiresExactMatch("metadata.name"); found && a.Name == "" && a.Verb != "deletecollection" {
					a.Name = name
				}
			}
		}
		if ls := q.Get("labelSelector"); ls != "" {
			a.LabelSelectorRequirements, a.LabelSelectorParsingErr = labels.ParseToRequirements(ls)
		}
	}
	if a.Verb == "get" && a.Resource == "pods" && wsstream.IsWebSocketRequest(r) {
		switch a.Subresource {
		case "exec", "attach", "portforward":
			a.Verb = "create"
		}
	}
	return a
}

// forbidden is upstream's 403 for an authorization refusal:
// `pods "x" is forbidden: User "u" cannot get resource "pods" in API
// group "" in the namespace "ns": reason`.
func forbidden(a authorizer.Attributes, reason string) error {
	msg := forbiddenMessage(a)
	if reason != "" {
		msg += ": " + reason
	}
	gr := schema.GroupResource{Group: a.GetAPIGroup(), Resource: a.GetResource()}
	return apierrors.NewForbidden(gr, a.GetName(), fmt.Errorf("%s", msg))
}

func forbiddenMessage(a authorizer.Attributes) string {
	name := ""
	if u := a.GetUser(); u != nil {
		name = u.GetName()
	}
	if !a.IsResourceRequest() {
		return fmt.Sprintf("User %q cannot %s path %q", name, a.GetVerb(), a.GetPath())
	}
	res := a.GetResource()
	if a.GetSubresource() != "" {
		res += "/" + a.GetSubresource()
	}
	if ns := a.GetNamespace(); ns != "" {
		return fmt.Sprintf("User %q cannot %s resource %q in API group %q in the namespace %q", name, a.GetVerb(), res, a.GetAPIGroup(), ns)
	}
	return fmt.Sprintf("User %q cannot %s resource %q in API group %q at the cluster scope", name, a.GetVerb(), res, a.GetAPIGroup())
}

// authorize asks the configured authorizer about a request; a nil
// authorizer allows everything (tests of the handler alone).
func (s *Server) authorize(r *http.Request, u User) error {
	if s.cfg.Authorizer == nil {
		return nil
	}
	a := requestAttributes(r, u)
	d, reason, err := s.cfg.Authorizer.Authorize(r.Context(), a)
	if d == authorizer.DecisionAllow {
		return nil
	}
	if err != nil {
		// Upstream answers 500 when an authorizer failed and nobody
		// allowed: the refusal might be wrong.
		s.log.Warn("authorization failed", "user", u.Name, "path", r.URL.Path, "err", err)
		return apierrors.NewInternalError(err)
	}
	return forbidden(a, reason)
}

// Authorize answers for the review APIs and admission: whether u may do
// what attrs says, with the reason.
func (s *Server) Authorize(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if s.cfg.Authorizer == nil {
		return authorizer.DecisionAllow, "", nil
	}
	return s.cfg.Authorizer.Authorize(ctx, a)
}
