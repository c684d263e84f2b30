package apps

import (
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
)

// Daemonsets is the daemonsets resource.
var Daemonsets = &registry.Resource{
	Group: "apps", Version: "v1", Name: "daemonsets", Singular: "daemonset", Kind: "DaemonSet",
	Namespaced:       true,
	ShortNames:       []string{"ds"},
	Categories:       []string{"all"},
	Status:           true,
	TracksGeneration: true,
	New:              func() runtime.Object { return &appsv1.DaemonSet{} },
	NewList:          func() runtime.Object { return &appsv1.DaemonSetList{} },
	Default:          registry.Typed(defaultDaemonSet),
	Validate:         registry.TypedValidate(validateDaemonSet),
	ValidateUpdate:   registry.TypedValidateUpdate(validateDaemonSetUpdate),
	Table:            daemonsetTable,
	Fields:           daemonsetFields,
}

func defaultDaemonSet(obj *appsv1.DaemonSet) {}

func validateDaemonSet(obj *appsv1.DaemonSet) field.ErrorList { return nil }

func validateDaemonSetUpdate(obj, old *appsv1.DaemonSet) field.ErrorList { return nil }
