package apps

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Upstream validates the internal types, where optional counts are plain
// integers filled in by defaulting; these read the v1 pointers the same way.
func int32Value(p *int32, def int32) int32 {
	if p == nil {
		return def
	}
	return *p
}

func intOrStringValue(p *intstr.IntOrString) intstr.IntOrString {
	if p == nil {
		return intstr.FromInt32(0)
	}
	return *p
}

func validateNonnegative(value int64, fldPath *field.Path) field.ErrorList {
	return apimachineryvalidation.ValidateNonnegativeField(value, fldPath)
}

// validateControllerSelector applies the selector rules shared by
// Deployments, ReplicaSets and StatefulSets. It returns the parsed selector
// (nil when it does not parse) so the caller can check the template labels.
func validateControllerSelector(sel *metav1.LabelSelector, kind, parseDetail string, fldPath *field.Path) (labels.Selector, field.ErrorList) {
	var allErrs field.ErrorList
	if sel == nil {
		allErrs = append(allErrs, field.Required(fldPath, ""))
	} else {
		// Strict: these selectors always had to parse, so there is no
		// stored object with an invalid value to stay compatible with.
		allErrs = append(allErrs, metav1validation.ValidateLabelSelector(sel, metav1validation.LabelSelectorValidationOptions{}, fldPath)...)
		if len(sel.MatchLabels)+len(sel.MatchExpressions) == 0 {
			allErrs = append(allErrs, field.Invalid(fldPath, sel, "empty selector is invalid for "+kind))
		}
	}
	// A nil selector converts to one that matches nothing, so a missing
	// selector also reports that the template labels do not match, as
	// upstream does.
	selector, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		allErrs = append(allErrs, field.Invalid(fldPath, sel, parseDetail))
		return nil, allErrs
	}
	return selector, allErrs
}

func validateTemplateMatchesSelector(selector labels.Selector, template *corev1.PodTemplateSpec, fldPath *field.Path) field.ErrorList {
	if selector == nil || selector.Empty() || selector.Matches(labels.Set(template.Labels)) {
		return nil
	}
	return field.ErrorList{field.Invalid(fldPath.Child("metadata", "labels"), template.Labels, "`selector` does not match template `labels`")}
}

// validateReplicatedPodTemplate checks a template whose pods a controller
// keeps running: they must always restart and may not have a deadline.
// kind names the controller in the deadline message; Deployments share
// the ReplicaSet wording upstream because they share the function.
func validateReplicatedPodTemplate(template *corev1.PodTemplateSpec, kind string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if template.Spec.RestartPolicy != corev1.RestartPolicyAlways {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("spec", "restartPolicy"), template.Spec.RestartPolicy, []corev1.RestartPolicy{corev1.RestartPolicyAlways}))
	}
	if template.Spec.ActiveDeadlineSeconds != nil {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("spec", "activeDeadlineSeconds"), fmt.Sprintf("activeDeadlineSeconds in %s is not Supported", kind)))
	}
	return allErrs
}

// validatePositiveIntOrPercent accepts a non-negative integer or a
// percentage string such as "25%".
func validatePositiveIntOrPercent(v intstr.IntOrString, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	switch v.Type {
	case intstr.String:
		for _, msg := range utilvalidation.IsValidPercent(v.StrVal) {
			allErrs = append(allErrs, field.Invalid(fldPath, v, msg))
		}
	case intstr.Int:
		allErrs = append(allErrs, validateNonnegative(int64(v.IntValue()), fldPath)...)
	default:
		allErrs = append(allErrs, field.Invalid(fldPath, v, "must be an integer or percentage (e.g '5%%')"))
	}
	return allErrs
}

func percentValue(v intstr.IntOrString) (int, bool) {
	if v.Type != intstr.String || len(utilvalidation.IsValidPercent(v.StrVal)) != 0 {
		return 0, false
	}
	n, _ := strconv.Atoi(strings.TrimSuffix(v.StrVal, "%"))
	return n, true
}

// intOrPercentValue is the number a rolling-update bound stands for,
// ignoring whether it is a percentage: only zero-ness matters to callers.
func intOrPercentValue(v intstr.IntOrString) int {
	if n, ok := percentValue(v); ok {
		return n
	}
	return v.IntValue()
}

func validateNotMoreThan100Percent(v intstr.IntOrString, fldPath *field.Path) field.ErrorList {
	n, ok := percentValue(v)
	if !ok || n <= 100 {
		return nil
	}
	return field.ErrorList{field.Invalid(fldPath, v, "must not be greater than 100%")}
}

// ValidatePositiveIntOrPercent is the int-or-percent rule of the rolling
// updates, which PodDisruptionBudgets share with upstream.
func ValidatePositiveIntOrPercent(v intstr.IntOrString, fldPath *field.Path) field.ErrorList {
	return validatePositiveIntOrPercent(v, fldPath)
}

// ValidateNotMoreThan100Percent refuses a percentage above 100%.
func ValidateNotMoreThan100Percent(v intstr.IntOrString, fldPath *field.Path) field.ErrorList {
	return validateNotMoreThan100Percent(v, fldPath)
}
