package apps

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilptr "k8s.io/utils/ptr"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/core"
)

// Deployments is the deployments resource.
var Deployments = &registry.Resource{
	Group: "apps", Version: "v1", Name: "deployments", Singular: "deployment", Kind: "Deployment",
	Namespaced:       true,
	ShortNames:       []string{"deploy"},
	Categories:       []string{"all"},
	Status:           true,
	TracksGeneration: true,
	Scale:            deploymentScale,
	New:              func() runtime.Object { return &appsv1.Deployment{} },
	NewList:          func() runtime.Object { return &appsv1.DeploymentList{} },
	Default:          registry.Typed(defaultDeployment),
	Validate:         registry.TypedValidate(validateDeployment),
	ValidateUpdate:   registry.TypedValidateUpdate(validateDeploymentUpdate),
	Table:            deploymentTable,
	Fields:           deploymentFields,

	// Upstream's status strategy keeps a Deployment's labels out of reach
	// of status writers.
	StatusResetsMetadata: []string{"labels"},
}

func defaultDeployment(obj *appsv1.Deployment) {
	spec := &obj.Spec
	if spec.Replicas == nil {
		spec.Replicas = utilptr.To[int32](1)
	}
	strategy := &spec.Strategy
	if strategy.Type == "" {
		strategy.Type = appsv1.RollingUpdateDeploymentStrategyType
	}
	if strategy.Type == appsv1.RollingUpdateDeploymentStrategyType {
		if strategy.RollingUpdate == nil {
			strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{}
		}
		if strategy.RollingUpdate.MaxUnavailable == nil {
			strategy.RollingUpdate.MaxUnavailable = utilptr.To(intstr.FromString("25%"))
		}
		if strategy.RollingUpdate.MaxSurge == nil {
			strategy.RollingUpdate.MaxSurge = utilptr.To(intstr.FromString("25%"))
		}
	}
	if spec.RevisionHistoryLimit == nil {
		spec.RevisionHistoryLimit = utilptr.To[int32](10)
	}
	if spec.ProgressDeadlineSeconds == nil {
		spec.ProgressDeadlineSeconds = utilptr.To[int32](600)
	}
	core.DefaultPodTemplateSpec(&spec.Template)
}

func validateDeployment(obj *appsv1.Deployment) field.ErrorList {
	spec := &obj.Spec
	fldPath := field.NewPath("spec")
	allErrs := validateNonnegative(int64(int32Value(spec.Replicas, 1)), fldPath.Child("replicas"))

	selector, errs := validateControllerSelector(spec.Selector, "deployment", "invalid label selector", fldPath.Child("selector"))
	allErrs = append(allErrs, errs...)
	if selector != nil {
		allErrs = append(allErrs, validatePodTemplateForReplicaSet(&spec.Template, selector, fldPath.Child("template"))...)
	}

	allErrs = append(allErrs, validateDeploymentStrategy(&spec.Strategy, fldPath.Child("strategy"))...)
	allErrs = append(allErrs, validateNonnegative(int64(spec.MinReadySeconds), fldPath.Child("minReadySeconds"))...)
	if spec.RevisionHistoryLimit != nil {
		// Zero is valid: it keeps no old ReplicaSets around.
		allErrs = append(allErrs, validateNonnegative(int64(*spec.RevisionHistoryLimit), fldPath.Child("revisionHistoryLimit"))...)
	}
	if spec.ProgressDeadlineSeconds != nil {
		allErrs = append(allErrs, validateNonnegative(int64(*spec.ProgressDeadlineSeconds), fldPath.Child("progressDeadlineSeconds"))...)
		// A rollout could never be judged progressing if pods had to be
		// ready for longer than the deadline.
		if *spec.ProgressDeadlineSeconds <= spec.MinReadySeconds {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("progressDeadlineSeconds"), spec.ProgressDeadlineSeconds, "must be greater than minReadySeconds"))
		}
	}
	return allErrs
}

// validatePodTemplateForReplicaSet is shared by Deployments and
// ReplicaSets, which is why a Deployment's deadline error names
// ReplicaSet, as upstream's does.
func validatePodTemplateForReplicaSet(template *corev1.PodTemplateSpec, selector labels.Selector, fldPath *field.Path) field.ErrorList {
	allErrs := validateTemplateMatchesSelector(selector, template, fldPath)
	allErrs = append(allErrs, core.ValidatePodTemplateSpec(template, fldPath)...)
	allErrs = append(allErrs, validateReplicatedPodTemplate(template, "ReplicaSet", fldPath)...)
	return allErrs
}

func validateDeploymentStrategy(strategy *appsv1.DeploymentStrategy, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	switch strategy.Type {
	case appsv1.RecreateDeploymentStrategyType:
		if strategy.RollingUpdate != nil {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child("rollingUpdate"), "may not be specified when strategy `type` is '"+string(appsv1.RecreateDeploymentStrategyType)+"'"))
		}
	case appsv1.RollingUpdateDeploymentStrategyType:
		// Defaulting always fills this in; nil means a caller skipped it.
		if strategy.RollingUpdate == nil {
			allErrs = append(allErrs, field.Required(fldPath.Child("rollingUpdate"), "this should be defaulted and never be nil"))
		} else {
			allErrs = append(allErrs, validateRollingUpdateDeployment(strategy.RollingUpdate, fldPath.Child("rollingUpdate"))...)
		}
	default:
		allErrs = append(allErrs, field.NotSupported(fldPath, *strategy, []appsv1.DeploymentStrategyType{appsv1.RecreateDeploymentStrategyType, appsv1.RollingUpdateDeploymentStrategyType}))
	}
	return allErrs
}

func validateRollingUpdateDeployment(ru *appsv1.RollingUpdateDeployment, fldPath *field.Path) field.ErrorList {
	maxUnavailable := intOrStringValue(ru.MaxUnavailable)
	maxSurge := intOrStringValue(ru.MaxSurge)
	allErrs := validatePositiveIntOrPercent(maxUnavailable, fldPath.Child("maxUnavailable"))
	allErrs = append(allErrs, validatePositiveIntOrPercent(maxSurge, fldPath.Child("maxSurge"))...)
	// With neither surge nor unavailability allowed a rollout could never
	// replace a single pod.
	if intOrPercentValue(maxUnavailable) == 0 && intOrPercentValue(maxSurge) == 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("maxUnavailable"), maxUnavailable, "may not be 0 when `maxSurge` is 0"))
	}
	allErrs = append(allErrs, validateNotMoreThan100Percent(maxUnavailable, fldPath.Child("maxUnavailable"))...)
	return allErrs
}

// The spec itself is re-checked by Validate; an update may additionally
// not re-point the Deployment at other pods.
func validateDeploymentUpdate(obj, old *appsv1.Deployment) field.ErrorList {
	return apimachineryvalidation.ValidateImmutableField(obj.Spec.Selector, old.Spec.Selector, field.NewPath("spec", "selector"))
}
