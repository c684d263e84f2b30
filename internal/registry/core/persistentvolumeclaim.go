package core

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
)

// Persistentvolumeclaims is the persistentvolumeclaims resource.
var Persistentvolumeclaims = &registry.Resource{
	Group: "", Version: "v1", Name: "persistentvolumeclaims", Singular: "persistentvolumeclaim", Kind: "PersistentVolumeClaim",
	Namespaced:     true,
	ShortNames:     []string{"pvc"},
	Status:         true,
	New:            func() runtime.Object { return &corev1.PersistentVolumeClaim{} },
	NewList:        func() runtime.Object { return &corev1.PersistentVolumeClaimList{} },
	Default:        registry.Typed(defaultPersistentVolumeClaim),
	Validate:       registry.TypedValidate(validatePersistentVolumeClaim),
	ValidateUpdate: registry.TypedValidateUpdate(validatePersistentVolumeClaimUpdate),
	Table:          persistentvolumeclaimTable,
	Fields:         persistentvolumeclaimFields,
}

func defaultPersistentVolumeClaim(obj *corev1.PersistentVolumeClaim) {}

func validatePersistentVolumeClaim(obj *corev1.PersistentVolumeClaim) field.ErrorList { return nil }

func validatePersistentVolumeClaimUpdate(obj, old *corev1.PersistentVolumeClaim) field.ErrorList {
	return nil
}
