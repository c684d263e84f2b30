package networking

import (
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"
	"k8s.io/utils/ptr"

	"github.com/orca-project/orca/internal/registry"
)

// Networkpolicies is the networkpolicies resource. It has no status (v1
// dropped it); the generation follows the spec. Updates may keep selector
// values and CIDRs the stored policy already held, so ValidateUpdate
// replaces Validate.
var Networkpolicies = &registry.Resource{
	Group: networkingv1.GroupName, Version: "v1", Name: "networkpolicies", Singular: "networkpolicy", Kind: "NetworkPolicy",
	Namespaced:             true,
	ShortNames:             []string{"netpol"},
	New:                    func() runtime.Object { return &networkingv1.NetworkPolicy{} },
	NewList:                func() runtime.Object { return &networkingv1.NetworkPolicyList{} },
	TracksGeneration:       true,
	Default:                registry.Typed(defaultNetworkPolicy),
	Validate:               registry.TypedValidate(validateNetworkPolicy),
	ValidateUpdate:         registry.TypedValidateUpdate(validateNetworkPolicyUpdate),
	ValidateUpdateReplaces: true,
	Table:                  networkpolicyTable,
}

// defaultNetworkPolicy is upstream's SetObjectDefaults_NetworkPolicy: a
// policy without policyTypes isolates ingress, and egress too when it has
// egress rules; ports are TCP unless they say otherwise.
func defaultNetworkPolicy(np *networkingv1.NetworkPolicy) {
	spec := &np.Spec
	if len(spec.PolicyTypes) == 0 {
		spec.PolicyTypes = []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}
		if len(spec.Egress) != 0 {
			spec.PolicyTypes = append(spec.PolicyTypes, networkingv1.PolicyTypeEgress)
		}
	}
	for i := range spec.Ingress {
		defaultNetworkPolicyPorts(spec.Ingress[i].Ports)
	}
	for i := range spec.Egress {
		defaultNetworkPolicyPorts(spec.Egress[i].Ports)
	}
}

func defaultNetworkPolicyPorts(ports []networkingv1.NetworkPolicyPort) {
	for i := range ports {
		if ports[i].Protocol == nil {
			ports[i].Protocol = ptr.To(corev1.ProtocolTCP)
		}
	}
}

// networkPolicyValidationOptions are upstream's
// NetworkPolicyValidationOptions.
type networkPolicyValidationOptions struct {
	allowInvalidLabelValueInSelector bool
	allowCIDRsEvenIfInvalid          []string
}

var networkPolicySpecPath = field.NewPath("spec")

func validateNetworkPolicy(np *networkingv1.NetworkPolicy) field.ErrorList {
	return validateNetworkPolicySpec(&np.Spec, networkPolicyValidationOptions{})
}

// validateNetworkPolicyUpdate is upstream's ValidateNetworkPolicyUpdate
// with the options of ValidationOptionsForNetworking: label values are
// relaxed when the stored pod selector is already invalid, and every CIDR
// the stored policy names may stay, wherever it moves to.
func validateNetworkPolicyUpdate(np, old *networkingv1.NetworkPolicy) field.ErrorList {
	opts := networkPolicyValidationOptions{
		allowInvalidLabelValueInSelector: len(metav1validation.ValidateLabelSelector(&old.Spec.PodSelector, metav1validation.LabelSelectorValidationOptions{}, nil)) > 0,
	}
	for _, rule := range old.Spec.Ingress {
		opts.allowCIDRsEvenIfInvalid = appendPeerCIDRs(opts.allowCIDRsEvenIfInvalid, rule.From)
	}
	for _, rule := range old.Spec.Egress {
		opts.allowCIDRsEvenIfInvalid = appendPeerCIDRs(opts.allowCIDRsEvenIfInvalid, rule.To)
	}
	return validateNetworkPolicySpec(&np.Spec, opts)
}

func appendPeerCIDRs(cidrs []string, peers []networkingv1.NetworkPolicyPeer) []string {
	for _, peer := range peers {
		if peer.IPBlock != nil {
			cidrs = append(cidrs, peer.IPBlock.CIDR)
			cidrs = append(cidrs, peer.IPBlock.Except...)
		}
	}
	return cidrs
}

// validateNetworkPolicySpec is upstream's ValidateNetworkPolicySpec.
func validateNetworkPolicySpec(spec *networkingv1.NetworkPolicySpec, opts networkPolicyValidationOptions) field.ErrorList {
	errs := validateSelector(&spec.PodSelector, opts, networkPolicySpecPath.Child("podSelector"))
	for i, rule := range spec.Ingress {
		errs = append(errs, validateNetworkPolicyRule(rule.Ports, rule.From, opts, networkPolicySpecPath.Child("ingress").Index(i), "from")...)
	}
	for i, rule := range spec.Egress {
		errs = append(errs, validateNetworkPolicyRule(rule.Ports, rule.To, opts, networkPolicySpecPath.Child("egress").Index(i), "to")...)
	}
	typesPath := networkPolicySpecPath.Child("policyTypes")
	allowed := []string{string(networkingv1.PolicyTypeIngress), string(networkingv1.PolicyTypeEgress)}
	if len(spec.PolicyTypes) > len(allowed) {
		return append(errs, field.Invalid(typesPath, &spec.PolicyTypes, "may not specify more than two policyTypes"))
	}
	for i, t := range spec.PolicyTypes {
		if t != networkingv1.PolicyTypeIngress && t != networkingv1.PolicyTypeEgress {
			errs = append(errs, field.NotSupported(typesPath.Index(i), t, allowed))
		}
	}
	return errs
}

