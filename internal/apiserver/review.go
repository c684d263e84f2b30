package apiserver

import (
	"context"
	"fmt"
	"net/http"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// serveReview answers the create of a review (a CreateOnly resource): the
// request's object comes back with the server's verdict, and nothing is
// stored. As upstream, the output format is settled before the body is
// read, so asking only for a Table, which a review has no form of, is 406
// whatever the body.
func (s *Server) serveReview(w http.ResponseWriter, r *http.Request, res *resource, ri requestInfo) {
	if ri.Verb != "create" || ri.Name != "" || ri.Subresource != "" {
		s.writeError(w, r, apierrors.NewMethodNotSupported(res.GroupResource(), ri.Verb))
		return
	}
	out, err := negotiate(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var warn warnings
	obj, _, err := s.readObject(r, res, &warn)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if res.Validate != nil {
		if errs := res.Validate(obj); len(errs) > 0 {
			s.writeError(w, r, apierrors.NewInvalid(res.GroupVersionKind().GroupKind(), "", errs))
			return
		}
	}
	if err := s.review(r.Context(), obj); err != nil {
		s.writeError(w, r, err)
		return
	}
	warn.write(w)
	s.encode(w, http.StatusCreated, out.mediaType, withKind(obj, res))
}

// review fills in a review's verdict: what the server's authorizer says
// about the request it describes, made by the user asking.
func (s *Server) review(ctx context.Context, obj runtime.Object) error {
	u, _ := UserFrom(ctx)
	switch o := obj.(type) {
	case *authorizationv1.SelfSubjectAccessReview:
		a := authorizer.AttributesRecord{User: u.Info()}
		if ra := o.Spec.ResourceAttributes; ra != nil {
			a.ResourceRequest = true
			a.Verb, a.Namespace, a.Name = ra.Verb, ra.Namespace, ra.Name
			a.APIGroup, a.Resource, a.Subresource = ra.Group, ra.Resource, ra.Subresource
			// A review without a version asks about every version.
			a.APIVersion = ra.Version
			if a.APIVersion == "" {
				a.APIVersion = "*"
			}
		} else {
			nra := o.Spec.NonResourceAttributes
			a.Verb, a.Path = nra.Verb, nra.Path
		}
		decision, reason, err := s.Authorize(ctx, a)
		o.Status = authorizationv1.SubjectAccessReviewStatus{
			Allowed: decision == authorizer.DecisionAllow,
			Denied:  decision == authorizer.DecisionDeny,
			Reason:  reason,
		}
		if err != nil {
			o.Status.EvaluationError = err.Error()
		}
	case *authorizationv1.SubjectAccessReview:
		o.Status = s.accessReview(ctx, specUser(o.Spec), o.Spec)
	case *authorizationv1.LocalSubjectAccessReview:
		o.Status = s.accessReview(ctx, specUser(o.Spec), o.Spec)
	case *authorizationv1.SelfSubjectRulesReview:
		o.Status = s.rulesReview(ctx, u, o.Spec.Namespace)
	case *authenticationv1.SelfSubjectReview:
		o.ObjectMeta = metav1.ObjectMeta{CreationTimestamp: metav1.Now()}
		o.Status.UserInfo = subjectInfo(u)
	case *authenticationv1.TokenReview:
		return s.tokenReview(ctx, o)
	default:
		return apierrors.NewInternalError(fmt.Errorf("no review for %T", obj))
	}
	return nil
}

// specUser is the user a SubjectAccessReview asks about.
func specUser(spec authorizationv1.SubjectAccessReviewSpec) User {
	u := User{Name: spec.User, UID: spec.UID, Groups: spec.Groups}
	if len(spec.Extra) > 0 {
		u.Extra = map[string][]string{}
		for k, v := range spec.Extra {
			u.Extra[k] = v
		}
	}
	return u
}

// accessReview is the verdict on spec's request made by u.
func (s *Server) accessReview(ctx context.Context, u User, spec authorizationv1.SubjectAccessReviewSpec) authorizationv1.SubjectAccessReviewStatus {
	a := authorizer.AttributesRecord{User: u.Info()}
	if ra := spec.ResourceAttributes; ra != nil {
		a.ResourceRequest = true
		a.Verb, a.Namespace, a.Name = ra.Verb, ra.Namespace, ra.Name
		a.APIGroup, a.APIVersion, a.Resource, a.Subresource = ra.Group, ra.Version, ra.Resource, ra.Subresource
		if a.APIVersion == "" {
			a.APIVersion = "*"
		}
	} else if nra := spec.NonResourceAttributes; nra != nil {
		a.Verb, a.Path = nra.Verb, nra.Path
	}
	decision, reason, err := s.Authorize(ctx, a)
	st := authorizationv1.SubjectAccessReviewStatus{
		Allowed: decision == authorizer.DecisionAllow,
		Denied:  decision == authorizer.DecisionDeny,
		Reason:  reason,
	}
	if err != nil {
		st.EvaluationError = err.Error()
	}
	return st
}

// rulesReview lists what u may do in namespace, as far as the rule
// resolver knows (RBAC): incomplete when other authorizers might allow
// more, as upstream says for the Node authorizer.
func (s *Server) rulesReview(ctx context.Context, u User, namespace string) authorizationv1.SubjectRulesReviewStatus {
	st := authorizationv1.SubjectRulesReviewStatus{ResourceRules: []authorizationv1.ResourceRule{}, NonResourceRules: []authorizationv1.NonResourceRule{}}
	if s.cfg.RuleResolver == nil {
		st.Incomplete = true
		return st
	}
	res, nonRes, incomplete, err := s.cfg.RuleResolver.RulesFor(ctx, u.Info(), namespace)
	for _, r := range res {
		st.ResourceRules = append(st.ResourceRules, authorizationv1.ResourceRule{Verbs: r.GetVerbs(), APIGroups: r.GetAPIGroups(), Resources: r.GetResources(), ResourceNames: r.GetResourceNames()})
	}
	for _, r := range nonRes {
		st.NonResourceRules = append(st.NonResourceRules, authorizationv1.NonResourceRule{Verbs: r.GetVerbs(), NonResourceURLs: r.GetNonResourceURLs()})
	}
	st.Incomplete = incomplete
	if err != nil {
		st.EvaluationError = err.Error()
	}
	return st
}

func subjectInfo(u User) authenticationv1.UserInfo {
	ui := authenticationv1.UserInfo{Username: u.Name, UID: u.UID, Groups: u.Groups}
	if len(u.Extra) > 0 {
		ui.Extra = map[string]authenticationv1.ExtraValue{}
		for k, v := range u.Extra {
			ui.Extra[k] = v
		}
	}
	return ui
}

// tokenReview checks a bearer token with the server's own authenticator,
// as a webhook authenticator or an aggregated server asks upstream's.
func (s *Server) tokenReview(ctx context.Context, tr *authenticationv1.TokenReview) error {
	if tr.Spec.Token == "" {
		return apierrors.NewBadRequest("token is required for TokenReview in authentication")
	}
	if s.tokens == nil {
		tr.Status = authenticationv1.TokenReviewStatus{Error: "token authentication is not configured"}
		return nil
	}
	audiences := tr.Spec.Audiences
	if len(audiences) == 0 {
		audiences = s.tokens.audiences
	}
	a := &tokenAuthenticator{validator: s.tokens.validator, objects: coreObjects{s}, now: time.Now, log: s.log}
	a.validator.Audiences = audiences
	info, err := a.authenticate(ctx, tr.Spec.Token)
	if err != nil {
		tr.Status = authenticationv1.TokenReviewStatus{Error: "[invalid bearer token, " + err.Error() + "]"}
		return nil
	}
	u := User{Name: info.UserName(), UID: info.UID, Groups: append(info.Groups(), AllAuthenticated), Extra: tokenExtra(info)}
	tr.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: subjectInfo(u), Audiences: audiences}
	return nil
}
