package node

import (
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/core"
)

// Runtimeclasses is the runtimeclasses resource.
var Runtimeclasses = &registry.Resource{
	Group: "node.k8s.io", Version: "v1", Name: "runtimeclasses", Singular: "runtimeclass", Kind: "RuntimeClass",
	Namespaced:     false,
	New:            func() runtime.Object { return &nodev1.RuntimeClass{} },
	NewList:        func() runtime.Object { return &nodev1.RuntimeClassList{} },
	Validate:       registry.TypedValidate(validateRuntimeClass),
	ValidateUpdate: registry.TypedValidateUpdate(validateRuntimeClassUpdate),
	Table:          runtimeclassTable,
}

// validateRuntimeClass is upstream's ValidateRuntimeClass. The handler is
// a DNS label because runtimes use it as a name in their configuration.
func validateRuntimeClass(rc *nodev1.RuntimeClass) field.ErrorList {
	var allErrs field.ErrorList
	handlerPath := field.NewPath("handler")
	if rc.Handler == "" {
		allErrs = append(allErrs, field.Required(handlerPath, ""))
	} else {
		for _, msg := range apivalidation.NameIsDNSLabel(rc.Handler, false) {
			allErrs = append(allErrs, field.Invalid(handlerPath, rc.Handler, msg))
		}
	}
	if rc.Overhead != nil {
		allErrs = append(allErrs, validateOverhead(rc.Overhead, field.NewPath("overhead"))...)
	}
	if rc.Scheduling != nil {
		allErrs = append(allErrs, validateScheduling(rc.Scheduling, field.NewPath("scheduling"))...)
	}
	return allErrs
}

// validateOverhead checks the fixed overhead as a container's limits are
// checked; upstream reuses that check as it is, so its errors read
// "overhead.limits[cpu]" although the field is overhead.podFixed.
func validateOverhead(o *nodev1.Overhead, fldPath *field.Path) field.ErrorList {
	return core.ValidateContainerResourceRequirements(&corev1.ResourceRequirements{Limits: o.PodFixed}, fldPath)
}

func validateScheduling(s *nodev1.Scheduling, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if s.NodeSelector != nil {
		allErrs = append(allErrs, metav1validation.ValidateLabels(s.NodeSelector, fldPath.Child("nodeSelector"))...)
	}
	tolPath := fldPath.Child("tolerations")
	allErrs = append(allErrs, core.ValidateTolerations(s.Tolerations, tolPath)...)
	// Tolerations are a list keyed by everything but tolerationSeconds;
	// the admission plugin merges them into pods and two entries with the
	// same key would be ambiguous there.
	seen := map[corev1.Toleration]bool{}
	for i, t := range s.Tolerations {
		key := corev1.Toleration{Key: t.Key, Operator: t.Operator, Value: t.Value, Effect: t.Effect}
		if seen[key] {
			allErrs = append(allErrs, field.Duplicate(tolPath.Index(i), t))
		}
		seen[key] = true
	}
	return allErrs
}

// The handler names what runs a pod's containers; pods already running
// would not move to another, so it never changes.
func validateRuntimeClassUpdate(rc, old *nodev1.RuntimeClass) field.ErrorList {
	return apivalidation.ValidateImmutableField(rc.Handler, old.Handler, field.NewPath("handler"))
}