// validateNetworkPolicyRule checks the ports and the peers (named by
// peersField, "from" or "to") of one ingress or egress rule.
func validateNetworkPolicyRule(ports []networkingv1.NetworkPolicyPort, peers []networkingv1.NetworkPolicyPeer, opts networkPolicyValidationOptions, fldPath *field.Path, peersField string) field.ErrorList {
	var errs field.ErrorList
	for i := range ports {
		errs = append(errs, validateNetworkPolicyPort(&ports[i], fldPath.Child("ports").Index(i))...)
	}
	for i := range peers {
		errs = append(errs, validateNetworkPolicyPeer(&peers[i], opts, fldPath.Child(peersField).Index(i))...)
	}
	return errs
}

func validateSelector(sel *metav1.LabelSelector, opts networkPolicyValidationOptions, fldPath *field.Path) field.ErrorList {
	return metav1validation.ValidateLabelSelector(sel, metav1validation.LabelSelectorValidationOptions{
		AllowInvalidLabelValueInSelector: opts.allowInvalidLabelValueInSelector,
	}, fldPath)
}

// validateNetworkPolicyPort is upstream's ValidateNetworkPolicyPort: a
// range (endPort) needs a numeric port to start from.
func validateNetworkPolicyPort(port *networkingv1.NetworkPolicyPort, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if p := port.Protocol; p != nil && *p != corev1.ProtocolTCP && *p != corev1.ProtocolUDP && *p != corev1.ProtocolSCTP {
		errs = append(errs, field.NotSupported(fldPath.Child("protocol"), *p, []string{string(corev1.ProtocolTCP), string(corev1.ProtocolUDP), string(corev1.ProtocolSCTP)}))
	}
	portPath, endPortPath := fldPath.Child("port"), fldPath.Child("endPort")
	switch {
	case port.Port == nil:
		if port.EndPort != nil {
			errs = append(errs, field.Invalid(endPortPath, *port.EndPort, "may not be specified when `port` is not specified"))
		}
	case port.Port.Type == intstr.Int:
		errs = append(errs, invalidEach(portPath, port.Port.IntVal, utilvalidation.IsValidPortNum(int(port.Port.IntVal)))...)
		if end := port.EndPort; end != nil {
			if *end < port.Port.IntVal {
				errs = append(errs, field.Invalid(endPortPath, *end, "must be greater than or equal to `port`"))
			}
			errs = append(errs, invalidEach(endPortPath, *end, utilvalidation.IsValidPortNum(int(*end)))...)
		}
	default:
		if port.EndPort != nil {
			errs = append(errs, field.Invalid(endPortPath, *port.EndPort, "may not be specified when `port` is non-numeric"))
		}
		errs = append(errs, invalidEach(portPath, port.Port.StrVal, utilvalidation.IsValidPortName(port.Port.StrVal))...)
	}
	return errs
}

// validateNetworkPolicyPeer is upstream's ValidateNetworkPolicyPeer: pod
// and namespace selectors combine, an ipBlock stands alone.
func validateNetworkPolicyPeer(peer *networkingv1.NetworkPolicyPeer, opts networkPolicyValidationOptions, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	peers := 0
	if peer.PodSelector != nil {
		peers++
		errs = append(errs, validateSelector(peer.PodSelector, opts, fldPath.Child("podSelector"))...)
	}
	if peer.NamespaceSelector != nil {
		peers++
		errs = append(errs, validateSelector(peer.NamespaceSelector, opts, fldPath.Child("namespaceSelector"))...)
	}
	if peer.IPBlock != nil {
		peers++
		errs = append(errs, validateIPBlock(peer.IPBlock, opts, fldPath.Child("ipBlock"))...)
	}
	switch {
	case peers == 0:
		errs = append(errs, field.Required(fldPath, "must specify a peer"))
	case peers > 1 && peer.IPBlock != nil:
		errs = append(errs, field.Forbidden(fldPath, "may not specify both ipBlock and another peer"))
	}
	return errs
}

// validateIPBlock is upstream's ValidateIPBlock, with strict CIDR
// validation (StrictIPCIDRValidation is on by default in 1.37) for the
// values the stored policy did not already hold. Each except range lies
// strictly inside cidr.
func validateIPBlock(ipb *networkingv1.IPBlock, opts networkPolicyValidationOptions, fldPath *field.Path) field.ErrorList {
	cidrPath := fldPath.Child("cidr")
	if ipb.CIDR == "" {
		return field.ErrorList{field.Required(cidrPath, "")}
	}
	errs := utilvalidation.IsValidCIDRForLegacyField(cidrPath, ipb.CIDR, true, opts.allowCIDRsEvenIfInvalid)
	_, cidr, err := netutils.ParseCIDRSloppy(ipb.CIDR)
	if err != nil {
		return errs
	}
	cidrLen, _ := cidr.Mask.Size()
	for i, s := range ipb.Except {
		exceptPath := fldPath.Child("except").Index(i)
		errs = append(errs, utilvalidation.IsValidCIDRForLegacyField(exceptPath, s, true, opts.allowCIDRsEvenIfInvalid)...)
		_, except, err := netutils.ParseCIDRSloppy(s)
		if err != nil {
			continue
		}
		if exceptLen, _ := except.Mask.Size(); !cidr.Contains(except.IP) || cidrLen >= exceptLen {
			errs = append(errs, field.Invalid(exceptPath, s, "must be a strict subset of `cidr`"))
		}
	}
	return errs
}
