package core

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"

	"github.com/orca-project/orca/internal/registry"
)

// Services is the services resource.
var Services = &registry.Resource{
	Group: "", Version: "v1", Name: "services", Singular: "service", Kind: "Service",
	Namespaced:       true,
	ShortNames:       []string{"svc"},
	Categories:       []string{"all"},
	Status:           true,
	New:              func() runtime.Object { return &corev1.Service{} },
	NewList:          func() runtime.Object { return &corev1.ServiceList{} },
	PrepareForCreate: registry.Typed(prepareServiceForCreate),
	PrepareForUpdate: registry.Typed2(prepareServiceForUpdate),
	Default:          registry.Typed(defaultService),
	// A service's name becomes a DNS label and environment variable names.
	ValidateName:   apivalidation.NameIsDNS1035Label,
	Validate:       registry.TypedValidate(validateService),
	ValidateUpdate: registry.TypedValidateUpdate(validateServiceUpdate),
	Table:          serviceTable,
	Fields:         serviceFields,
}

func prepareServiceForCreate(svc *corev1.Service) {
	svc.Status = corev1.ServiceStatus{}
	syncClusterIPs(svc)
}

// prepareServiceForUpdate does what upstream's strategy does so that a
// client that sends back a service without its allocated values (kubectl
// replace, older clients) does not look like it is changing them, and so
// that changing the type drops what no longer applies.
func prepareServiceForUpdate(svc, old *corev1.Service) {
	patchAllocatedValues(svc, old)
	normalizeClusterIPs(svc, old)
	dropTypeDependentFields(svc, old)
}

// defaultService fills in upstream's defaults. Cluster IPs, node ports and
// IP families are allocations, not defaults, and are left alone.
func defaultService(svc *corev1.Service) {
	spec := &svc.Spec
	if spec.SessionAffinity == "" {
		spec.SessionAffinity = corev1.ServiceAffinityNone
	}
	if spec.SessionAffinity == corev1.ServiceAffinityNone {
		spec.SessionAffinityConfig = nil
	}
	if spec.SessionAffinity == corev1.ServiceAffinityClientIP {
		if c := spec.SessionAffinityConfig; c == nil || c.ClientIP == nil || c.ClientIP.TimeoutSeconds == nil {
			spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{
				ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptrTo(corev1.DefaultClientIPServiceAffinitySeconds)},
			}
		}
	}
	if spec.Type == "" {
		spec.Type = corev1.ServiceTypeClusterIP
	}
	for i := range spec.Ports {
		sp := &spec.Ports[i]
		if sp.Protocol == "" {
			sp.Protocol = corev1.ProtocolTCP
		}
		if sp.TargetPort == intstr.FromInt32(0) || sp.TargetPort == intstr.FromString("") {
			sp.TargetPort = intstr.FromInt32(sp.Port)
		}
	}
	if externallyAccessible(svc) && spec.ExternalTrafficPolicy == "" {
		spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
	}
	if spec.InternalTrafficPolicy == nil &&
		(spec.Type == corev1.ServiceTypeNodePort || spec.Type == corev1.ServiceTypeLoadBalancer || spec.Type == corev1.ServiceTypeClusterIP) {
		spec.InternalTrafficPolicy = ptrTo(corev1.ServiceInternalTrafficPolicyCluster)
	}
	if spec.Type == corev1.ServiceTypeLoadBalancer {
		if spec.AllocateLoadBalancerNodePorts == nil {
			spec.AllocateLoadBalancerNodePorts = ptrTo(true)
		}
		for i, ing := range svc.Status.LoadBalancer.Ingress {
			if ing.IP != "" && ing.IPMode == nil {
				svc.Status.LoadBalancer.Ingress[i].IPMode = ptrTo(corev1.LoadBalancerIPModeVIP)
			}
		}
	}
	syncClusterIPs(svc)
}

