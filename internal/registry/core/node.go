package core

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
)

// Nodes is the nodes resource.
var Nodes = &registry.Resource{
	Group: "", Version: "v1", Name: "nodes", Singular: "node", Kind: "Node",
	Namespaced:     false,
	ShortNames:     []string{"no"},
	Status:         true,
	New:            func() runtime.Object { return &corev1.Node{} },
	NewList:        func() runtime.Object { return &corev1.NodeList{} },
	Default:        registry.Typed(defaultNode),
	Validate:       registry.TypedValidate(validateNode),
	ValidateUpdate: registry.TypedValidateUpdate(validateNodeUpdate),
	Table:          nodeTable,
	Fields:         nodeFields,
}

func defaultNode(obj *corev1.Node) {}

func validateNode(obj *corev1.Node) field.ErrorList { return nil }

func validateNodeUpdate(obj, old *corev1.Node) field.ErrorList { return nil }
