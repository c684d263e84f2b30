package apps

import (
	appsv1 "k8s.io/api/apps/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilptr "k8s.io/utils/ptr"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/core"
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

func defaultReplicaSet(obj *appsv1.ReplicaSet) {
	if obj.Spec.Replicas == nil {
		obj.Spec.Replicas = utilptr.To[int32](1)
	}
	core.DefaultPodTemplateSpec(&obj.Spec.Template)
}

func validateReplicaSet(obj *appsv1.ReplicaSet) field.ErrorList {
	spec := &obj.Spec
	fldPath := field.NewPath("spec")
	allErrs := validateNonnegative(int64(int32Value(spec.Replicas, 1)), fldPath.Child("replicas"))
	allErrs = append(allErrs, validateNonnegative(int64(spec.MinReadySeconds), fldPath.Child("minReadySeconds"))...)

	// Upstream's ReplicaSet check reuses the Deployment wording for an
	// empty selector; clients may match on it, so it is kept.
	selector, errs := validateControllerSelector(spec.Selector, "deployment", "invalid label selector", fldPath.Child("selector"))
	allErrs = append(allErrs, errs...)
	if selector != nil {
		allErrs = append(allErrs, validatePodTemplateForReplicaSet(&spec.Template, selector, fldPath.Child("template"))...)
	}
	return allErrs
}

// Validate re-checks the spec; an update may additionally not re-point the
// ReplicaSet at other pods.
func validateReplicaSetUpdate(obj, old *appsv1.ReplicaSet) field.ErrorList {
	return apimachineryvalidation.ValidateImmutableField(obj.Spec.Selector, old.Spec.Selector, field.NewPath("spec", "selector"))
}
