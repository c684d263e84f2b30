package networking

import (
	networkingv1 "k8s.io/api/networking/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
)

// IPAllocatorManager is the managed-by label value of the IPAddresses the
// service cluster-IP allocator owns; others' IPAddresses are left alone.
const IPAllocatorManager = "ipallocator.k8s.io"

// Ipaddresses is the ipaddresses resource.
var Ipaddresses = &registry.Resource{
	Group: networkingv1.GroupName, Version: "v1", Name: "ipaddresses", Singular: "ipaddress", Kind: "IPAddress",
	ShortNames:     []string{"ip"},
	New:            func() runtime.Object { return &networkingv1.IPAddress{} },
	NewList:        func() runtime.Object { return &networkingv1.IPAddressList{} },
	ValidateName:   validateIPAddressName,
	Validate:       registry.TypedValidate(validateIPAddress),
	ValidateUpdate: registry.TypedValidateUpdate(validateIPAddressUpdate),
	Table:          ipaddressTable,
}

// validateIPAddressName requires the canonical form of an address, so
// that one address has one object. Upstream generates no names for
// IPAddresses, so a generateName is checked as a whole name too.
func validateIPAddressName(name string, _ bool) []string {
	var out []string
	for _, e := range utilvalidation.IsValidIP(&field.Path{}, name) {
		out = append(out, e.Detail)
	}
	return out
}

var parentRefPath = field.NewPath("spec", "parentRef")

// validateIPAddress is upstream's validateIPAddressParentReference. The
// group may be empty: it is the core group of Services.
func validateIPAddress(ip *networkingv1.IPAddress) field.ErrorList {
	ref := ip.Spec.ParentRef
	if ref == nil {
		return field.ErrorList{field.Required(parentRefPath, "")}
	}
	var errs field.ErrorList
	if ref.Group != "" {
		errs = validateReferenceGroup(parentRefPath.Child("group"), &ref.Group)
	}
	errs = append(errs, validatePathSegment(parentRefPath.Child("resource"), ref.Resource, true)...)
	errs = append(errs, validatePathSegment(parentRefPath.Child("name"), ref.Name, true)...)
	errs = append(errs, validatePathSegment(parentRefPath.Child("namespace"), ref.Namespace, false)...)
	return errs
}

// The reference is what makes the address someone's: moving it to
// another owner would let two objects believe they hold it.
func validateIPAddressUpdate(ip, old *networkingv1.IPAddress) field.ErrorList {
	return apimachineryvalidation.ValidateImmutableField(ip.Spec.ParentRef, old.Spec.ParentRef, parentRefPath)
}
