package scheduling

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilptr "k8s.io/utils/ptr"

	"github.com/orca-project/orca/internal/registry"
)

// Priorityclasses is the priorityclasses resource.
var Priorityclasses = &registry.Resource{
	Group: "scheduling.k8s.io", Version: "v1", Name: "priorityclasses", Singular: "priorityclass", Kind: "PriorityClass",
	Namespaced:     false,
	ShortNames:     []string{"pc"},
	New:            func() runtime.Object { return &schedulingv1.PriorityClass{} },
	NewList:        func() runtime.Object { return &schedulingv1.PriorityClassList{} },
	Default:        registry.Typed(defaultPriorityClass),
	Validate:       registry.TypedValidate(validatePriorityClass),
	ValidateUpdate: registry.TypedValidateUpdate(validatePriorityClassUpdate),
	Table:          priorityclassTable,
	Fields:         priorityclassFields,
}

const (
	// HighestUserDefinablePriority is the largest value a PriorityClass
	// outside the reserved system- names may have; higher values belong to
	// the system classes so that user pods can never preempt them.
	HighestUserDefinablePriority = int32(1000000000)
	// SystemCriticalPriority is the value of system-cluster-critical.
	SystemCriticalPriority = 2 * HighestUserDefinablePriority
	// SystemPriorityClassPrefix starts every name reserved for the system.
	SystemPriorityClassPrefix = "system-"
)

// SystemPriorityClasses returns the classes the control plane creates at
// startup, the only ones allowed to use the system- prefix.
func SystemPriorityClasses() []*schedulingv1.PriorityClass {
	return []*schedulingv1.PriorityClass{
		newSystemPriorityClass("system-node-critical", SystemCriticalPriority+1000, "Used for system critical pods that must not be moved from their current node."),
		newSystemPriorityClass("system-cluster-critical", SystemCriticalPriority, "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary."),
	}
}

func newSystemPriorityClass(name string, value int32, description string) *schedulingv1.PriorityClass {
	pc := &schedulingv1.PriorityClass{Value: value, Description: description}
	pc.Name = name
	defaultPriorityClass(pc)
	return pc
}

func defaultPriorityClass(obj *schedulingv1.PriorityClass) {
	if obj.PreemptionPolicy == nil {
		obj.PreemptionPolicy = utilptr.To(corev1.PreemptLowerPriority)
	}
}

func validatePriorityClass(obj *schedulingv1.PriorityClass) field.ErrorList {
	var allErrs field.ErrorList
	if strings.HasPrefix(obj.Name, SystemPriorityClassPrefix) {
		if err := checkKnownSystemPriorityClass(obj); err != nil {
			allErrs = append(allErrs, field.Forbidden(field.NewPath("metadata", "name"), "priority class names with '"+SystemPriorityClassPrefix+"' prefix are reserved for system use only. error: "+err.Error()))
		}
	} else if obj.Value > HighestUserDefinablePriority {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("value"), fmt.Sprintf("maximum allowed value of a user defined priority is %v", HighestUserDefinablePriority)))
	}
	if obj.PreemptionPolicy != nil {
		switch *obj.PreemptionPolicy {
		case corev1.PreemptLowerPriority, corev1.PreemptNever:
		default:
			allErrs = append(allErrs, field.NotSupported(field.NewPath("preemptionPolicy"), *obj.PreemptionPolicy, []corev1.PreemptionPolicy{corev1.PreemptLowerPriority, corev1.PreemptNever}))
		}
	}
	return allErrs
}

// checkKnownSystemPriorityClass accepts a system- class only if it is
// exactly one the control plane defines, whatever its description says.
func checkKnownSystemPriorityClass(pc *schedulingv1.PriorityClass) error {
	for _, spc := range SystemPriorityClasses() {
		if spc.Name != pc.Name {
			continue
		}
		if spc.Value != pc.Value {
			return fmt.Errorf("value of %v PriorityClass must be %v", spc.Name, spc.Value)
		}
		if spc.GlobalDefault != pc.GlobalDefault {
			return fmt.Errorf("globalDefault of %v PriorityClass must be %v", spc.Name, spc.GlobalDefault)
		}
		return nil
	}
	return fmt.Errorf("%v is not a known system priority class", pc.Name)
}

// Pods copy a class's value and policy when they are admitted, so
// changing either would leave existing pods disagreeing with new ones.
func validatePriorityClassUpdate(obj, old *schedulingv1.PriorityClass) field.ErrorList {
	var allErrs field.ErrorList
	if obj.Value != old.Value {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("value"), "may not be changed in an update."))
	}
	allErrs = append(allErrs, apimachineryvalidation.ValidateImmutableField(obj.PreemptionPolicy, old.PreemptionPolicy, field.NewPath("preemptionPolicy"))...)
	return allErrs
}