// syncClusterIPs: a client that only knows the singular clusterIP gets the
// plural filled in for it. (The reverse is not done: a client that knows
// clusterIPs must send both.)
func syncClusterIPs(svc *corev1.Service) {
	if len(svc.Spec.ClusterIP) > 0 && len(svc.Spec.ClusterIPs) == 0 {
		svc.Spec.ClusterIPs = []string{svc.Spec.ClusterIP}
	}
}

// externallyAccessible: reachable from outside the cluster, where an
// external traffic policy has a meaning.
func externallyAccessible(svc *corev1.Service) bool {
	return svc.Spec.Type == corev1.ServiceTypeLoadBalancer ||
		svc.Spec.Type == corev1.ServiceTypeNodePort ||
		(svc.Spec.Type == corev1.ServiceTypeClusterIP && len(svc.Spec.ExternalIPs) > 0)
}

func needsClusterIP(svc *corev1.Service) bool {
	return svc.Spec.Type != corev1.ServiceTypeExternalName
}

func needsNodePort(svc *corev1.Service) bool {
	return svc.Spec.Type == corev1.ServiceTypeNodePort || svc.Spec.Type == corev1.ServiceTypeLoadBalancer
}

func needsHealthCheckNodePort(svc *corev1.Service) bool {
	return svc.Spec.Type == corev1.ServiceTypeLoadBalancer && svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal
}

func isHeadlessService(svc *corev1.Service) bool {
	return len(svc.Spec.ClusterIPs) == 1 && svc.Spec.ClusterIPs[0] == corev1.ClusterIPNone
}

func patchAllocatedValues(svc, old *corev1.Service) {
	if needsClusterIP(old) && needsClusterIP(svc) {
		if svc.Spec.ClusterIP == "" {
			svc.Spec.ClusterIP = old.Spec.ClusterIP
		}
		if len(svc.Spec.ClusterIPs) == 0 && len(old.Spec.ClusterIPs) > 0 {
			svc.Spec.ClusterIPs = old.Spec.ClusterIPs
		}
	}
	if needsNodePort(old) && needsNodePort(svc) {
		nodePorts := func(s *corev1.Service) sets.Set[int32] {
			used := sets.Set[int32]{}
			for _, p := range s.Spec.Ports {
				if p.NodePort != 0 {
					used.Insert(p.NodePort)
				}
			}
			return used
		}
		// Ports the new object already uses cannot be patched into others.
		used := nodePorts(old).Intersection(nodePorts(svc))
		byName := map[string]int32{}
		for _, p := range old.Spec.Ports {
			byName[p.Name] = p.NodePort
		}
		for i := range svc.Spec.Ports {
			p := &svc.Spec.Ports[i]
			if p.NodePort == 0 && !used.Has(byName[p.Name]) {
				p.NodePort = byName[p.Name]
			}
		}
	}
	if needsHealthCheckNodePort(old) && needsHealthCheckNodePort(svc) && svc.Spec.HealthCheckNodePort == 0 {
		svc.Spec.HealthCheckNodePort = old.Spec.HealthCheckNodePort
	}
}

func sameClusterIPs(a, b *corev1.Service) bool {
	return semanticEqual(a.Spec.ClusterIPs, b.Spec.ClusterIPs)
}

// normalizeClusterIPs works out what a client meant when it changed only
// one of clusterIP and clusterIPs.
func normalizeClusterIPs(svc, old *corev1.Service) {
	// An older client that did not send clusterIPs, keeping clusterIP.
	if len(old.Spec.ClusterIPs) > 0 && len(svc.Spec.ClusterIPs) == 0 && old.Spec.ClusterIP == svc.Spec.ClusterIP {
		svc.Spec.ClusterIPs = old.Spec.ClusterIPs
	}
	if old.Spec.ClusterIP != svc.Spec.ClusterIP && sameClusterIPs(old, svc) {
		if len(old.Spec.ClusterIP) > 0 && len(svc.Spec.ClusterIP) == 0 {
			svc.Spec.ClusterIPs = nil // clearing it
		} else {
			svc.Spec.ClusterIPs = []string{svc.Spec.ClusterIP} // changing it; validation decides
		}
	}
}

