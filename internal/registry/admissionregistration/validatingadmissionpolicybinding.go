package admissionregistration

import (
	"slices"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
)

// ValidatingAdmissionPolicyBindings is the validatingadmissionpolicybindings
// resource.
var ValidatingAdmissionPolicyBindings = &registry.Resource{
	Group: admissionregistrationv1.GroupName, Version: "v1", Name: "validatingadmissionpolicybindings",
	Singular: "validatingadmissionpolicybinding", Kind: "ValidatingAdmissionPolicyBinding",
	Categories:             []string{"api-extensions"},
	New:                    func() runtime.Object { return &admissionregistrationv1.ValidatingAdmissionPolicyBinding{} },
	NewList:                func() runtime.Object { return &admissionregistrationv1.ValidatingAdmissionPolicyBindingList{} },
	TracksGeneration:       true,
	Default:                registry.Typed(defaultValidatingAdmissionPolicyBinding),
	Validate:               registry.TypedValidate(validateValidatingAdmissionPolicyBinding),
	ValidateUpdate:         registry.TypedValidateUpdate(validateValidatingAdmissionPolicyBindingUpdate),
	ValidateUpdateReplaces: true,
	Table:                  validatingadmissionpolicybindingTable,
}

func defaultValidatingAdmissionPolicyBinding(obj *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	defaultMatchResources(obj.Spec.MatchResources)
}

func validateValidatingAdmissionPolicyBinding(obj *admissionregistrationv1.ValidatingAdmissionPolicyBinding) field.ErrorList {
	errs := validateValidatingAdmissionPolicyBindingSpec(&obj.Spec, field.NewPath("spec"))
	errs = append(errs, validateStaticSuffix(obj.Name)...)
	return withDeclarativeBindingRules(errs, obj, nil)
}

// validateValidatingAdmissionPolicyBindingUpdate replaces Validate on
// updates; only the declaratively stated rules look at the old object.
func validateValidatingAdmissionPolicyBindingUpdate(obj, old *admissionregistrationv1.ValidatingAdmissionPolicyBinding) field.ErrorList {
	return withDeclarativeBindingRules(validateValidatingAdmissionPolicyBindingSpec(&obj.Spec, field.NewPath("spec")), obj, old)
}

func validateValidatingAdmissionPolicyBindingSpec(spec *admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec, fldPath *field.Path) field.ErrorList {
	var allErrors field.ErrorList
	for _, err := range validatePolicyName(spec.PolicyName, fldPath.Child("policyName")) {
		if err.Type == field.ErrorTypeRequired {
			err = err.MarkCoveredByDeclarative()
		}
		allErrors = append(allErrors, err)
	}
	allErrors = append(allErrors, validateParamRef(spec.ParamRef, fldPath.Child("paramRef"))...)
	allErrors = append(allErrors, validateMatchResources(spec.MatchResources, fldPath.Child("matchResources"))...)
	return append(allErrors, validateValidationActions(spec.ValidationActions, fldPath.Child("validationActions"))...)
}

func validateValidationActions(actions []admissionregistrationv1.ValidationAction, fldPath *field.Path) field.ErrorList {
	var allErrors field.ErrorList
	seen := sets.New[admissionregistrationv1.ValidationAction]()
	for i, action := range actions {
		if !slices.Contains(supportedValidationActions, string(action)) {
			allErrors = append(allErrors, field.NotSupported(fldPath.Index(i), action, supportedValidationActions))
		}
		if seen.Has(action) {
			allErrors = append(allErrors, field.Duplicate(fldPath.Index(i), action))
		}
		seen.Insert(action)
	}
	if seen.Has(admissionregistrationv1.Deny) && seen.Has(admissionregistrationv1.Warn) {
		allErrors = append(allErrors, field.Invalid(fldPath, actions, "must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)"))
	}
	if seen.Len() == 0 {
		allErrors = append(allErrors, field.Required(fldPath, "at least one validation action is required").MarkCoveredByDeclarative())
	}
	return allErrors
}

// withDeclarativeBindingRules applies the two rules k8s.io/api states as
// beta tags on the binding's spec (policyName and validationActions are
// required), as upstream enforces them by default since 1.36
// (DeclarativeValidationBeta): their errors come last, without detail, and
// replace the handwritten errors they cover. On an update they are
// checked only for a changed field, so a stored binding that already
// lacks one gets the handwritten error instead. As upstream's, the pass
// drops repeated handwritten errors, but not declarative ones.
func withDeclarativeBindingRules(errs field.ErrorList, obj, old *admissionregistrationv1.ValidatingAdmissionPolicyBinding) field.ErrorList {
	specPath := field.NewPath("spec")
	var declarative field.ErrorList
	if old == nil || !apiequality.Semantic.DeepEqual(obj.Spec, old.Spec) {
		if obj.Spec.PolicyName == "" && (old == nil || old.Spec.PolicyName != "") {
			declarative = append(declarative, field.Required(specPath.Child("policyName"), ""))
		}
		if len(obj.Spec.ValidationActions) == 0 && (old == nil || !apiequality.Semantic.DeepEqual(obj.Spec.ValidationActions, old.Spec.ValidationActions)) {
			declarative = append(declarative, field.Required(specPath.Child("validationActions"), ""))
		}
	}
	errs = dedupe(errs)
	if len(declarative) == 0 {
		return errs
	}
	kept := errs[:0:0]
	for _, e := range errs {
		covered := e.CoveredByDeclarative && slices.ContainsFunc(declarative, func(d *field.Error) bool {
			return d.Type == e.Type && d.Field == e.Field && d.Origin == e.Origin
		})
		if !covered {
			kept = append(kept, e)
		}
	}
	return append(kept, declarative...)
}
