package coordination

import (
	"slices"
	"strings"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
)

// Leases is the leases resource.
var Leases = &registry.Resource{
	Group: "coordination.k8s.io", Version: "v1", Name: "leases", Singular: "lease", Kind: "Lease",
	Namespaced:     true,
	New:            func() runtime.Object { return &coordinationv1.Lease{} },
	NewList:        func() runtime.Object { return &coordinationv1.LeaseList{} },
	Default:        registry.Typed(defaultLease),
	Validate:       registry.TypedValidate(validateLease),
	ValidateUpdate: registry.TypedValidateUpdate(validateLeaseUpdate),
	Table:          leaseTable,
	Fields:         leaseFields,
}

// validLeaseStrategies are the unprefixed strategies Kubernetes defines;
// anything else must be a prefixed, vendor-specific name.
var validLeaseStrategies = []coordinationv1.CoordinatedLeaseStrategy{coordinationv1.OldestEmulationVersion}

// Upstream defines no defaults for Leases.
func defaultLease(obj *coordinationv1.Lease) {}

func validateLease(obj *coordinationv1.Lease) field.ErrorList {
	spec := &obj.Spec
	fldPath := field.NewPath("spec")
	var allErrs field.ErrorList
	if spec.LeaseDurationSeconds != nil && *spec.LeaseDurationSeconds <= 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("leaseDurationSeconds"), spec.LeaseDurationSeconds, "must be greater than 0"))
	}
	if spec.LeaseTransitions != nil && *spec.LeaseTransitions < 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("leaseTransitions"), spec.LeaseTransitions, "must be greater than or equal to 0"))
	}
	if spec.Strategy != nil {
		allErrs = append(allErrs, validateCoordinatedLeaseStrategy(*spec.Strategy, fldPath.Child("strategy"))...)
	}
	// A preferred holder only means something to a strategy that hands
	// the lease over.
	if spec.PreferredHolder != nil && *spec.PreferredHolder != "" && (spec.Strategy == nil || *spec.Strategy == "") {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("preferredHolder"), "may only be specified if `strategy` is defined"))
	}
	return allErrs
}

// validateCoordinatedLeaseStrategy reports at "<fldPath>.strategy", which
// for a Lease reads spec.strategy.strategy: upstream appends the child
// twice, and the path is kept so that errors match what clients see there.
func validateCoordinatedLeaseStrategy(strategy coordinationv1.CoordinatedLeaseStrategy, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if !strings.Contains(string(strategy), "/") {
		if !slices.Contains(validLeaseStrategies, strategy) {
			allErrs = append(allErrs, field.NotSupported(fldPath.Child("strategy"), strategy, validLeaseStrategies))
		}
		return allErrs
	}
	for _, msg := range utilvalidation.IsQualifiedName(string(strategy)) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("strategy"), strategy, msg))
	}
	return allErrs
}

// Validate re-checks the spec on updates; holders may change anything in
// it, which is how a lease changes hands.
func validateLeaseUpdate(obj, old *coordinationv1.Lease) field.ErrorList { return nil }
