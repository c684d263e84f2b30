package resource

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/registrytest"
)

type wantErr = registrytest.WantErr

var checkErrs = registrytest.CheckErrs

// create does to obj what the server does on create: defaults, then
// PrepareForCreate, then validation.
func create(res *registry.Resource, obj runtime.Object) field.ErrorList {
	if res.Default != nil {
		res.Default(obj)
	}
	if res.PrepareForCreate != nil {
		res.PrepareForCreate(obj)
	}
	return res.Validate(obj)
}

// update does what the server does to an update of the main resource:
// defaults, PrepareForUpdate, then both validations.
func update(res *registry.Resource, obj, old runtime.Object) field.ErrorList {
	if res.Default != nil {
		res.Default(obj)
	}
	if res.PrepareForUpdate != nil {
		res.PrepareForUpdate(obj, old)
	}
	errs := res.Validate(obj)
	if res.ValidateUpdate != nil {
		errs = append(errs, res.ValidateUpdate(obj, old)...)
	}
	return errs
}

// updateStatus is update through /status.
func updateStatus(res *registry.Resource, obj, old runtime.Object) field.ErrorList {
	if res.Default != nil {
		res.Default(obj)
	}
	if res.PrepareForStatusUpdate != nil {
		res.PrepareForStatusUpdate(obj, old)
	}
	return append(res.Validate(obj), res.ValidateStatusUpdate(obj, old)...)
}