// dropTypeDependentFields wipes a field only when the new type does not use
// it, it may have been filled in automatically, and the client did not
// change it.
func dropTypeDependentFields(svc, old *corev1.Service) {
	if !needsClusterIP(svc) && sameClusterIPs(old, svc) && old.Spec.ClusterIP == svc.Spec.ClusterIP {
		svc.Spec.ClusterIP = ""
		svc.Spec.ClusterIPs = nil
	}
	if !needsClusterIP(svc) && semanticEqual(old.Spec.IPFamilies, svc.Spec.IPFamilies) {
		svc.Spec.IPFamilies = nil
	}
	if !needsClusterIP(svc) && semanticEqual(old.Spec.IPFamilyPolicy, svc.Spec.IPFamilyPolicy) {
		svc.Spec.IPFamilyPolicy = nil
	}
	if !needsNodePort(svc) {
		same := len(old.Spec.Ports) == len(svc.Spec.Ports)
		for i := 0; same && i < len(svc.Spec.Ports); i++ {
			same = old.Spec.Ports[i].NodePort == svc.Spec.Ports[i].NodePort
		}
		if same {
			for i := range svc.Spec.Ports {
				svc.Spec.Ports[i].NodePort = 0
			}
		}
	}
	if !needsHealthCheckNodePort(svc) && old.Spec.HealthCheckNodePort == svc.Spec.HealthCheckNodePort {
		svc.Spec.HealthCheckNodePort = 0
	}
	if svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
		if a, b := svc.Spec.AllocateLoadBalancerNodePorts, old.Spec.AllocateLoadBalancerNodePorts; a != nil && b != nil && *a == *b {
			svc.Spec.AllocateLoadBalancerNodePorts = nil
		}
		if semanticEqual(old.Spec.LoadBalancerClass, svc.Spec.LoadBalancerClass) {
			svc.Spec.LoadBalancerClass = nil
		}
		svc.Status.LoadBalancer = corev1.LoadBalancerStatus{}
	}
	if !externallyAccessible(svc) && old.Spec.ExternalTrafficPolicy == svc.Spec.ExternalTrafficPolicy {
		svc.Spec.ExternalTrafficPolicy = ""
	}
}

var (
	supportedSessionAffinityType          = sets.New(corev1.ServiceAffinityClientIP, corev1.ServiceAffinityNone)
	supportedServiceType                  = sets.New(corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeExternalName)
	supportedServiceInternalTrafficPolicy = sets.New(corev1.ServiceInternalTrafficPolicyCluster, corev1.ServiceInternalTrafficPolicyLocal)
	supportedServiceIPFamily              = sets.New(corev1.IPv4Protocol, corev1.IPv6Protocol)
	supportedServiceIPFamilyPolicy        = sets.New(corev1.IPFamilyPolicySingleStack, corev1.IPFamilyPolicyPreferDualStack, corev1.IPFamilyPolicyRequireDualStack)
	validExternalTrafficPolicies          = sets.New(corev1.ServiceExternalTrafficPolicyCluster, corev1.ServiceExternalTrafficPolicyLocal)
	supportedTrafficDistributions         = []string{corev1.ServiceTrafficDistributionPreferClose, corev1.ServiceTrafficDistributionPreferSameNode, corev1.ServiceTrafficDistributionPreferSameZone}
)

