package scheduling

import (
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

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

func defaultPriorityClass(obj *schedulingv1.PriorityClass) {}

func validatePriorityClass(obj *schedulingv1.PriorityClass) field.ErrorList { return nil }

func validatePriorityClassUpdate(obj, old *schedulingv1.PriorityClass) field.ErrorList { return nil }
