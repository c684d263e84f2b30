package apps

import (
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilptr "k8s.io/utils/ptr"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/core"
)

// Daemonsets is the daemonsets resource.
var Daemonsets = &registry.Resource{
	Group: "apps", Version: "v1", Name: "daemonsets", Singular: "daemonset", Kind: "DaemonSet",
	Namespaced:       true,
	ShortNames:       []string{"ds"},
	Categories:       []string{"all"},
	Status:           true,
	TracksGeneration: true,
	New:              func() runtime.Object { return &appsv1.DaemonSet{} },
	NewList:          func() runtime.Object { return &appsv1.DaemonSetList{} },
	PrepareForCreate: registry.Typed(prepareDaemonSetForCreate),
	PrepareForUpdate: registry.Typed2(prepareDaemonSetForUpdate),
	Default:          registry.Typed(defaultDaemonSet),
	Validate:         registry.TypedValidate(validateDaemonSet),
	ValidateUpdate:   registry.TypedValidateUpdate(validateDaemonSetUpdate),
	Table:            daemonsetTable,
	Fields:           daemonsetFields,
}

// The template generation lives in an annotation in apps/v1 (upstream's
// internal type has it as spec.templateGeneration). The server owns it:
// it starts at 1 and moves only when the template changes, which older
// clients still use to tell template revisions apart.
func prepareDaemonSetForCreate(obj *appsv1.DaemonSet) {
	generation := templateGeneration(obj)
	if generation < 1 {
		generation = 1
	}
	setTemplateGeneration(obj, generation)
}

func prepareDaemonSetForUpdate(obj, old *appsv1.DaemonSet) {
	generation := templateGeneration(old)
	if !apiequality.Semantic.DeepEqual(obj.Spec.Template, old.Spec.Template) {
		generation++
	}
	setTemplateGeneration(obj, generation)
}

func templateGeneration(obj *appsv1.DaemonSet) int64 {
	n, err := strconv.ParseInt(obj.Annotations[appsv1.DeprecatedTemplateGeneration], 10, 64)
	if err != nil {
		return 0
	}
	return n
}

func setTemplateGeneration(obj *appsv1.DaemonSet, generation int64) {
	if obj.Annotations == nil {
		obj.Annotations = map[string]string{}
	}
	obj.Annotations[appsv1.DeprecatedTemplateGeneration] = strconv.FormatInt(generation, 10)
}

func defaultDaemonSet(obj *appsv1.DaemonSet) {
	strategy := &obj.Spec.UpdateStrategy
	if strategy.Type == "" {
		strategy.Type = appsv1.RollingUpdateDaemonSetStrategyType
	}
	if strategy.Type == appsv1.RollingUpdateDaemonSetStrategyType {
		if strategy.RollingUpdate == nil {
			strategy.RollingUpdate = &appsv1.RollingUpdateDaemonSet{}
		}
		if strategy.RollingUpdate.MaxUnavailable == nil {
			strategy.RollingUpdate.MaxUnavailable = utilptr.To(intstr.FromInt32(1))
		}
		if strategy.RollingUpdate.MaxSurge == nil {
			strategy.RollingUpdate.MaxSurge = utilptr.To(intstr.FromInt32(0))
		}
	}
	if obj.Spec.RevisionHistoryLimit == nil {
		obj.Spec.RevisionHistoryLimit = utilptr.To[int32](10)
	}
	core.DefaultPodTemplateSpec(&obj.Spec.Template)
}

