package coordination

import (
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/runtime"
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

func defaultLease(obj *coordinationv1.Lease) {}

func validateLease(obj *coordinationv1.Lease) field.ErrorList { return nil }

func validateLeaseUpdate(obj, old *coordinationv1.Lease) field.ErrorList { return nil }
