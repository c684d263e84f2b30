package core

import (
	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
)

// Replicationcontrollers is the replicationcontrollers resource.
var Replicationcontrollers = &registry.Resource{
	Group: "", Version: "v1", Name: "replicationcontrollers", Singular: "replicationcontroller", Kind: "ReplicationController",
	Namespaced:       true,
	ShortNames:       []string{"rc"},
	Categories:       []string{"all"},
	Status:           true,
	TracksGeneration: true,
	Scale:            replicationcontrollerScale,
	New:              func() runtime.Object { return &corev1.ReplicationController{} },
	NewList:          func() runtime.Object { return &corev1.ReplicationControllerList{} },
	Default:          registry.Typed(defaultReplicationController),
	Validate:         registry.TypedValidate(validateReplicationController),
	ValidateUpdate:   registry.TypedValidateUpdate(validateReplicationControllerUpdate),
	Table:            replicationcontrollerTable,
	Fields:           replicationcontrollerFields,
}

// defaultReplicationController: one replica, and the template's labels as
// selector and labels when those are not given, which is how an RC written
// by hand usually comes.
func defaultReplicationController(rc *corev1.ReplicationController) {
	if rc.Spec.Template != nil {
		if l := rc.Spec.Template.Labels; l != nil {
			if len(rc.Spec.Selector) == 0 {
				rc.Spec.Selector = l
			}
			if len(rc.Labels) == 0 {
				rc.Labels = l
			}
		}
		DefaultPodTemplateSpec(rc.Spec.Template)
	}
	if rc.Spec.Replicas == nil {
		rc.Spec.Replicas = ptrTo(int32(1))
	}
}

func validateReplicationController(rc *corev1.ReplicationController) field.ErrorList {
	specPath := field.NewPath("spec")
	spec := &rc.Spec
	allErrs := apivalidation.ValidateNonnegativeField(int64(spec.MinReadySeconds), specPath.Child("minReadySeconds"))
	if labels.Set(spec.Selector).AsSelector().Empty() {
		allErrs = append(allErrs, field.Required(specPath.Child("selector"), ""))
	}
	if spec.Replicas != nil {
		allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(int64(*spec.Replicas), specPath.Child("replicas"))...)
	}
	allErrs = append(allErrs, validatePodTemplateSpecForRC(spec.Template, spec.Selector, specPath.Child("template"))...)
	return allErrs
}

// validatePodTemplateSpecForRC: the selector must select the template's
// pods, and those pods must run forever, since the RC replaces any that
// stop.
func validatePodTemplateSpecForRC(t *corev1.PodTemplateSpec, selector map[string]string, fldPath *field.Path) field.ErrorList {
	if t == nil {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	var allErrs field.ErrorList
	if sel := labels.Set(selector).AsSelector(); !sel.Empty() && !sel.Matches(labels.Set(t.Labels)) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("metadata", "labels"), t.Labels, "`selector` does not match template `labels`"))
	}
	allErrs = append(allErrs, ValidatePodTemplateSpec(t, fldPath)...)
	if t.Spec.RestartPolicy != corev1.RestartPolicyAlways {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("spec", "restartPolicy"), t.Spec.RestartPolicy, []corev1.RestartPolicy{corev1.RestartPolicyAlways}))
	}
	if t.Spec.ActiveDeadlineSeconds != nil {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("spec", "activeDeadlineSeconds"), "activeDeadlineSeconds in ReplicationController is not Supported"))
	}
	return allErrs
}

// validateReplicationControllerUpdate has nothing beyond Validate: an RC's
// selector and template may both change.
func validateReplicationControllerUpdate(rc, old *corev1.ReplicationController) field.ErrorList {
	return nil
}
