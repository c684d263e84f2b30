package core

import (
	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
)

// Endpoints is the endpoints resource.
var Endpoints = &registry.Resource{
	Group: "", Version: "v1", Name: "endpoints", Singular: "endpoints", Kind: "Endpoints",
	Namespaced:     true,
	ShortNames:     []string{"ep"},
	New:            func() runtime.Object { return &corev1.Endpoints{} },
	NewList:        func() runtime.Object { return &corev1.EndpointsList{} },
	Default:        registry.Typed(defaultEndpoints),
	Validate:       registry.TypedValidate(validateEndpoints),
	ValidateUpdate: registry.TypedValidateUpdate(validateEndpointsUpdate),
	Table:          endpointsTable,
	Fields:         endpointsFields,
}

func defaultEndpoints(ep *corev1.Endpoints) {
	for i := range ep.Subsets {
		for j := range ep.Subsets[i].Ports {
			if p := &ep.Subsets[i].Ports[j]; p.Protocol == "" {
				p.Protocol = corev1.ProtocolTCP
			}
		}
	}
}

func validateEndpoints(ep *corev1.Endpoints) field.ErrorList {
	var allErrs field.ErrorList
	fldPath := field.NewPath("subsets")
	for i := range ep.Subsets {
		ss := &ep.Subsets[i]
		p := fldPath.Index(i)
		// Headless services may have no ports, but every subset has
		// addresses.
		if len(ss.Addresses) == 0 && len(ss.NotReadyAddresses) == 0 {
			allErrs = append(allErrs, field.Required(p, "must specify `addresses` or `notReadyAddresses`"))
		}
		for j := range ss.Addresses {
			allErrs = append(allErrs, validateEndpointAddress(&ss.Addresses[j], p.Child("addresses").Index(j))...)
		}
		for j := range ss.NotReadyAddresses {
			allErrs = append(allErrs, validateEndpointAddress(&ss.NotReadyAddresses[j], p.Child("notReadyAddresses").Index(j))...)
		}
		for j := range ss.Ports {
			allErrs = append(allErrs, validateEndpointPort(&ss.Ports[j], len(ss.Ports) > 1, p.Child("ports").Index(j))...)
		}
	}
	return allErrs
}

func validateEndpointAddress(a *corev1.EndpointAddress, fldPath *field.Path) field.ErrorList {
	allErrs := validation.IsValidIP(fldPath.Child("ip"), a.IP)
	if len(a.Hostname) > 0 {
		allErrs = append(allErrs, validateDNS1123Label(a.Hostname, fldPath.Child("hostname"))...)
	}
	if a.NodeName != nil {
		allErrs = append(allErrs, validateName(apivalidation.NameIsDNSSubdomain, *a.NodeName, false, fldPath.Child("nodeName"))...)
	}
	return append(allErrs, validateNonSpecialIP(a.IP, fldPath.Child("ip"))...)
}

func validateEndpointPort(port *corev1.EndpointPort, requireName bool, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if requireName && len(port.Name) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("name"), ""))
	} else if len(port.Name) != 0 {
		allErrs = append(allErrs, validateDNS1123Label(port.Name, fldPath.Child("name"))...)
	}
	for _, msg := range validation.IsValidPortNum(int(port.Port)) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("port"), port.Port, msg))
	}
	if len(port.Protocol) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("protocol"), ""))
	} else if !supportedPortProtocols.Has(port.Protocol) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("protocol"), port.Protocol, sets.List(supportedPortProtocols)))
	}
	if port.AppProtocol != nil {
		allErrs = append(allErrs, validateQualifiedName(*port.AppProtocol, fldPath.Child("appProtocol"))...)
	}
	return allErrs
}

// validateEndpointsUpdate adds nothing: endpoints are rewritten wholesale
// by their controller, and node names may change when an address moves.
func validateEndpointsUpdate(ep, old *corev1.Endpoints) field.ErrorList { return nil }
