package apps

import (
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

func defaultControllerRevision(obj *appsv1.ControllerRevision) {}

func validateControllerRevision(obj *appsv1.ControllerRevision) field.ErrorList { return nil }

func validateControllerRevisionUpdate(obj, old *appsv1.ControllerRevision) field.ErrorList {
	return nil
}
