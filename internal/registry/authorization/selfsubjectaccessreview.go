package authorization

import (
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
)

// Selfsubjectaccessreviews is the selfsubjectaccessreviews resource: "may
// I do this?" (kubectl auth can-i).
var Selfsubjectaccessreviews = &registry.Resource{
	Group: "authorization.k8s.io", Version: "v1", Name: "selfsubjectaccessreviews",
	Singular: "selfsubjectaccessreview", Kind: "SelfSubjectAccessReview",
	CreateOnly: true,
	New:        func() runtime.Object { return &authorizationv1.SelfSubjectAccessReview{} },
	Validate:   registry.TypedValidate(validateSelfSubjectAccessReview),
}

// validateSelfSubjectAccessReview is upstream's: a review has no identity
// of its own, and asks about exactly one kind of request.
func validateSelfSubjectAccessReview(sar *authorizationv1.SelfSubjectAccessReview) field.ErrorList {
	var allErrs field.ErrorList
	if !equality.Semantic.DeepEqual(metav1.ObjectMeta{}, sar.ObjectMeta) {
		allErrs = append(allErrs, field.Invalid(field.NewPath("metadata"), sar.ObjectMeta, "must be empty"))
	}
	return append(allErrs, validateAttributes(sar.Spec.ResourceAttributes, sar.Spec.NonResourceAttributes, field.NewPath("spec"))...)
}
