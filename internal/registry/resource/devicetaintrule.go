package resource

import (
	"context"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
)

// Devicetaintrules is the devicetaintrules resource: a taint an
// administrator puts on the devices a selector picks (all of them when it
// picks none), served at v1 as upstream's v1.37 does by default.
var Devicetaintrules = &registry.Resource{
	Group: "resource.k8s.io", Version: "v1", Name: "devicetaintrules", Singular: "devicetaintrule", Kind: "DeviceTaintRule",
	Namespaced:           false,
	Status:               true,
	StatusResetsMetadata: []string{"labels", "annotations", "finalizers", "ownerReferences"},
	TracksGeneration:     true,
	New:                  func() runtime.Object { return &resourcev1.DeviceTaintRule{} },
	NewList:              func() runtime.Object { return &resourcev1.DeviceTaintRuleList{} },
	Default:              registry.Typed(func(r *resourcev1.DeviceTaintRule) { defaultTaint(&r.Spec.Taint) }),
	PrepareForUpdate:     registry.Typed2(prepareDeviceTaintRuleUpdate),
	Validate:             registry.TypedValidate(validateDeviceTaintRule),
	ValidateStatusUpdate: registry.TypedValidateUpdate(validateDeviceTaintRuleStatus),
	Table:                devicetaintruleTable,
}

// prepareDeviceTaintRuleUpdate restarts the taint's clock when its effect
// changes (a NoExecute taint evicts from the time it was added) unless
// the writer set a time of its own.
func prepareDeviceTaintRuleUpdate(r, old *resourcev1.DeviceTaintRule) {
	if r.Spec.Taint.Effect != old.Spec.Taint.Effect && r.Spec.Taint.TimeAdded.Equal(old.Spec.Taint.TimeAdded) {
		now := metav1.Now().Rfc3339Copy()
		r.Spec.Taint.TimeAdded = &now
	}
}

func validateDeviceTaintRule(r *resourcev1.DeviceTaintRule) field.ErrorList {
	p := field.NewPath("spec")
	var allErrs field.ErrorList
	if sel := r.Spec.DeviceSelector; sel != nil {
		sp := p.Child("deviceSelector")
		if sel.Driver != nil {
			allErrs = append(allErrs, validateDriverName(*sel.Driver, sp.Child("driver"))...)
		}
		if sel.Pool != nil {
			allErrs = append(allErrs, validatePoolName(*sel.Pool, sp.Child("pool"))...)
		}
		if sel.Device != nil {
			allErrs = append(allErrs, validateDeviceName(*sel.Device, sp.Child("device"))...)
		}
	}
	allErrs = append(allErrs, validateDeviceTaint(r.Spec.Taint, p.Child("taint"))...)
	return append(allErrs, declarative(resourcev1.Validate_DeviceTaintRuleSpec(context.Background(), createOp(), p, &r.Spec, nil))...)
}

// validateDeviceTaintRuleStatus checks the conditions the taint eviction
// controller reports.
func validateDeviceTaintRuleStatus(r, old *resourcev1.DeviceTaintRule) field.ErrorList {
	p := field.NewPath("status", "conditions")
	allErrs := metav1validation.ValidateConditions(r.Status.Conditions, p)
	if len(r.Status.Conditions) > resourcev1.DeviceTaintRuleStatusMaxConditions {
		allErrs = append(allErrs, field.TooMany(p, len(r.Status.Conditions), resourcev1.DeviceTaintRuleStatusMaxConditions))
	}
	return append(allErrs, declarative(resourcev1.Validate_DeviceTaintRuleStatus(context.Background(), updateOp(), field.NewPath("status"), &r.Status, &old.Status))...)
}
