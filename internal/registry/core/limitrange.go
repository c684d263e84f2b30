package core

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
)

// Limitranges is the limitranges resource.
var Limitranges = &registry.Resource{
	Group: "", Version: "v1", Name: "limitranges", Singular: "limitrange", Kind: "LimitRange",
	Namespaced:     true,
	ShortNames:     []string{"limits"},
	New:            func() runtime.Object { return &corev1.LimitRange{} },
	NewList:        func() runtime.Object { return &corev1.LimitRangeList{} },
	Default:        registry.Typed(defaultLimitRange),
	Validate:       registry.TypedValidate(validateLimitRange),
	ValidateUpdate: registry.TypedValidateUpdate(validateLimitRangeUpdate),
	Table:          limitrangeTable,
	Fields:         limitrangeFields,
}

func defaultLimitRange(obj *corev1.LimitRange) {}

func validateLimitRange(obj *corev1.LimitRange) field.ErrorList { return nil }

func validateLimitRangeUpdate(obj, old *corev1.LimitRange) field.ErrorList { return nil }
