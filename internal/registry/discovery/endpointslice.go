package discovery

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"
	utilptr "k8s.io/utils/ptr"

	"github.com/orca-project/orca/internal/registry"
)

// Endpointslices is the endpointslices resource.
var Endpointslices = &registry.Resource{
	Group: "discovery.k8s.io", Version: "v1", Name: "endpointslices", Singular: "endpointslice", Kind: "EndpointSlice",
	Namespaced:       true,
	New:              func() runtime.Object { return &discoveryv1.EndpointSlice{} },
	NewList:          func() runtime.Object { return &discoveryv1.EndpointSliceList{} },
	PrepareForCreate: registry.Typed(prepareEndpointSliceForCreate),
	PrepareForUpdate: registry.Typed2(prepareEndpointSliceForUpdate),
	Default:          registry.Typed(defaultEndpointSlice),
	Validate:         registry.TypedValidate(validateEndpointSlice),
	ValidateUpdate:   registry.TypedValidateUpdate(validateEndpointSliceUpdate),
	Table:            endpointsliceTable,
	Fields:           endpointsliceFields,
}

// Sorted, as upstream lists them from sets.
var (
	supportedAddressTypes = []discoveryv1.AddressType{
		discoveryv1.AddressTypeFQDN, discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6,
	}
	supportedPortProtocols = []corev1.Protocol{corev1.ProtocolSCTP, corev1.ProtocolTCP, corev1.ProtocolUDP}
)

const (
	maxTopologyLabels = 16
	maxAddresses      = 100
	maxPorts          = 20000
	maxEndpoints      = 1000
	maxZoneHints      = 8
	maxNodeHints      = 8
)

// deprecatedTopology is documented as not writable through v1: writes are
// silently dropped, except that an update which leaves the endpoints alone
// keeps what is stored (written through the removed v1beta1 API).
func prepareEndpointSliceForCreate(obj *discoveryv1.EndpointSlice) {
	dropDeprecatedTopology(obj)
}

func prepareEndpointSliceForUpdate(obj, old *discoveryv1.EndpointSlice) {
	if !apiequality.Semantic.DeepEqual(obj.Endpoints, old.Endpoints) {
		dropDeprecatedTopology(obj)
	}
}

func dropDeprecatedTopology(obj *discoveryv1.EndpointSlice) {
	for i := range obj.Endpoints {
		obj.Endpoints[i].DeprecatedTopology = nil
	}
}

func defaultEndpointSlice(obj *discoveryv1.EndpointSlice) {
	for i := range obj.Ports {
		port := &obj.Ports[i]
		if port.Name == nil {
			port.Name = utilptr.To("")
		}
		if port.Protocol == nil {
			port.Protocol = utilptr.To(corev1.ProtocolTCP)
		}
	}
}

func validateEndpointSlice(obj *discoveryv1.EndpointSlice) field.ErrorList {
	allErrs := validateAddressType(obj.AddressType)
	allErrs = append(allErrs, validateEndpoints(obj.Endpoints, obj.AddressType, field.NewPath("endpoints"))...)
	allErrs = append(allErrs, validatePorts(obj.Ports, field.NewPath("ports"))...)
	return allErrs
}

