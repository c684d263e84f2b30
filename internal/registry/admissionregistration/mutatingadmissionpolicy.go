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

// MutatingAdmissionPolicies is the mutatingadmissionpolicies resource.
var MutatingAdmissionPolicies = &registry.Resource{
	Group: admissionregistrationv1.GroupName, Version: "v1", Name: "mutatingadmissionpolicies",
	Singular: "mutatingadmissionpolicy", Kind: "MutatingAdmissionPolicy",
	Categories:             []string{"api-extensions"},
	New:                    func() runtime.Object { return &admissionregistrationv1.MutatingAdmissionPolicy{} },
	NewList:                func() runtime.Object { return &admissionregistrationv1.MutatingAdmissionPolicyList{} },
	TracksGeneration:       true,
	Default:                registry.Typed(defaultMutatingAdmissionPolicy),
	Validate:               registry.TypedValidate(validateMutatingAdmissionPolicy),
	ValidateUpdate:         registry.TypedValidateUpdate(validateMutatingAdmissionPolicyUpdate),
	ValidateUpdateReplaces: true,
	Table:                  mutatingadmissionpolicyTable,
}

func defaultMutatingAdmissionPolicy(obj *admissionregistrationv1.MutatingAdmissionPolicy) {
	defaultPolicyFailurePolicy(&obj.Spec.FailurePolicy)
	defaultMatchResources(obj.Spec.MatchConstraints)
}

func validateMutatingAdmissionPolicy(obj *admissionregistrationv1.MutatingAdmissionPolicy) field.ErrorList {
	errs := validateMutatingAdmissionPolicySpec(&obj.Spec, validationOptions{}, field.NewPath("spec"))
	return dedupe(append(errs, validateStaticSuffix(obj.Name)...))
}

// validateMutatingAdmissionPolicyUpdate replaces Validate on updates, as
// validateValidatingAdmissionPolicyUpdate does.
func validateMutatingAdmissionPolicyUpdate(obj, old *admissionregistrationv1.MutatingAdmissionPolicy) field.ErrorList {
	pre := preexistingExpressions{
		matchConditions:     matchConditionExpressions(old.Spec.MatchConditions),
		applyConfigurations: sets.New[string](),
	}
	for _, m := range old.Spec.Mutations {
		if m.ApplyConfiguration != nil {
			pre.applyConfigurations.Insert(m.ApplyConfiguration.Expression)
		}
	}
	opts := validationOptions{
		ignoreMatchConditions: apiequality.Semantic.DeepEqual(obj.Spec.ParamKind, old.Spec.ParamKind) &&
			apiequality.Semantic.DeepEqual(obj.Spec.MatchConditions, old.Spec.MatchConditions),
		preexisting: pre,
	}
	return dedupe(validateMutatingAdmissionPolicySpec(&obj.Spec, opts, field.NewPath("spec")))
}

func validateMutatingAdmissionPolicySpec(spec *admissionregistrationv1.MutatingAdmissionPolicySpec, opts validationOptions, fldPath *field.Path) field.ErrorList {
	var allErrors field.ErrorList
	compiler := createCompiler(true)
	allErrors = append(allErrors, validatePolicyFailurePolicy(spec.FailurePolicy, fldPath.Child("failurePolicy"))...)
	if spec.ParamKind != nil {
		opts.allowParamsInMatchConditions = true
		allErrors = append(allErrors, validateParamKind(*spec.ParamKind, fldPath.Child("paramKind"))...)
	}
	if spec.MatchConstraints == nil {
		allErrors = append(allErrors, field.Required(fldPath.Child("matchConstraints"), ""))
	} else {
		allErrors = append(allErrors, validateMatchResources(spec.MatchConstraints, fldPath.Child("matchConstraints"))...)
		// The resource rules give the expressions the type of the object.
		if len(spec.MatchConstraints.ResourceRules) == 0 {
			allErrors = append(allErrors, field.Required(fldPath.Child("matchConstraints", "resourceRules"), ""))
		}
		allErrors = append(allErrors, validateMutatingOperations(spec.MatchConstraints, fldPath.Child("matchConstraints", "resourceRules", "operations"))...)
	}
	if !opts.ignoreMatchConditions {
		allErrors = append(allErrors, validateMatchConditions(spec.MatchConditions, opts, fldPath.Child("matchConditions"))...)
	}
	for i := range spec.Variables {
		allErrors = append(allErrors, validateVariable(compiler, &spec.Variables[i], spec.ParamKind, opts, fldPath.Child("variables").Index(i))...)
	}
	if len(spec.Mutations) == 0 {
		allErrors = append(allErrors, field.Required(fldPath.Child("mutations"), "mutations must contain at least one item"))
	} else {
		for i := range spec.Mutations {
			allErrors = append(allErrors, validateMutation(compiler, &spec.Mutations[i], spec.ParamKind, opts, fldPath.Child("mutations").Index(i))...)
		}
	}
	if len(spec.ReinvocationPolicy) == 0 {
		allErrors = append(allErrors, field.Required(fldPath.Child("reinvocationPolicy"), ""))
	} else if !slices.Contains(supportedReinvocationPolicies, string(spec.ReinvocationPolicy)) {
		allErrors = append(allErrors, field.NotSupported(fldPath.Child("reinvocationPolicy"), spec.ReinvocationPolicy, supportedReinvocationPolicies))
	}
	return allErrors
}
