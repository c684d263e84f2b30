// Package authentication defines authentication.k8s.io/v1's reviews:
// TokenReview (is this token valid, and whose is it?) and
// SelfSubjectReview (who am I? — kubectl auth whoami). The verdict is the
// API server's, which holds the authenticators.
package authentication

import (
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
)

// Tokenreviews is the tokenreviews resource.
var Tokenreviews = &registry.Resource{
	Group: "authentication.k8s.io", Version: "v1", Name: "tokenreviews",
	Singular: "tokenreview", Kind: "TokenReview",
	CreateOnly: true,
	New:        func() runtime.Object { return &authenticationv1.TokenReview{} },
	Validate: registry.TypedValidate(func(r *authenticationv1.TokenReview) field.ErrorList {
		return emptyMeta(r.ObjectMeta)
	}),
}

// Selfsubjectreviews is the selfsubjectreviews resource.
var Selfsubjectreviews = &registry.Resource{
	Group: "authentication.k8s.io", Version: "v1", Name: "selfsubjectreviews",
	Singular: "selfsubjectreview", Kind: "SelfSubjectReview",
	CreateOnly: true,
	New:        func() runtime.Object { return &authenticationv1.SelfSubjectReview{} },
}

func emptyMeta(m metav1.ObjectMeta) field.ErrorList {
	if !equality.Semantic.DeepEqual(metav1.ObjectMeta{}, m) {
		return field.ErrorList{field.Invalid(field.NewPath("metadata"), m, "must be empty")}
	}
	return nil
}
