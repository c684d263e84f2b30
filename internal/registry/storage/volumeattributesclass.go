package storage

import (
	"reflect"

	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/storageclass"
)

// Volumeattributesclasses is the volumeattributesclasses resource (GA in
// v1.34): a set of driver parameters a claim may name to have its volume
// modified, as a storage class names those it is provisioned with.
var Volumeattributesclasses = &registry.Resource{
	Group: storagev1.GroupName, Version: "v1", Name: "volumeattributesclasses", Singular: "volumeattributesclass", Kind: "VolumeAttributesClass",
	ShortNames:             []string{"vac"},
	New:                    func() runtime.Object { return &storagev1.VolumeAttributesClass{} },
	NewList:                func() runtime.Object { return &storagev1.VolumeAttributesClassList{} },
	Validate:               registry.TypedValidate(validateVolumeAttributesClass),
	ValidateUpdate:         registry.TypedValidateUpdate(validateVolumeAttributesClassUpdate),
	ValidateUpdateReplaces: true,
	Table:                  volumeattributesclassTable,
}

// validateVolumeAttributesClass: the driver is named as a provisioner is,
// and the class must carry at least one parameter.
func validateVolumeAttributesClass(c *storagev1.VolumeAttributesClass) field.ErrorList {
	allErrs := storageclass.ValidateProvisioner(c.DriverName, field.NewPath("driverName"))
	return append(allErrs, storageclass.ValidateParameters(c.Parameters, false, field.NewPath("parameters"))...)
}

// validateVolumeAttributesClassUpdate: volumes already modified to a class
// hold its parameters, so the class may not change; upstream reports that
// before checking the new class.
func validateVolumeAttributesClassUpdate(c, old *storagev1.VolumeAttributesClass) field.ErrorList {
	var allErrs field.ErrorList
	if c.DriverName != old.DriverName {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("driverName"), "updates to driverName are forbidden."))
	}
	// Upstream compares with reflect, so an empty map is not an absent one.
	if !reflect.DeepEqual(old.Parameters, c.Parameters) {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("parameters"), "updates to parameters are forbidden."))
	}
	return append(allErrs, validateVolumeAttributesClass(c)...)
}
