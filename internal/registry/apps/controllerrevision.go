package apps

import (
	"bytes"
	"encoding/json"
	"reflect"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
)

// Controllerrevisions is the controllerrevisions resource.
var Controllerrevisions = &registry.Resource{
	Group: "apps", Version: "v1", Name: "controllerrevisions", Singular: "controllerrevision", Kind: "ControllerRevision",
	Namespaced:     true,
	New:            func() runtime.Object { return &appsv1.ControllerRevision{} },
	NewList:        func() runtime.Object { return &appsv1.ControllerRevisionList{} },
	Default:        registry.Typed(defaultControllerRevision),
	Validate:       registry.TypedValidate(validateControllerRevision),
	ValidateUpdate: registry.TypedValidateUpdate(validateControllerRevisionUpdate),
	Table:          controllerrevisionTable,
	Fields:         controllerrevisionFields,
}

// Upstream defines no defaults for ControllerRevisions.
func defaultControllerRevision(obj *appsv1.ControllerRevision) {}

func validateControllerRevision(obj *appsv1.ControllerRevision) field.ErrorList {
	var allErrs field.ErrorList
	// A revision is a snapshot; without data there is nothing to roll back to.
	if len(obj.Data.Raw) == 0 && obj.Data.Object == nil {
		allErrs = append(allErrs, field.Required(field.NewPath("data"), "data is mandatory"))
	}
	allErrs = append(allErrs, validateNonnegative(obj.Revision, field.NewPath("revision"))...)
	return allErrs
}

// A revision records history: its data may never be rewritten.
func validateControllerRevisionUpdate(obj, old *appsv1.ControllerRevision) field.ErrorList {
	if !sameRawData(obj.Data.Raw, old.Data.Raw) {
		return field.ErrorList{field.Invalid(field.NewPath("data"), obj.Data, "field is immutable")}
	}
	return nil
}

// sameRawData compares JSON documents by value, since a client resending
// the stored revision need not reproduce its exact formatting.
func sameRawData(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var av, bv any
	if json.Unmarshal(a, &av) != nil || json.Unmarshal(b, &bv) != nil {
		return false
	}
	return reflect.DeepEqual(av, bv)
}
