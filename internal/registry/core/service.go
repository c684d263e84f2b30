package core

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
)

// Services is the services resource.
var Services = &registry.Resource{
	Group: "", Version: "v1", Name: "services", Singular: "service", Kind: "Service",
	Namespaced:     true,
	ShortNames:     []string{"svc"},
	Categories:     []string{"all"},
	Status:         true,
	New:            func() runtime.Object { return &corev1.Service{} },
	NewList:        func() runtime.Object { return &corev1.ServiceList{} },
	Default:        registry.Typed(defaultService),
	Validate:       registry.TypedValidate(validateService),
	ValidateUpdate: registry.TypedValidateUpdate(validateServiceUpdate),
	Table:          serviceTable,
	Fields:         serviceFields,
}

func defaultService(obj *corev1.Service) {}

func validateService(obj *corev1.Service) field.ErrorList { return nil }

func validateServiceUpdate(obj, old *corev1.Service) field.ErrorList { return nil }
