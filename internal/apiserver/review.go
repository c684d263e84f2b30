package apiserver

import (
	"context"
	"fmt"
	"net/http"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
	default:
		return apierrors.NewInternalError(fmt.Errorf("no review for %T", obj))
	}
	return nil
}
