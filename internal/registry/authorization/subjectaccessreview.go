package authorization

import (
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
)

// Subjectaccessreviews is the subjectaccessreviews resource: "may this
// user do this?", asked by whoever may create the review (webhooks,
// aggregated servers, kubectl auth can-i --as through impersonation).
var Subjectaccessreviews = &registry.Resource{
	Group: "authorization.k8s.io", Version: "v1", Name: "subjectaccessreviews",
	Singular: "subjectaccessreview", Kind: "SubjectAccessReview",
	CreateOnly: true,
	New:        func() runtime.Object { return &authorizationv1.SubjectAccessReview{} },
	Validate:   registry.TypedValidate(validateSubjectAccessReview),
}

// Localsubjectaccessreviews is the namespaced form, which a namespace's
// admin may be granted without cluster-wide rights.
var Localsubjectaccessreviews = &registry.Resource{
	Group: "authorization.k8s.io", Version: "v1", Name: "localsubjectaccessreviews",
	Singular: "localsubjectaccessreview", Kind: "LocalSubjectAccessReview",
	Namespaced: true, CreateOnly: true,
	New:      func() runtime.Object { return &authorizationv1.LocalSubjectAccessReview{} },
	Validate: registry.TypedValidate(validateLocalSubjectAccessReview),
}

// Selfsubjectrulesreviews is the selfsubjectrulesreviews resource: "what
// may I do in this namespace?" (kubectl auth can-i --list).
var Selfsubjectrulesreviews = &registry.Resource{
	Group: "authorization.k8s.io", Version: "v1", Name: "selfsubjectrulesreviews",
	Singular: "selfsubjectrulesreview", Kind: "SelfSubjectRulesReview",
	CreateOnly: true,
	New:        func() runtime.Object { return &authorizationv1.SelfSubjectRulesReview{} },
	Validate:   registry.TypedValidate(validateSelfSubjectRulesReview),
}

func validateSubjectAccessReview(sar *authorizationv1.SubjectAccessReview) field.ErrorList {
	allErrs := validateSARSpec(sar.Spec, field.NewPath("spec"))
	if !equality.Semantic.DeepEqual(metav1.ObjectMeta{}, sar.ObjectMeta) {
		allErrs = append(allErrs, field.Invalid(field.NewPath("metadata"), sar.ObjectMeta, "must be empty"))
	}
	return allErrs
}

func validateLocalSubjectAccessReview(sar *authorizationv1.LocalSubjectAccessReview) field.ErrorList {
	spec := field.NewPath("spec")
	allErrs := validateSARSpec(sar.Spec, spec)
	meta := sar.ObjectMeta.DeepCopy()
	meta.Namespace = ""
	if !equality.Semantic.DeepEqual(metav1.ObjectMeta{}, *meta) {
		allErrs = append(allErrs, field.Invalid(field.NewPath("metadata"), sar.ObjectMeta, "must be empty except for namespace"))
	}
	if sar.Spec.ResourceAttributes != nil && sar.Spec.ResourceAttributes.Namespace != sar.Namespace {
		allErrs = append(allErrs, field.Invalid(spec.Child("resourceAttributes", "namespace"), sar.Spec.ResourceAttributes.Namespace, "must match metadata.namespace"))
	}
	if sar.Spec.NonResourceAttributes != nil {
		allErrs = append(allErrs, field.Invalid(spec.Child("nonResourceAttributes"), sar.Spec.NonResourceAttributes, "disallowed on this kind of request"))
	}
	return allErrs
}

func validateSARSpec(spec authorizationv1.SubjectAccessReviewSpec, path *field.Path) field.ErrorList {
	allErrs := validateAttributes(spec.ResourceAttributes, spec.NonResourceAttributes, path)
	if spec.User == "" && len(spec.Groups) == 0 {
		allErrs = append(allErrs, field.Invalid(path.Child("user"), spec.User, "at least one of user or group must be specified"))
	}
	return allErrs
}

func validateSelfSubjectRulesReview(r *authorizationv1.SelfSubjectRulesReview) field.ErrorList {
	if !equality.Semantic.DeepEqual(metav1.ObjectMeta{}, r.ObjectMeta) {
		return field.ErrorList{field.Invalid(field.NewPath("metadata"), r.ObjectMeta, "must be empty")}
	}
	return nil
}

// validateAttributes: every access review asks about exactly one kind of
// request, a resource or a non-resource one.
func validateAttributes(res *authorizationv1.ResourceAttributes, nonRes *authorizationv1.NonResourceAttributes, path *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if res != nil && nonRes != nil {
		allErrs = append(allErrs, field.Invalid(path.Child("nonResourceAttributes"), nonRes, "cannot be specified in combination with resourceAttributes"))
	}
	if res == nil && nonRes == nil {
		allErrs = append(allErrs, field.Invalid(path.Child("resourceAttributes"), nonRes, "exactly one of nonResourceAttributes or resourceAttributes must be specified"))
	}
	return allErrs
}
