package core

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
)

// Persistentvolumes is the persistentvolumes resource.
var Persistentvolumes = &registry.Resource{
	Group: "", Version: "v1", Name: "persistentvolumes", Singular: "persistentvolume", Kind: "PersistentVolume",
	Namespaced:     false,
	ShortNames:     []string{"pv"},
	Status:         true,
	New:            func() runtime.Object { return &corev1.PersistentVolume{} },
	NewList:        func() runtime.Object { return &corev1.PersistentVolumeList{} },
	Default:        registry.Typed(defaultPersistentVolume),
	Validate:       registry.TypedValidate(validatePersistentVolume),
	ValidateUpdate: registry.TypedValidateUpdate(validatePersistentVolumeUpdate),
	Table:          persistentvolumeTable,
	Fields:         persistentvolumeFields,
}

func defaultPersistentVolume(obj *corev1.PersistentVolume) {}

func validatePersistentVolume(obj *corev1.PersistentVolume) field.ErrorList { return nil }

func validatePersistentVolumeUpdate(obj, old *corev1.PersistentVolume) field.ErrorList { return nil }
