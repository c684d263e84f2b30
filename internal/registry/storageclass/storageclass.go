package storageclass

import (
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
)

// Storageclasses is the storageclasses resource.
var Storageclasses = &registry.Resource{
	Group: "storage.k8s.io", Version: "v1", Name: "storageclasses", Singular: "storageclass", Kind: "StorageClass",
	Namespaced:     false,
	ShortNames:     []string{"sc"},
	New:            func() runtime.Object { return &storagev1.StorageClass{} },
	NewList:        func() runtime.Object { return &storagev1.StorageClassList{} },
	Default:        registry.Typed(defaultStorageClass),
	Validate:       registry.TypedValidate(validateStorageClass),
	ValidateUpdate: registry.TypedValidateUpdate(validateStorageClassUpdate),
	Table:          storageclassTable,
	Fields:         storageclassFields,
}

func defaultStorageClass(obj *storagev1.StorageClass) {}

func validateStorageClass(obj *storagev1.StorageClass) field.ErrorList { return nil }

func validateStorageClassUpdate(obj, old *storagev1.StorageClass) field.ErrorList { return nil }