func validateService(svc *corev1.Service) field.ErrorList {
	var allErrs field.ErrorList
	specPath := field.NewPath("spec")
	spec := &svc.Spec

	if len(spec.Ports) == 0 && !isHeadlessService(svc) && spec.Type != corev1.ServiceTypeExternalName {
		allErrs = append(allErrs, field.Required(specPath.Child("ports"), ""))
	}
	switch spec.Type {
	case corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeNodePort:
		if isHeadlessService(svc) {
			allErrs = append(allErrs, field.Invalid(specPath.Child("clusterIPs").Index(0), spec.ClusterIPs[0],
				fmt.Sprintf("may not be set to 'None' for %s services", spec.Type)))
		}
	case corev1.ServiceTypeExternalName:
		if len(spec.ClusterIPs) > 0 {
			allErrs = append(allErrs, field.Forbidden(specPath.Child("clusterIPs"), "may not be set for ExternalName services"))
		}
		if len(spec.IPFamilies) > 0 {
			allErrs = append(allErrs, field.Forbidden(specPath.Child("ipFamilies"), "may not be set for ExternalName services"))
		}
		if spec.IPFamilyPolicy != nil {
			allErrs = append(allErrs, field.Forbidden(specPath.Child("ipFamilyPolicy"), "may not be set for ExternalName services"))
		}
		// A trailing dot marks the CNAME as fully qualified.
		if cname := strings.TrimSuffix(spec.ExternalName, "."); len(cname) > 0 {
			allErrs = append(allErrs, validateDNS1123Subdomain(cname, specPath.Child("externalName"))...)
		} else {
			allErrs = append(allErrs, field.Required(specPath.Child("externalName"), ""))
		}
	}

	allPortNames := sets.Set[string]{}
	portsPath := specPath.Child("ports")
	for i := range spec.Ports {
		allErrs = append(allErrs, validateServicePort(&spec.Ports[i], len(spec.Ports) > 1, allPortNames, portsPath.Index(i))...)
	}
	if spec.Selector != nil {
		allErrs = append(allErrs, metav1validation.ValidateLabels(spec.Selector, specPath.Child("selector"))...)
	}
	if len(spec.SessionAffinity) == 0 {
		allErrs = append(allErrs, field.Required(specPath.Child("sessionAffinity"), ""))
	} else if !supportedSessionAffinityType.Has(spec.SessionAffinity) {
		allErrs = append(allErrs, field.NotSupported(specPath.Child("sessionAffinity"), spec.SessionAffinity, sets.List(supportedSessionAffinityType)))
	}
	switch spec.SessionAffinity {
	case corev1.ServiceAffinityClientIP:
		allErrs = append(allErrs, validateClientIPAffinityConfig(spec.SessionAffinityConfig, specPath.Child("sessionAffinityConfig"))...)
	case corev1.ServiceAffinityNone:
		if spec.SessionAffinityConfig != nil {
			allErrs = append(allErrs, field.Forbidden(specPath.Child("sessionAffinityConfig"), fmt.Sprintf("must not be set when session affinity is %s", corev1.ServiceAffinityNone)))
		}
	}
	allErrs = append(allErrs, validateServiceClusterIPsRelatedFields(svc)...)
	for i, ip := range spec.ExternalIPs {
		p := specPath.Child("externalIPs").Index(i)
		if errs := validation.IsValidIP(p, ip); len(errs) != 0 {
			allErrs = append(allErrs, errs...)
		} else {
			allErrs = append(allErrs, validateNonSpecialIP(ip, p)...)
		}
	}
	if len(spec.Type) == 0 {
		allErrs = append(allErrs, field.Required(specPath.Child("type"), ""))
	} else if !supportedServiceType.Has(spec.Type) {
		allErrs = append(allErrs, field.NotSupported(specPath.Child("type"), spec.Type, sets.List(supportedServiceType)))
	}
	if spec.Type == corev1.ServiceTypeClusterIP {
		for i := range spec.Ports {
			if spec.Ports[i].NodePort != 0 {
				allErrs = append(allErrs, field.Forbidden(portsPath.Index(i).Child("nodePort"), "may not be used when `type` is 'ClusterIP'"))
			}
		}
	}
	// Node ports and ports are unique per protocol.
	nodePorts := map[corev1.ServicePort]bool{}
	for i, port := range spec.Ports {
		if port.NodePort == 0 {
			continue
		}
		key := corev1.ServicePort{Protocol: port.Protocol, NodePort: port.NodePort}
		if nodePorts[key] {
			allErrs = append(allErrs, field.Duplicate(portsPath.Index(i).Child("nodePort"), port.NodePort))
		}
		nodePorts[key] = true
	}
	ports := map[corev1.ServicePort]bool{}
	for i, port := range spec.Ports {
		key := corev1.ServicePort{Protocol: port.Protocol, Port: port.Port}
		if ports[key] {
			allErrs = append(allErrs, field.Duplicate(portsPath.Index(i), key))
		}
		ports[key] = true
	}

	if len(spec.LoadBalancerSourceRanges) > 0 {
		// Upstream capitalises this path.
		p := specPath.Child("LoadBalancerSourceRanges")
		if spec.Type != corev1.ServiceTypeLoadBalancer {
			allErrs = append(allErrs, field.Forbidden(p, "may only be used when `type` is 'LoadBalancer'"))
		}
		for i, v := range spec.LoadBalancerSourceRanges {
			// Space padding is tolerated, a leftover of the annotation days.
			allErrs = append(allErrs, validation.IsValidCIDR(p.Index(i), strings.TrimSpace(v))...)
		}
	} else if val, ok := svc.Annotations[corev1.AnnotationLoadBalancerSourceRangesKey]; ok {
		p := field.NewPath("metadata", "annotations").Key(corev1.AnnotationLoadBalancerSourceRangesKey)
		if spec.Type != corev1.ServiceTypeLoadBalancer {
			allErrs = append(allErrs, field.Forbidden(p, "may only be used when `type` is 'LoadBalancer'"))
		}
		if val = strings.TrimSpace(val); val != "" {
			for _, v := range strings.Split(val, ",") {
				allErrs = append(allErrs, validation.IsValidCIDR(p, strings.TrimSpace(v))...)
			}
		}
	}
	if spec.AllocateLoadBalancerNodePorts != nil && spec.Type != corev1.ServiceTypeLoadBalancer {
		allErrs = append(allErrs, field.Forbidden(specPath.Child("allocateLoadBalancerNodePorts"), "may only be used when `type` is 'LoadBalancer'"))
	}
	if spec.Type == corev1.ServiceTypeLoadBalancer && spec.AllocateLoadBalancerNodePorts == nil {
		allErrs = append(allErrs, field.Required(specPath.Child("allocateLoadBalancerNodePorts"), ""))
	}
	if spec.Type == corev1.ServiceTypeLoadBalancer {
		if spec.LoadBalancerClass != nil {
			allErrs = append(allErrs, validateQualifiedName(*spec.LoadBalancerClass, specPath.Child("loadBalancerClass"))...)
		}
	} else if spec.LoadBalancerClass != nil {
		allErrs = append(allErrs, field.Forbidden(specPath.Child("loadBalancerClass"), "may only be used when `type` is 'LoadBalancer'"))
	}

	if !externallyAccessible(svc) {
		if spec.ExternalTrafficPolicy != "" {
			allErrs = append(allErrs, field.Invalid(specPath.Child("externalTrafficPolicy"), spec.ExternalTrafficPolicy, "may only be set for externally-accessible services"))
		}
	} else if spec.ExternalTrafficPolicy == "" {
		allErrs = append(allErrs, field.Required(specPath.Child("externalTrafficPolicy"), ""))
	} else if !validExternalTrafficPolicies.Has(spec.ExternalTrafficPolicy) {
		allErrs = append(allErrs, field.NotSupported(specPath.Child("externalTrafficPolicy"), spec.ExternalTrafficPolicy, sets.List(validExternalTrafficPolicies)))
	}
	// healthCheckNodePort is allocated with the node ports; only its form is
	// checked here, and that it is not set where it means nothing.
	if !needsHealthCheckNodePort(svc) {
		if spec.HealthCheckNodePort != 0 {
			allErrs = append(allErrs, field.Invalid(specPath.Child("healthCheckNodePort"), spec.HealthCheckNodePort,
				"may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'"))
		}
	} else if spec.HealthCheckNodePort != 0 {
		for _, msg := range validation.IsValidPortNum(int(spec.HealthCheckNodePort)) {
			allErrs = append(allErrs, field.Invalid(specPath.Child("healthCheckNodePort"), spec.HealthCheckNodePort, msg))
		}
	}
	if spec.InternalTrafficPolicy == nil {
		// Other types may omit it: upstream did not check it before it went
		// beta and stored objects must stay valid.
		if spec.Type == corev1.ServiceTypeNodePort || spec.Type == corev1.ServiceTypeLoadBalancer || spec.Type == corev1.ServiceTypeClusterIP {
			allErrs = append(allErrs, field.Required(specPath.Child("internalTrafficPolicy"), ""))
		}
	} else if !supportedServiceInternalTrafficPolicy.Has(*spec.InternalTrafficPolicy) {
		allErrs = append(allErrs, field.NotSupported(specPath.Child("internalTrafficPolicy"), *spec.InternalTrafficPolicy, sets.List(supportedServiceInternalTrafficPolicy)))
	}
	if td := spec.TrafficDistribution; td != nil && !sets.New(supportedTrafficDistributions...).Has(*td) {
		allErrs = append(allErrs, field.NotSupported(specPath.Child("trafficDistribution"), *td, supportedTrafficDistributions))
	}
	return allErrs
}

