package apiserver

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

type impersonatorKey struct{}

// ImpersonatorFrom returns who really sent a request that impersonates
// another user, for audit.
func ImpersonatorFrom(ctx context.Context) (User, bool) {
	u, ok := ctx.Value(impersonatorKey{}).(User)
	return u, ok
}

// impersonate applies the Impersonate-* headers as upstream does: the
// caller needs the impersonate verb on each user (or service account),
// group, uid and extra value it asks for, and the request then runs as
// that user. It returns the user to continue as and whether the request
// impersonated anyone.
func (s *Server) impersonate(r *http.Request, caller User) (User, bool, error) {
	name := r.Header.Get(authenticationv1.ImpersonateUserHeader)
	groups := r.Header.Values(authenticationv1.ImpersonateGroupHeader)
	uid := r.Header.Get(authenticationv1.ImpersonateUIDHeader)
	extra := map[string][]string{}
	for h, vs := range r.Header {
		if !strings.HasPrefix(h, authenticationv1.ImpersonateUserExtraHeaderPrefix) {
			continue
		}
		key, err := url.PathUnescape(strings.ToLower(strings.TrimPrefix(h, authenticationv1.ImpersonateUserExtraHeaderPrefix)))
		if err != nil {
			return caller, false, apierrors.NewBadRequest(fmt.Sprintf("malformed extra key for impersonation request: %v", err))
		}
		extra[key] = append(extra[key], vs...)
	}
	if name == "" {
		if len(groups) > 0 || uid != "" || len(extra) > 0 {
			return caller, false, apierrors.NewBadRequest("requested impersonation without impersonating a user")
		}
		return caller, false, nil
	}
	checks := []authorizer.AttributesRecord{}
	target := User{Name: name}
	if ns, sa, err := serviceaccount.SplitUsername(name); err == nil {
		checks = append(checks, authorizer.AttributesRecord{Verb: "impersonate", Resource: "serviceaccounts", Namespace: ns, Name: sa, ResourceRequest: true})
		if len(groups) == 0 {
			// A service account's groups follow from its name.
			target.Groups = serviceaccount.MakeGroupNames(ns)
		}
	} else {
		checks = append(checks, authorizer.AttributesRecord{Verb: "impersonate", Resource: "users", Name: name, ResourceRequest: true})
	}
	for _, g := range groups {
		checks = append(checks, authorizer.AttributesRecord{Verb: "impersonate", Resource: "groups", Name: g, ResourceRequest: true})
		target.Groups = append(target.Groups, g)
	}
	if uid != "" {
		checks = append(checks, authorizer.AttributesRecord{Verb: "impersonate", APIGroup: authenticationv1.GroupName, Resource: "uids", Name: uid, ResourceRequest: true})
		target.UID = uid
	}
	for key, vs := range extra {
		for _, v := range vs {
			checks = append(checks, authorizer.AttributesRecord{Verb: "impersonate", APIGroup: authenticationv1.GroupName, Resource: "userextras", Subresource: key, Name: v, ResourceRequest: true})
		}
	}
	if len(extra) > 0 {
		target.Extra = extra
	}
	for _, a := range checks {
		a.User = caller.Info()
		if s.cfg.Authorizer == nil {
			break
		}
		d, reason, err := s.cfg.Authorizer.Authorize(r.Context(), a)
		if d == authorizer.DecisionAllow {
			continue
		}
		if err != nil {
			return caller, false, apierrors.NewInternalError(err)
		}
		msg := forbiddenMessage(a)
		if reason != "" {
			msg += ": " + reason
		}
		return caller, false, apierrors.NewForbidden(schema.GroupResource{Group: a.APIGroup, Resource: a.Resource}, a.Name, fmt.Errorf("%s", msg))
	}
	// As upstream: everyone but the anonymous user is authenticated.
	if name != user.Anonymous {
		has := false
		for _, g := range target.Groups {
			if g == user.AllAuthenticated {
				has = true
			}
		}
		if !has {
			target.Groups = append(target.Groups, user.AllAuthenticated)
		}
	}
	return target, true, nil
}
