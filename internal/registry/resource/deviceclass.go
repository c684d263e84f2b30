package resource

import (
	"context"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
)

// Deviceclasses is the deviceclasses resource.
var Deviceclasses = &registry.Resource{
	Group: "resource.k8s.io", Version: "v1", Name: "deviceclasses", Singular: "deviceclass", Kind: "DeviceClass",
	Namespaced:       false,
	TracksGeneration: true,
	New:              func() runtime.Object { return &resourcev1.DeviceClass{} },
	NewList:          func() runtime.Object { return &resourcev1.DeviceClassList{} },
	Validate:         registry.TypedValidate(validateDeviceClass),
	Table:            ageTable,
}

func validateDeviceClass(dc *resourcev1.DeviceClass) field.ErrorList {
	spec, p := &dc.Spec, field.NewPath("spec")
	allErrs := validateSelectors(spec.Selectors, p.Child("selectors"))
	if len(spec.Config) <= resourcev1.DeviceConfigMaxSize {
		for i, c := range spec.Config {
			allErrs = append(allErrs, validateDeviceConfiguration(c.DeviceConfiguration, p.Child("config").Index(i))...)
		}
	}
	return append(allErrs, declarative(resourcev1.Validate_DeviceClassSpec(context.Background(), createOp(), p, spec, nil))...)
}