func validateServicePort(sp *corev1.ServicePort, requireName bool, allNames sets.Set[string], fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if requireName && len(sp.Name) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("name"), ""))
	} else if len(sp.Name) != 0 {
		allErrs = append(allErrs, validateDNS1123Label(sp.Name, fldPath.Child("name"))...)
		if allNames.Has(sp.Name) {
			allErrs = append(allErrs, field.Duplicate(fldPath.Child("name"), sp.Name))
		} else {
			allNames.Insert(sp.Name)
		}
	}
	for _, msg := range validation.IsValidPortNum(int(sp.Port)) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("port"), sp.Port, msg))
	}
	if len(sp.Protocol) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("protocol"), ""))
	} else if !supportedPortProtocols.Has(sp.Protocol) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("protocol"), sp.Protocol, sets.List(supportedPortProtocols)))
	}
	allErrs = append(allErrs, validatePortNumOrName(sp.TargetPort, fldPath.Child("targetPort"))...)
	if sp.NodePort != 0 {
		// The node port range is the allocator's business.
		for _, msg := range validation.IsValidPortNum(int(sp.NodePort)) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("nodePort"), sp.NodePort, msg))
		}
	}
	if sp.AppProtocol != nil {
		allErrs = append(allErrs, validateQualifiedName(*sp.AppProtocol, fldPath.Child("appProtocol"))...)
	}
	return allErrs
}

