package admissionregistration

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
)

// MutatingAdmissionPolicyBindings is the mutatingadmissionpolicybindings
// resource.
var MutatingAdmissionPolicyBindings = &registry.Resource{
	Group: admissionregistrationv1.GroupName, Version: "v1", Name: "mutatingadmissionpolicybindings",
	Singular: "mutatingadmissionpolicybinding", Kind: "MutatingAdmissionPolicyBinding",
	Categories:             []string{"api-extensions"},
	New:                    func() runtime.Object { return &admissionregistrationv1.MutatingAdmissionPolicyBinding{} },
	NewList:                func() runtime.Object { return &admissionregistrationv1.MutatingAdmissionPolicyBindingList{} },
	TracksGeneration:       true,
	Default:                registry.Typed(defaultMutatingAdmissionPolicyBinding),
	Validate:               registry.TypedValidate(validateMutatingAdmissionPolicyBinding),
	ValidateUpdate:         registry.TypedValidateUpdate(validateMutatingAdmissionPolicyBindingUpdate),
	ValidateUpdateReplaces: true,
	Table:                  mutatingadmissionpolicybindingTable,
}

func defaultMutatingAdmissionPolicyBinding(obj *admissionregistrationv1.MutatingAdmissionPolicyBinding) {
	defaultMatchResources(obj.Spec.MatchResources)
}

func validateMutatingAdmissionPolicyBinding(obj *admissionregistrationv1.MutatingAdmissionPolicyBinding) field.ErrorList {
	return dedupe(append(validateMutatingAdmissionPolicyBindingSpec(&obj.Spec, field.NewPath("spec")), validateStaticSuffix(obj.Name)...))
}

// validateMutatingAdmissionPolicyBindingUpdate replaces Validate on
// updates only to leave out the create-only name rule: nothing ratchets.
func validateMutatingAdmissionPolicyBindingUpdate(obj, _ *admissionregistrationv1.MutatingAdmissionPolicyBinding) field.ErrorList {
	return dedupe(validateMutatingAdmissionPolicyBindingSpec(&obj.Spec, field.NewPath("spec")))
}

func validateMutatingAdmissionPolicyBindingSpec(spec *admissionregistrationv1.MutatingAdmissionPolicyBindingSpec, fldPath *field.Path) field.ErrorList {
	allErrors := validatePolicyName(spec.PolicyName, fldPath.Child("policyName"))
	allErrors = append(allErrors, validateParamRef(spec.ParamRef, fldPath.Child("paramRef"))...)
	allErrors = append(allErrors, validateMatchResources(spec.MatchResources, fldPath.Child("matchResources"))...)
	if spec.MatchResources != nil {
		allErrors = append(allErrors, validateMutatingOperations(spec.MatchResources, fldPath.Child("matchResources", "resourceRules", "operations"))...)
	}
	return allErrors
}
