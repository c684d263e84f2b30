package apps

import (
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
)

// Replicasets is the replicasets resource.
var Replicasets = &registry.Resource{
	Group: "apps", Version: "v1", Name: "replicasets", Singular: "replicaset", Kind: "ReplicaSet",
	Namespaced:       true,
	ShortNames:       []string{"rs"},
	Categories:       []string{"all"},
	Status:           true,
	TracksGeneration: true,
	Scale:            replicasetScale,
	New:              func() runtime.Object { return &appsv1.ReplicaSet{} },
	NewList:          func() runtime.Object { return &appsv1.ReplicaSetList{} },
	Default:          registry.Typed(defaultReplicaSet),
	Validate:         registry.TypedValidate(validateReplicaSet),
	ValidateUpdate:   registry.TypedValidateUpdate(validateReplicaSetUpdate),
	Table:            replicasetTable,
	Fields:           replicasetFields,
}

func defaultReplicaSet(obj *appsv1.ReplicaSet) {}

func validateReplicaSet(obj *appsv1.ReplicaSet) field.ErrorList { return nil }

func validateReplicaSetUpdate(obj, old *appsv1.ReplicaSet) field.ErrorList { return nil }