func validateClientIPAffinityConfig(cfg *corev1.SessionAffinityConfig, fldPath *field.Path) field.ErrorList {
	when := fmt.Sprintf("when session affinity type is %s", corev1.ServiceAffinityClientIP)
	switch {
	case cfg == nil:
		return field.ErrorList{field.Required(fldPath, when)}
	case cfg.ClientIP == nil:
		return field.ErrorList{field.Required(fldPath.Child("clientIP"), when)}
	case cfg.ClientIP.TimeoutSeconds == nil:
		return field.ErrorList{field.Required(fldPath.Child("clientIP").Child("timeoutSeconds"), when)}
	}
	if t := *cfg.ClientIP.TimeoutSeconds; t <= 0 || t > maxClientIPServiceAffinitySeconds {
		return field.ErrorList{field.Invalid(fldPath.Child("clientIP").Child("timeoutSeconds"), t,
			fmt.Sprintf("must be greater than 0 and less than %d", maxClientIPServiceAffinitySeconds))}
	}
	return nil
}

// validateServiceClusterIPsRelatedFields checks clusterIP, clusterIPs,
// ipFamilies and ipFamilyPolicy against each other.
func validateServiceClusterIPsRelatedFields(svc *corev1.Service) field.ErrorList {
	// ExternalName services have none of these (checked above).
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	var allErrs field.ErrorList
	spec := &svc.Spec
	specPath := field.NewPath("spec")
	clusterIPsPath := specPath.Child("clusterIPs")
	ipFamiliesPath := specPath.Child("ipFamilies")

	if len(spec.ClusterIP) != 0 {
		if len(spec.ClusterIPs) == 0 {
			allErrs = append(allErrs, field.Required(clusterIPsPath, ""))
		} else if spec.ClusterIPs[0] != spec.ClusterIP {
			allErrs = append(allErrs, field.Invalid(clusterIPsPath, spec.ClusterIPs, "first value must match `clusterIP`"))
		}
	} else if len(spec.ClusterIPs) != 0 {
		allErrs = append(allErrs, field.Invalid(clusterIPsPath, spec.ClusterIPs, "must be empty when `clusterIP` is not specified"))
	}
	seen := sets.Set[corev1.IPFamily]{}
	for i, f := range spec.IPFamilies {
		if !supportedServiceIPFamily.Has(f) {
			allErrs = append(allErrs, field.NotSupported(ipFamiliesPath.Index(i), f, sets.List(supportedServiceIPFamily)))
		}
		if seen.Has(f) {
			allErrs = append(allErrs, field.Duplicate(ipFamiliesPath.Index(i), f))
		}
		seen.Insert(f)
	}
	if p := spec.IPFamilyPolicy; p != nil && !supportedServiceIPFamilyPolicy.Has(*p) {
		allErrs = append(allErrs, field.NotSupported(specPath.Child("ipFamilyPolicy"), *p, sets.List(supportedServiceIPFamilyPolicy)))
	}
	hasInvalidIPs := false
	for i, ip := range spec.ClusterIPs {
		if i == 0 && ip == corev1.ClusterIPNone {
			if len(spec.ClusterIPs) > 1 {
				hasInvalidIPs = true
				allErrs = append(allErrs, field.Invalid(clusterIPsPath, spec.ClusterIPs, "'None' must be the first and only value"))
			}
			continue
		}
		errs := validation.IsValidIP(clusterIPsPath.Index(i), ip)
		hasInvalidIPs = hasInvalidIPs || len(errs) != 0
		allErrs = append(allErrs, errs...)
	}
	if len(spec.ClusterIPs) > 2 {
		allErrs = append(allErrs, field.Invalid(clusterIPsPath, spec.ClusterIPs, "may only hold up to 2 values"))
	}
	// Family checks on addresses already known to be bad would only add noise.
	if hasInvalidIPs {
		return allErrs
	}
	if len(spec.ClusterIPs) > 1 {
		if dual, err := netutils.IsDualStackIPStrings(spec.ClusterIPs); err != nil || !dual {
			allErrs = append(allErrs, field.Invalid(clusterIPsPath, spec.ClusterIPs, "may specify no more than one IP for each IP family"))
		}
	}
	if !isHeadlessService(svc) {
		for i, ip := range spec.ClusterIPs {
			if i >= len(spec.IPFamilies) {
				break
			}
			if spec.IPFamilies[i] == corev1.IPv4Protocol && netutils.IsIPv6String(ip) {
				allErrs = append(allErrs, field.Invalid(clusterIPsPath.Index(i), ip, fmt.Sprintf("expected an IPv4 value as indicated by `ipFamilies[%v]`", i)))
			}
			if spec.IPFamilies[i] == corev1.IPv6Protocol && !netutils.IsIPv6String(ip) {
				allErrs = append(allErrs, field.Invalid(clusterIPsPath.Index(i), ip, fmt.Sprintf("expected an IPv6 value as indicated by `ipFamilies[%v]`", i)))
			}
		}
	}
	return allErrs
}

