package networking

import (
	networkingv1 "k8s.io/api/networking/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"

	"github.com/orca-project/orca/internal/registry"
)

// Names upstream gives to what its control plane owns.
const (
	// DefaultServiceCIDRName is the ServiceCIDR the API server keeps for
	// its --service-cidr.
	DefaultServiceCIDRName = "kubernetes"
	// ServiceCIDRFinalizer holds a ServiceCIDR back while addresses that
	// no other ServiceCIDR contains are still allocated from it.
	ServiceCIDRFinalizer = "networking.k8s.io/service-cidr-finalizer"
)

// Servicecidrs is the servicecidrs resource. A status write keeps all
// metadata, as upstream's status strategy resets it; the main resource
// keeps the status it has (upstream's ServiceCIDRStatusFieldWiping, on by
// default since 1.36).
var Servicecidrs = &registry.Resource{
	Group: networkingv1.GroupName, Version: "v1", Name: "servicecidrs", Singular: "servicecidr", Kind: "ServiceCIDR",
	New:                  func() runtime.Object { return &networkingv1.ServiceCIDR{} },
	NewList:              func() runtime.Object { return &networkingv1.ServiceCIDRList{} },
	Status:               true,
	StatusResetsMetadata: []string{"labels", "annotations", "finalizers", "ownerReferences"},
	Validate:             registry.TypedValidate(validateServiceCIDR),
	ValidateUpdate:       registry.TypedValidateUpdate(validateServiceCIDRUpdate),
	ValidateStatusUpdate: func(obj, old runtime.Object) field.ErrorList { return nil },
	Table:                servicecidrTable,
}

var cidrsPath = field.NewPath("spec", "cidrs")

func validateServiceCIDR(sc *networkingv1.ServiceCIDR) field.ErrorList {
	return validateServiceCIDRSpec(sc.Spec.CIDRs)
}

// validateServiceCIDRSpec is upstream's validateServiceCIDRSpec.
func validateServiceCIDRSpec(cidrs []string) field.ErrorList {
	if len(cidrs) == 0 {
		return field.ErrorList{field.Required(cidrsPath, "at least one CIDR required")}
	}
	if len(cidrs) > 2 {
		// Upstream reports its internal spec, whose field has no JSON
		// name, so the value reads {"CIDRs":[...]}.
		return field.ErrorList{field.Invalid(cidrsPath, &struct{ CIDRs []string }{cidrs}, "may only hold up to 2 values")}
	}
	var errs field.ErrorList
	for i, c := range cidrs {
		errs = append(errs, utilvalidation.IsValidCIDR(cidrsPath.Index(i), c)...)
	}
	if len(cidrs) == 2 {
		if a, b := netutils.IPFamilyOfCIDRString(cidrs[0]), netutils.IPFamilyOfCIDRString(cidrs[1]); a == b && a != netutils.IPFamilyUnknown {
			errs = append(errs, field.Invalid(cidrsPath, cidrs, "may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64"))
		}
	}
	return errs
}

// validateServiceCIDRUpdate is upstream's ValidateServiceCIDRUpdate: the
// CIDRs are immutable except that a single-stack range may gain a second
// family (upstream issue 131261). Validate already checks the new CIDRs
// on every update, so they are not checked twice here.
func validateServiceCIDRUpdate(sc, old *networkingv1.ServiceCIDR) field.ErrorList {
	cur, prev := sc.Spec.CIDRs, old.Spec.CIDRs
	var errs field.ErrorList
	switch {
	case len(prev) == len(cur):
		for i := range prev {
			if cur[i] != prev[i] {
				errs = append(errs, field.Invalid(cidrsPath.Index(i), cur[i], apimachineryvalidation.FieldImmutableErrorMsg))
			}
		}
	case len(prev) == 1 && len(cur) == 2:
		if cur[0] != prev[0] {
			errs = append(errs, field.Invalid(cidrsPath.Index(0), cur[0], apimachineryvalidation.FieldImmutableErrorMsg))
		}
	default:
		errs = append(errs, field.Invalid(cidrsPath, cur, apimachineryvalidation.FieldImmutableErrorMsg))
	}
	return errs
}
