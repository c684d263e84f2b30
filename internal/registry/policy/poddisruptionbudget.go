package policy

import (
	policyv1 "k8s.io/api/policy/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/apps"
)

// Poddisruptionbudgets is the poddisruptionbudgets resource. Its spec is
// mutable (since policy/v1); every spec change is a new generation, which
// the eviction subresource compares with status.observedGeneration before
// trusting the status.
var Poddisruptionbudgets = &registry.Resource{
	Group: "policy", Version: "v1", Name: "poddisruptionbudgets", Singular: "poddisruptionbudget", Kind: "PodDisruptionBudget",
	Namespaced:           true,
	ShortNames:           []string{"pdb"},
	New:                  func() runtime.Object { return &policyv1.PodDisruptionBudget{} },
	NewList:              func() runtime.Object { return &policyv1.PodDisruptionBudgetList{} },
	Status:               true,
	TracksGeneration:     true,
	Validate:             registry.TypedValidate(validatePodDisruptionBudget),
	ValidateStatusUpdate: registry.TypedValidateUpdate(validatePodDisruptionBudgetStatusUpdate),
	Table:                poddisruptionbudgetTable,
}

var supportedUnhealthyPodEvictionPolicies = []string{string(policyv1.AlwaysAllow), string(policyv1.IfHealthyBudget)}

func validatePodDisruptionBudget(pdb *policyv1.PodDisruptionBudget) field.ErrorList {
	return validateSpec(pdb.Spec, field.NewPath("spec"))
}

func validateSpec(spec policyv1.PodDisruptionBudgetSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if spec.MinAvailable != nil && spec.MaxUnavailable != nil {
		allErrs = append(allErrs, field.Invalid(fldPath, spec, "minAvailable and maxUnavailable cannot be both set"))
	}
	if spec.MinAvailable != nil {
		allErrs = append(allErrs, apps.ValidatePositiveIntOrPercent(*spec.MinAvailable, fldPath.Child("minAvailable"))...)
		allErrs = append(allErrs, apps.ValidateNotMoreThan100Percent(*spec.MinAvailable, fldPath.Child("minAvailable"))...)
	}
	if spec.MaxUnavailable != nil {
		allErrs = append(allErrs, apps.ValidatePositiveIntOrPercent(*spec.MaxUnavailable, fldPath.Child("maxUnavailable"))...)
		allErrs = append(allErrs, apps.ValidateNotMoreThan100Percent(*spec.MaxUnavailable, fldPath.Child("maxUnavailable"))...)
	}
	allErrs = append(allErrs, metav1validation.ValidateLabelSelector(spec.Selector, metav1validation.LabelSelectorValidationOptions{}, fldPath.Child("selector"))...)
	if p := spec.UnhealthyPodEvictionPolicy; p != nil {
		switch *p {
		case policyv1.AlwaysAllow, policyv1.IfHealthyBudget:
		default:
			allErrs = append(allErrs, field.NotSupported(fldPath.Child("unhealthyPodEvictionPolicy"), *p, supportedUnhealthyPodEvictionPolicies))
		}
	}
	return allErrs
}

// validatePodDisruptionBudgetStatusUpdate is upstream's rule for what the
// disruption controller and the eviction subresource write: well-formed
// conditions and no negative counts.
func validatePodDisruptionBudgetStatusUpdate(pdb, _ *policyv1.PodDisruptionBudget) field.ErrorList {
	fldPath := field.NewPath("status")
	s := pdb.Status
	allErrs := metav1validation.ValidateConditions(s.Conditions, fldPath.Child("conditions"))
	allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(int64(s.DisruptionsAllowed), fldPath.Child("disruptionsAllowed"))...)
	allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(int64(s.CurrentHealthy), fldPath.Child("currentHealthy"))...)
	allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(int64(s.DesiredHealthy), fldPath.Child("desiredHealthy"))...)
	allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(int64(s.ExpectedPods), fldPath.Child("expectedPods"))...)
	return allErrs
}