// validateServiceUpdate: allocated addresses stay put. A secondary IP or
// family may be added or released (dual-stack upgrade or downgrade), but
// the primary ones may not change unless the service goes to or from
// ExternalName. The load balancer class and health check node port are
// fixed too.
func validateServiceUpdate(svc, old *corev1.Service) field.ErrorList {
	allErrs := validateUpgradeDowngradeClusterIPs(old, svc)
	allErrs = append(allErrs, validateUpgradeDowngradeIPFamilies(old, svc)...)
	if old.Spec.Type == corev1.ServiceTypeLoadBalancer && svc.Spec.Type == corev1.ServiceTypeLoadBalancer &&
		!semanticEqual(old.Spec.LoadBalancerClass, svc.Spec.LoadBalancerClass) {
		allErrs = append(allErrs, field.Invalid(field.NewPath("spec", "loadBalancerClass"), svc.Spec.LoadBalancerClass, "may not change once set"))
	}
	if needsHealthCheckNodePort(old) && needsHealthCheckNodePort(svc) && svc.Spec.HealthCheckNodePort != old.Spec.HealthCheckNodePort {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("spec", "healthCheckNodePort"), "field is immutable"))
	}
	return allErrs
}

func validateUpgradeDowngradeClusterIPs(old, svc *corev1.Service) field.ErrorList {
	if svc.Spec.Type == corev1.ServiceTypeExternalName || old.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	if isHeadlessService(old) && isHeadlessService(svc) {
		return nil
	}
	var allErrs field.ErrorList
	p := field.NewPath("spec", "clusterIPs")
	oldIPs, newIPs := old.Spec.ClusterIPs, svc.Spec.ClusterIPs
	switch {
	case len(oldIPs) == len(newIPs):
		for i, ip := range oldIPs {
			if ip != newIPs[i] {
				allErrs = append(allErrs, field.Invalid(p.Index(i), newIPs, "may not change once set"))
			}
		}
	case len(oldIPs) > len(newIPs):
		if len(newIPs) == 0 {
			allErrs = append(allErrs, field.Invalid(p.Index(0), newIPs, "primary clusterIP can not be unset"))
		}
		if len(oldIPs) > 0 && len(newIPs) > 0 && newIPs[0] != oldIPs[0] {
			allErrs = append(allErrs, field.Invalid(p.Index(0), newIPs, "may not change once set"))
		}
		// Releasing the secondary IP is a downgrade the client must ask for.
		if len(newIPs) == 1 && (svc.Spec.IPFamilyPolicy == nil || *svc.Spec.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack) {
			allErrs = append(allErrs, field.Invalid(field.NewPath("spec", "ipFamilyPolicy"), svc.Spec.IPFamilyPolicy, "must be set to 'SingleStack' when releasing the secondary clusterIP"))
		}
	default:
		if len(oldIPs) > 0 && newIPs[0] != oldIPs[0] {
			allErrs = append(allErrs, field.Invalid(p.Index(0), newIPs, "may not change once set"))
		}
	}
	return allErrs
}

