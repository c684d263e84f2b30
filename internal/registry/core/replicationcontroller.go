package core

import (
	corev1 "k8s.io/api/core/v1"
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

func defaultReplicationController(obj *corev1.ReplicationController) {}

func validateReplicationController(obj *corev1.ReplicationController) field.ErrorList { return nil }

func validateReplicationControllerUpdate(obj, old *corev1.ReplicationController) field.ErrorList {
	return nil
}