func validateAddressType(addressType discoveryv1.AddressType) field.ErrorList {
	fldPath := field.NewPath("addressType")
	if addressType == "" {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	if !slices.Contains(supportedAddressTypes, addressType) {
		return field.ErrorList{field.NotSupported(fldPath, addressType, supportedAddressTypes)}
	}
	return nil
}

func validateEndpoints(endpoints []discoveryv1.Endpoint, addressType discoveryv1.AddressType, fldPath *field.Path) field.ErrorList {
	if len(endpoints) > maxEndpoints {
		return field.ErrorList{field.TooMany(fldPath, len(endpoints), maxEndpoints)}
	}
	var allErrs field.ErrorList
	for i := range endpoints {
		endpoint := &endpoints[i]
		idxPath := fldPath.Index(i)
		addressPath := idxPath.Child("addresses")
		if len(endpoint.Addresses) == 0 {
			allErrs = append(allErrs, field.Required(addressPath, "must contain at least 1 address"))
		} else if len(endpoint.Addresses) > maxAddresses {
			allErrs = append(allErrs, field.TooMany(addressPath, len(endpoint.Addresses), maxAddresses))
		}
		for j, address := range endpoint.Addresses {
			allErrs = append(allErrs, validateEndpointAddress(address, addressType, addressPath.Index(j))...)
		}

		if endpoint.NodeName != nil {
			for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(*endpoint.NodeName, false) {
				allErrs = append(allErrs, field.Invalid(idxPath.Child("nodeName"), *endpoint.NodeName, msg))
			}
		}

		topologyPath := idxPath.Child("deprecatedTopology")
		if len(endpoint.DeprecatedTopology) > maxTopologyLabels {
			allErrs = append(allErrs, field.TooMany(topologyPath, len(endpoint.DeprecatedTopology), maxTopologyLabels))
		}
		allErrs = append(allErrs, metav1validation.ValidateLabels(endpoint.DeprecatedTopology, topologyPath)...)

		if endpoint.Hostname != nil {
			for _, msg := range utilvalidation.IsDNS1123Label(*endpoint.Hostname) {
				allErrs = append(allErrs, field.Invalid(idxPath.Child("hostname"), *endpoint.Hostname, msg))
			}
		}
		if endpoint.Hints != nil {
			allErrs = append(allErrs, validateHints(endpoint.Hints, idxPath.Child("hints"))...)
		}
	}
	return allErrs
}

// validateEndpointAddress checks an address against the slice's type.
// Addresses of types this server does not know are left unchecked, since
// the type itself is already reported.
func validateEndpointAddress(address string, addressType discoveryv1.AddressType, fldPath *field.Path) field.ErrorList {
	switch addressType {
	case discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6:
		// Legacy (non-strict) parsing, as upstream applies to addresses
		// written before strict IP validation existed.
		if errs := utilvalidation.IsValidIPForLegacyField(fldPath, address, false, nil); len(errs) > 0 {
			return errs
		}
		var allErrs field.ErrorList
		isIPv4 := netutils.ParseIPSloppy(address).To4() != nil
		if addressType == discoveryv1.AddressTypeIPv4 && !isIPv4 {
			allErrs = append(allErrs, field.Invalid(fldPath, address, "must be an IPv4 address"))
		}
		if addressType == discoveryv1.AddressTypeIPv6 && isIPv4 {
			allErrs = append(allErrs, field.Invalid(fldPath, address, "must be an IPv6 address"))
		}
		return append(allErrs, validateEndpointIP(address, fldPath)...)
	case discoveryv1.AddressTypeFQDN:
		return utilvalidation.IsFullyQualifiedDomainName(fldPath, address)
	}
	return nil
}

// validateEndpointIP rejects addresses that cannot be a service backend:
// unspecified and loopback ones make no sense there, and link-local ones
// tend to be node-local services such as cloud metadata endpoints.
func validateEndpointIP(address string, fldPath *field.Path) field.ErrorList {
	ip := netutils.ParseIPSloppy(address)
	if ip == nil {
		return field.ErrorList{field.Invalid(fldPath, address, "must be a valid IP address")}
	}
	var allErrs field.ErrorList
	if ip.IsUnspecified() {
		allErrs = append(allErrs, field.Invalid(fldPath, address, fmt.Sprintf("may not be unspecified (%v)", address)))
	}
	if ip.IsLoopback() {
		allErrs = append(allErrs, field.Invalid(fldPath, address, "may not be in the loopback range (127.0.0.0/8, ::1/128)"))
	}
	if ip.IsLinkLocalUnicast() {
		allErrs = append(allErrs, field.Invalid(fldPath, address, "may not be in the link-local range (169.254.0.0/16, fe80::/10)"))
	}
	if ip.IsLinkLocalMulticast() {
		allErrs = append(allErrs, field.Invalid(fldPath, address, "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"))
	}
	return allErrs
}

func validatePorts(ports []discoveryv1.EndpointPort, fldPath *field.Path) field.ErrorList {
	if len(ports) > maxPorts {
		return field.ErrorList{field.TooMany(fldPath, len(ports), maxPorts)}
	}
	var allErrs field.ErrorList
	names := map[string]bool{}
	for i := range ports {
		port := &ports[i]
		idxPath := fldPath.Index(i)
		// Defaulting sets an empty name; a nil one still counts as "".
		name := utilptr.Deref(port.Name, "")
		if len(name) > 0 {
			for _, msg := range utilvalidation.IsDNS1123Label(name) {
				allErrs = append(allErrs, field.Invalid(idxPath.Child("name"), name, msg))
			}
		}
		// Consumers key ports by name, so even the unnamed port is unique.
		if names[name] {
			allErrs = append(allErrs, field.Duplicate(idxPath.Child("name"), name))
		}
		names[name] = true

		if port.Protocol == nil {
			allErrs = append(allErrs, field.Required(idxPath.Child("protocol"), ""))
		} else if !slices.Contains(supportedPortProtocols, *port.Protocol) {
			allErrs = append(allErrs, field.NotSupported(idxPath.Child("protocol"), *port.Protocol, supportedPortProtocols))
		}
		if port.AppProtocol != nil {
			for _, msg := range utilvalidation.IsQualifiedName(*port.AppProtocol) {
				allErrs = append(allErrs, field.Invalid(idxPath.Child("appProtocol"), *port.AppProtocol, msg))
			}
		}
	}
	return allErrs
}

func validateHints(hints *discoveryv1.EndpointHints, fldPath *field.Path) field.ErrorList {
	zonesPath := fldPath.Child("forZones")
	if len(hints.ForZones) > maxZoneHints {
		return field.ErrorList{field.TooMany(zonesPath, len(hints.ForZones), maxZoneHints)}
	}
	var allErrs field.ErrorList
	zones := map[string]bool{}
	for i, zone := range hints.ForZones {
		namePath := zonesPath.Index(i).Child("name")
		if zones[zone.Name] {
			allErrs = append(allErrs, field.Duplicate(namePath, zone.Name))
		}
		zones[zone.Name] = true
		for _, msg := range utilvalidation.IsValidLabelValue(zone.Name) {
			allErrs = append(allErrs, field.Invalid(namePath, zone.Name, msg))
		}
	}

	nodesPath := fldPath.Child("forNodes")
	if len(hints.ForNodes) > maxNodeHints {
		return append(allErrs, field.TooMany(nodesPath, len(hints.ForNodes), maxNodeHints))
	}
	nodes := map[string]bool{}
	for i, node := range hints.ForNodes {
		namePath := nodesPath.Index(i).Child("name")
		if nodes[node.Name] {
			allErrs = append(allErrs, field.Duplicate(namePath, node.Name))
		}
		nodes[node.Name] = true
		for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(node.Name, false) {
			allErrs = append(allErrs, field.Invalid(namePath, node.Name, msg))
		}
	}
	return allErrs
}

// Consumers interpret every address by the slice's type, so it cannot
// change under them; Validate re-checks the rest.
func validateEndpointSliceUpdate(obj, old *discoveryv1.EndpointSlice) field.ErrorList {
	return apimachineryvalidation.ValidateImmutableField(obj.AddressType, old.AddressType, field.NewPath("addressType"))
}