func validateUpgradeDowngradeIPFamilies(old, svc *corev1.Service) field.ErrorList {
	if svc.Spec.Type == corev1.ServiceTypeExternalName || old.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	// Headless services (or those becoming or ceasing to be) may change
	// families freely.
	if isHeadlessService(old) || isHeadlessService(svc) {
		return nil
	}
	var allErrs field.ErrorList
	p := field.NewPath("spec", "ipFamilies")
	oldF, newF := old.Spec.IPFamilies, svc.Spec.IPFamilies
	switch {
	case len(oldF) == len(newF):
		for i, f := range oldF {
			if f != newF[i] {
				allErrs = append(allErrs, field.Invalid(p.Index(0), newF, "may not change once set"))
			}
		}
	case len(oldF) > len(newF):
		if len(svc.Spec.ClusterIPs) == 0 {
			allErrs = append(allErrs, field.Invalid(p.Index(0), newF, "primary ipFamily can not be unset"))
		}
		if len(newF) > 0 && newF[0] != oldF[0] {
			allErrs = append(allErrs, field.Invalid(p.Index(0), svc.Spec.ClusterIPs, "may not change once set"))
		}
		if len(newF) == 1 && (svc.Spec.IPFamilyPolicy == nil || *svc.Spec.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack) {
			allErrs = append(allErrs, field.Invalid(field.NewPath("spec", "ipFamilyPolicy"), svc.Spec.IPFamilyPolicy, "must be set to 'SingleStack' when releasing the secondary ipFamily"))
		}
	default:
		if len(oldF) > 0 && len(newF) > 0 && newF[0] != oldF[0] {
			allErrs = append(allErrs, field.Invalid(p.Index(0), svc.Spec.ClusterIPs, "may not change once set"))
		}
	}
	return allErrs
}
