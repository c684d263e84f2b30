package core

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
)

// Namespaces is the namespaces resource.
var Namespaces = &registry.Resource{
	Group: "", Version: "v1", Name: "namespaces", Singular: "namespace", Kind: "Namespace",
	Namespaced:     false,
	Status:         true,
	New:            func() runtime.Object { return &corev1.Namespace{} },
	NewList:        func() runtime.Object { return &corev1.NamespaceList{} },
	Default:        registry.Typed(defaultNamespace),
	Validate:       registry.TypedValidate(validateNamespace),
	ValidateUpdate: registry.TypedValidateUpdate(validateNamespaceUpdate),
	Table:          namespaceTable,
	Fields:         namespaceFields,
}

func defaultNamespace(obj *corev1.Namespace) {}

func validateNamespace(obj *corev1.Namespace) field.ErrorList { return nil }

func validateNamespaceUpdate(obj, old *corev1.Namespace) field.ErrorList { return nil }
