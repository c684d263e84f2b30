package resource

import (
	resourcev1 "k8s.io/api/resource/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/core"
)

// Resourceclaimtemplates is the resourceclaimtemplates resource: the claim
// each pod naming the template gets its own copy of.
var Resourceclaimtemplates = &registry.Resource{
	Group: "resource.k8s.io", Version: "v1", Name: "resourceclaimtemplates", Singular: "resourceclaimtemplate", Kind: "ResourceClaimTemplate",
	Namespaced:       true,
	New:              func() runtime.Object { return &resourcev1.ResourceClaimTemplate{} },
	NewList:          func() runtime.Object { return &resourcev1.ResourceClaimTemplateList{} },
	Default:          registry.Typed(func(t *resourcev1.ResourceClaimTemplate) { defaultClaimSpec(&t.Spec.Spec) }),
	PrepareForCreate: registry.Typed(func(t *resourcev1.ResourceClaimTemplate) { dropDisabledClaimSpecFields(&t.Spec.Spec, nil) }),
	PrepareForUpdate: registry.Typed2(func(t, old *resourcev1.ResourceClaimTemplate) {
		dropDisabledClaimSpecFields(&t.Spec.Spec, &old.Spec.Spec)
	}),
	Validate:       registry.TypedValidate(validateResourceClaimTemplate),
	ValidateUpdate: registry.TypedValidateUpdate(validateResourceClaimTemplateUpdate),
	Table:          ageTable,
}

// validateResourceClaimTemplate checks the claim metadata it stamps out
// (upstream's template metadata rules: labels and annotations) and the
// claim spec.
func validateResourceClaimTemplate(t *resourcev1.ResourceClaimTemplate) field.ErrorList {
	p := field.NewPath("spec")
	allErrs := core.ValidateTemplateObjectMeta(&t.Spec.ObjectMeta, p.Child("metadata"))
	return append(allErrs, validateClaimSpec(&t.Spec.Spec, p.Child("spec"))...)
}

// Claims already made from a template keep what it said then; changing
// it would make later claims differ.
func validateResourceClaimTemplateUpdate(t, old *resourcev1.ResourceClaimTemplate) field.ErrorList {
	return apivalidation.ValidateImmutableField(t.Spec, old.Spec, field.NewPath("spec"))
}
