package authorization

import (
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry/registrytest"
)

func TestValidateSelfSubjectAccessReview(t *testing.T) {
	res := &authorizationv1.ResourceAttributes{Verb: "get", Resource: "pods"}
	nonRes := &authorizationv1.NonResourceAttributes{Path: "/", Verb: "get"}
	cases := []struct {
		name string
		sar  authorizationv1.SelfSubjectAccessReview
		want []registrytest.WantErr
	}{
		{"resource", authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: res}}, nil},
		{"non-resource", authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{NonResourceAttributes: nonRes}}, nil},
		{"both", authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: res, NonResourceAttributes: nonRes}},
			[]registrytest.WantErr{{Type: field.ErrorTypeInvalid, Field: "spec.nonResourceAttributes", Detail: "cannot be specified in combination with resourceAttributes"}}},
		{"neither", authorizationv1.SelfSubjectAccessReview{},
			[]registrytest.WantErr{{Type: field.ErrorTypeInvalid, Field: "spec.resourceAttributes", Detail: "exactly one of nonResourceAttributes or resourceAttributes must be specified"}}},
		{"named", authorizationv1.SelfSubjectAccessReview{ObjectMeta: metav1.ObjectMeta{Name: "x"}, Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: res}},
			[]registrytest.WantErr{{Type: field.ErrorTypeInvalid, Field: "metadata", Detail: "must be empty"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			registrytest.CheckErrs(t, validateSelfSubjectAccessReview(&c.sar), c.want)
		})
	}
}