func validateDaemonSet(obj *appsv1.DaemonSet) field.ErrorList {
	spec := &obj.Spec
	fldPath := field.NewPath("spec")
	// Unlike the other controllers upstream has no separate "required"
	// error here: a missing selector matches nothing and so fails the
	// template-labels check below.
	allErrs := metav1validation.ValidateLabelSelector(spec.Selector, metav1validation.LabelSelectorValidationOptions{}, fldPath.Child("selector"))
	if selector, err := metav1.LabelSelectorAsSelector(spec.Selector); err == nil {
		allErrs = append(allErrs, validateTemplateMatchesSelector(selector, &spec.Template, fldPath.Child("template"))...)
	}
	if spec.Selector != nil && len(spec.Selector.MatchLabels)+len(spec.Selector.MatchExpressions) == 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("selector"), spec.Selector, "empty selector is invalid for daemonset"))
	}

	allErrs = append(allErrs, core.ValidatePodTemplateSpec(&spec.Template, fldPath.Child("template"))...)
	allErrs = append(allErrs, validateReplicatedPodTemplate(&spec.Template, "DaemonSet", fldPath.Child("template"))...)
	allErrs = append(allErrs, validateNonnegative(int64(spec.MinReadySeconds), fldPath.Child("minReadySeconds"))...)
	allErrs = append(allErrs, validateDaemonSetUpdateStrategy(&spec.UpdateStrategy, fldPath.Child("updateStrategy"))...)
	if spec.RevisionHistoryLimit != nil {
		// Zero is valid: it keeps no old revisions around.
		allErrs = append(allErrs, validateNonnegative(int64(*spec.RevisionHistoryLimit), fldPath.Child("revisionHistoryLimit"))...)
	}
	return allErrs
}

func validateDaemonSetUpdateStrategy(strategy *appsv1.DaemonSetUpdateStrategy, fldPath *field.Path) field.ErrorList {
	switch strategy.Type {
	case appsv1.OnDeleteDaemonSetStrategyType:
		return nil
	case appsv1.RollingUpdateDaemonSetStrategyType:
		if strategy.RollingUpdate == nil {
			return field.ErrorList{field.Required(fldPath.Child("rollingUpdate"), "")}
		}
		return validateRollingUpdateDaemonSet(strategy.RollingUpdate, fldPath.Child("rollingUpdate"))
	}
	return field.ErrorList{field.NotSupported(fldPath, *strategy, []appsv1.DaemonSetUpdateStrategyType{appsv1.RollingUpdateDaemonSetStrategyType, appsv1.OnDeleteDaemonSetStrategyType})}
}

func validateRollingUpdateDaemonSet(ru *appsv1.RollingUpdateDaemonSet, fldPath *field.Path) field.ErrorList {
	maxUnavailable := intOrStringValue(ru.MaxUnavailable)
	maxSurge := intOrStringValue(ru.MaxSurge)
	allErrs := validatePositiveIntOrPercent(maxUnavailable, fldPath.Child("maxUnavailable"))
	allErrs = append(allErrs, validatePositiveIntOrPercent(maxSurge, fldPath.Child("maxSurge"))...)
	allErrs = append(allErrs, validateNotMoreThan100Percent(maxUnavailable, fldPath.Child("maxUnavailable"))...)
	allErrs = append(allErrs, validateNotMoreThan100Percent(maxSurge, fldPath.Child("maxSurge"))...)

	// A node runs one daemon pod, so an update either takes it down first
	// or surges a second one beside it, never both and never neither.
	hasUnavailable := intOrPercentValue(maxUnavailable) != 0
	hasSurge := intOrPercentValue(maxSurge) != 0
	switch {
	case hasUnavailable && hasSurge:
		allErrs = append(allErrs, field.Invalid(fldPath.Child("maxSurge"), maxSurge, "may not be set when maxUnavailable is non-zero"))
	case !hasUnavailable && !hasSurge:
		allErrs = append(allErrs, field.Required(fldPath.Child("maxUnavailable"), "cannot be 0 when maxSurge is 0"))
	}
	return allErrs
}

// Validate re-checks the spec; an update may additionally not re-point the
// DaemonSet at other pods.
func validateDaemonSetUpdate(obj, old *appsv1.DaemonSet) field.ErrorList {
	return apimachineryvalidation.ValidateImmutableField(obj.Spec.Selector, old.Spec.Selector, field.NewPath("spec", "selector"))
}
