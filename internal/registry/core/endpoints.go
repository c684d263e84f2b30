package core

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
)

// Endpoints is the endpoints resource.
var Endpoints = &registry.Resource{
	Group: "", Version: "v1", Name: "endpoints", Singular: "endpoints", Kind: "Endpoints",
	Namespaced:     true,
	ShortNames:     []string{"ep"},
	New:            func() runtime.Object { return &corev1.Endpoints{} },
	NewList:        func() runtime.Object { return &corev1.EndpointsList{} },
	Default:        registry.Typed(defaultEndpoints),
	Validate:       registry.TypedValidate(validateEndpoints),
	ValidateUpdate: registry.TypedValidateUpdate(validateEndpointsUpdate),
	Table:          endpointsTable,
	Fields:         endpointsFields,
}

func defaultEndpoints(obj *corev1.Endpoints) {}

func validateEndpoints(obj *corev1.Endpoints) field.ErrorList { return nil }

func validateEndpointsUpdate(obj, old *corev1.Endpoints) field.ErrorList { return nil }
