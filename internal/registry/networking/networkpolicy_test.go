package networking

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// networkPolicy is upstream's makeValidNetworkPolicy, changed by tweaks.
func networkPolicy(tweaks ...func(*networkingv1.NetworkPolicy)) *networkingv1.NetworkPolicy {
	np := &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "foo", Namespace: "bar"},
		Spec:       networkingv1.NetworkPolicySpec{PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}},
	}
	for _, tweak := range tweaks {
		tweak(np)
	}
	return np
}

// port is upstream's makePort: a zero port or endPort is left unset.
func port(proto *corev1.Protocol, p intstr.IntOrString, endPort int32) networkingv1.NetworkPolicyPort {
	r := networkingv1.NetworkPolicyPort{Protocol: proto}
	if p != intstr.FromInt32(0) && p != intstr.FromString("") {
		r.Port = &p
	}
	if endPort != 0 {
		r.EndPort = ptr.To(endPort)
	}
	return r
}

// ingressRule and egressRule add a rule of the given ports and peers.
func ingressRule(ports []networkingv1.NetworkPolicyPort, peers ...networkingv1.NetworkPolicyPeer) func(*networkingv1.NetworkPolicy) {
	return func(np *networkingv1.NetworkPolicy) {
		np.Spec.Ingress = append(np.Spec.Ingress, networkingv1.NetworkPolicyIngressRule{Ports: ports, From: peers})
	}
}

func egressRule(ports []networkingv1.NetworkPolicyPort, peers ...networkingv1.NetworkPolicyPeer) func(*networkingv1.NetworkPolicy) {
	return func(np *networkingv1.NetworkPolicy) {
		np.Spec.Egress = append(np.Spec.Egress, networkingv1.NetworkPolicyEgressRule{Ports: ports, To: peers})
	}
}

func ports(p ...networkingv1.NetworkPolicyPort) []networkingv1.NetworkPolicyPort { return p }

func policyTypes(types ...networkingv1.PolicyType) func(*networkingv1.NetworkPolicy) {
	return func(np *networkingv1.NetworkPolicy) { np.Spec.PolicyTypes = types }
}

func selector(k, v string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{k: v}}
}

func ipBlock(cidr string, except ...string) networkingv1.NetworkPolicyPeer {
	return networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: cidr, Except: except}}
}

var (
	tcp  = ptr.To(corev1.ProtocolTCP)
	udp  = ptr.To(corev1.ProtocolUDP)
	sctp = ptr.To(corev1.ProtocolSCTP)

	ipv4Block = ipBlock("192.168.0.0/16", "192.168.3.0/24", "192.168.4.0/24")
	ipv6Block = ipBlock("fd00:192:168::/48", "fd00:192:168:3::/64", "fd00:192:168:4::/64")
)

const badSelectorKey = "NoUppercaseOrSpecialCharsLike=Equals"

func TestValidateNetworkPolicy(t *testing.T) {
	somePorts := []networkingv1.NetworkPolicyPort{
		port(nil, intstr.FromInt32(80), 0),
		port(tcp, intstr.FromInt32(0), 0),
		port(tcp, intstr.FromInt32(443), 0),
		port(udp, intstr.FromString("dns"), 0),
		port(sctp, intstr.FromInt32(7777), 0),
	}
	const egressPort = "spec.egress[0].ports"
	tests := []struct {
		name   string
		tweaks []func(*networkingv1.NetworkPolicy)
		want   []wantErr
	}{
		{"empty ingress rule", []func(*networkingv1.NetworkPolicy){ingressRule(nil)}, nil},
		{"ingress ports", []func(*networkingv1.NetworkPolicy){ingressRule(somePorts)}, nil},
		{"egress ports", []func(*networkingv1.NetworkPolicy){egressRule(somePorts)}, nil},
		{"pod and namespace selectors", []func(*networkingv1.NetworkPolicy){
			ingressRule(nil, networkingv1.NetworkPolicyPeer{PodSelector: selector("e", "f"), NamespaceSelector: selector("c", "d")}),
		}, nil},
		{"IPv4 blocks", []func(*networkingv1.NetworkPolicy){ingressRule(nil, ipv4Block), egressRule(nil, ipv4Block), policyTypes("Ingress", "Egress")}, nil},
		{"IPv6 blocks", []func(*networkingv1.NetworkPolicy){ingressRule(nil, ipv6Block), egressRule(nil, ipv6Block), policyTypes("Egress")}, nil},
		{"port ranges", []func(*networkingv1.NetworkPolicy){
			egressRule(ports(port(nil, intstr.FromInt32(30000), 32768), port(nil, intstr.FromInt32(32000), 32768))),
			ingressRule(ports(port(tcp, intstr.FromInt32(32768), 32768))),
		}, nil},
		{"empty peer", []func(*networkingv1.NetworkPolicy){ingressRule(nil, networkingv1.NetworkPolicyPeer{}), egressRule(nil, networkingv1.NetworkPolicyPeer{})}, []wantErr{
			{Type: field.ErrorTypeRequired, Field: "spec.ingress[0].from[0]", Detail: "must specify a peer"},
			{Type: field.ErrorTypeRequired, Field: "spec.egress[0].to[0]", Detail: "must specify a peer"},
		}},
		{"namespaceSelector and ipBlock", []func(*networkingv1.NetworkPolicy){
			ingressRule(nil, networkingv1.NetworkPolicyPeer{NamespaceSelector: selector("c", "d"), IPBlock: ipv4Block.IPBlock}),
		}, []wantErr{{Type: field.ErrorTypeForbidden, Field: "spec.ingress[0].from[0]", Detail: "may not specify both ipBlock and another peer"}}},
		{"podSelector and ipBlock", []func(*networkingv1.NetworkPolicy){
			egressRule(nil, networkingv1.NetworkPolicyPeer{PodSelector: selector("c", "d"), IPBlock: ipv4Block.IPBlock}),
		}, []wantErr{{Type: field.ErrorTypeForbidden, Field: "spec.egress[0].to[0]", Detail: "may not specify both ipBlock and another peer"}}},
		{"invalid selectors", []func(*networkingv1.NetworkPolicy){
			func(np *networkingv1.NetworkPolicy) { np.Spec.PodSelector = *selector(badSelectorKey, "b") },
			ingressRule(nil, networkingv1.NetworkPolicyPeer{PodSelector: selector(badSelectorKey, "b"), NamespaceSelector: selector(badSelectorKey, "b")}),
			egressRule(nil, networkingv1.NetworkPolicyPeer{PodSelector: selector("a", "not a value")}),
		}, []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.podSelector.matchLabels"},
			{Type: field.ErrorTypeInvalid, Field: "spec.ingress[0].from[0].podSelector.matchLabels"},
			{Type: field.ErrorTypeInvalid, Field: "spec.ingress[0].from[0].namespaceSelector.matchLabels"},
			{Type: field.ErrorTypeInvalid, Field: "spec.egress[0].to[0].podSelector.matchLabels"},
		}},
		{"invalid protocol", []func(*networkingv1.NetworkPolicy){ingressRule(ports(port(ptr.To(corev1.Protocol("ICMP")), intstr.FromInt32(80), 0)))}, []wantErr{
			{Type: field.ErrorTypeNotSupported, Field: "spec.ingress[0].ports[0].protocol", Detail: `supported values: "TCP", "UDP", "SCTP"`},
		}},
		{"invalid ports", []func(*networkingv1.NetworkPolicy){
			ingressRule(ports(port(tcp, intstr.FromInt32(123456789), 0))),
			egressRule(ports(port(tcp, intstr.FromString("!@#$"), 0))),
		}, []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.ingress[0].ports[0].port", Detail: "must be between 1 and 65535, inclusive"},
			{Type: field.ErrorTypeInvalid, Field: egressPort + "[0].port", Detail: "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)"},
			{Type: field.ErrorTypeInvalid, Field: egressPort + "[0].port", Detail: "must contain at least one letter (a-z)"},
		}},
		{"invalid port ranges", []func(*networkingv1.NetworkPolicy){
			egressRule(ports(
				port(udp, intstr.FromInt32(35000), 32768),
				port(tcp, intstr.FromInt32(0), 32768),
				port(tcp, intstr.FromString("https"), 32768),
				port(tcp, intstr.FromInt32(30000), 65537),
				port(nil, intstr.FromInt32(32000), 32768),
			)),
		}, []wantErr{
			{Type: field.ErrorTypeInvalid, Field: egressPort + "[0].endPort", Detail: "must be greater than or equal to `port`"},
			{Type: field.ErrorTypeInvalid, Field: egressPort + "[1].endPort", Detail: "may not be specified when `port` is not specified"},
			{Type: field.ErrorTypeInvalid, Field: egressPort + "[2].endPort", Detail: "may not be specified when `port` is non-numeric"},
			{Type: field.ErrorTypeInvalid, Field: egressPort + "[3].endPort", Detail: "must be between 1 and 65535, inclusive"},
		}},
		{"missing cidr", []func(*networkingv1.NetworkPolicy){ingressRule(nil, ipBlock("", "192.168.3.0/24"))}, []wantErr{
			{Type: field.ErrorTypeRequired, Field: "spec.ingress[0].from[0].ipBlock.cidr"},
		}},
		{"invalid cidrs", []func(*networkingv1.NetworkPolicy){ingressRule(nil, ipBlock("192.168.5.6"), ipBlock("fd00:192:168::"), ipBlock("001.002.003.000/0"))}, []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.ingress[0].from[0].ipBlock.cidr"},
			{Type: field.ErrorTypeInvalid, Field: "spec.ingress[0].from[1].ipBlock.cidr"},
			{Type: field.ErrorTypeInvalid, Field: "spec.ingress[0].from[2].ipBlock.cidr", Detail: "must not have leading 0s in IP or prefix length"},
		}},
		{"invalid excepts", []func(*networkingv1.NetworkPolicy){ingressRule(nil, ipBlock("192.168.0.0/16", "", " ", "300.300.300.300"))}, []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.ingress[0].from[0].ipBlock.except[0]"},
			{Type: field.ErrorTypeInvalid, Field: "spec.ingress[0].from[0].ipBlock.except[1]"},
			{Type: field.ErrorTypeInvalid, Field: "spec.ingress[0].from[0].ipBlock.except[2]"},
		}},
		{"except outside cidr", []func(*networkingv1.NetworkPolicy){
			ingressRule(nil, ipBlock("192.168.8.0/24", "192.168.9.1/32"), ipBlock("192.168.0.0/24", "192.168.0.0/24"), ipBlock("fd00:192:168:1::/64", "fd00:192:168:2::/64")),
		}, []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.ingress[0].from[0].ipBlock.except[0]", Detail: "must be a strict subset of `cidr`"},
			{Type: field.ErrorTypeInvalid, Field: "spec.ingress[0].from[1].ipBlock.except[0]", Detail: "must be a strict subset of `cidr`"},
			{Type: field.ErrorTypeInvalid, Field: "spec.ingress[0].from[2].ipBlock.except[0]", Detail: "must be a strict subset of `cidr`"},
		}},
		{"invalid policyTypes", []func(*networkingv1.NetworkPolicy){egressRule(nil, ipv4Block), policyTypes("foo", "bar")}, []wantErr{
			{Type: field.ErrorTypeNotSupported, Field: "spec.policyTypes[0]", Detail: `supported values: "Ingress", "Egress"`},
			{Type: field.ErrorTypeNotSupported, Field: "spec.policyTypes[1]"},
		}},
		{"too many policyTypes", []func(*networkingv1.NetworkPolicy){egressRule(nil, ipv4Block), policyTypes("foo", "bar", "baz")}, []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.policyTypes", Detail: "may not specify more than two policyTypes"},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkErrs(t, validateNetworkPolicy(networkPolicy(tc.tweaks...)), tc.want)
		})
	}
}

// Upstream shows the bad policy types as a list and the bad protocol as
// a string; the messages must read the same.
func TestValidateNetworkPolicyMessages(t *testing.T) {
	tests := []struct {
		np   *networkingv1.NetworkPolicy
		want string
	}{
		{networkPolicy(policyTypes("foo", "bar", "baz")), `spec.policyTypes: Invalid value: ["foo","bar","baz"]: may not specify more than two policyTypes`},
		{networkPolicy(ingressRule(ports(port(ptr.To(corev1.Protocol("ICMP")), intstr.FromInt32(80), 0)))),
			`spec.ingress[0].ports[0].protocol: Unsupported value: "ICMP": supported values: "TCP", "UDP", "SCTP"`},
		{networkPolicy(egressRule(ports(port(tcp, intstr.FromInt32(35000), 32768)))),
			"spec.egress[0].ports[0].endPort: Invalid value: 32768: must be greater than or equal to `port`"},
	}
	for _, tc := range tests {
		errs := validateNetworkPolicy(tc.np)
		if len(errs) != 1 || errs[0].Error() != tc.want {
			t.Errorf("got %v\nwant %s", errs, tc.want)
		}
	}
}

func TestValidateNetworkPolicyUpdate(t *testing.T) {
	block := func(except ...string) *networkingv1.NetworkPolicy {
		return networkPolicy(ingressRule(nil, ipBlock("192.168.0.0/16", except...)))
	}
	// Only the values of expressions are relaxed, as upstream's
	// AllowInvalidLabelValueInSelector does.
	badValue := func(key string) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: key, Operator: metav1.LabelSelectorOpIn, Values: []string{"not a value"}},
		}}
	}
	badSelector := networkPolicy(func(np *networkingv1.NetworkPolicy) { np.Spec.PodSelector = *badValue("a") })
	tests := []struct {
		name     string
		old, new *networkingv1.NetworkPolicy
		want     []wantErr
	}{
		{"no change", networkPolicy(), networkPolicy(), nil},
		{"change spec", networkPolicy(func(np *networkingv1.NetworkPolicy) { np.Spec.PodSelector = metav1.LabelSelector{} }), networkPolicy(), nil},
		{"fix pre-existing invalid CIDR", block("192.168.2.0/24", "192.168.3.1/24"), block("192.168.2.0/24", "192.168.3.0/24"), nil},
		{"keep pre-existing invalid CIDR", block("192.168.2.0/24", "192.168.3.1/24"), block("192.168.1.0/24", "192.168.2.0/24", "192.168.3.1/24"), nil},
		{"move pre-existing invalid CIDR", block("192.168.3.1/24"), networkPolicy(egressRule(nil, ipBlock("192.168.0.0/16", "192.168.3.1/24"))), nil},
		{"add new invalid CIDR", block("192.168.2.0/24", "192.168.3.0/24"), block("192.168.1.1/24", "192.168.2.0/24", "192.168.3.0/24"), []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.ingress[0].from[0].ipBlock.except[0]"},
		}},
		{"new invalid CIDR still a subset", block("192.168.3.1/24"), block("192.169.0.0/24"), []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.ingress[0].from[0].ipBlock.except[0]", Detail: "must be a strict subset of `cidr`"},
		}},
		{"keep invalid pod selector value", badSelector, badSelector, nil},
		{"invalid selector value anywhere once the pod selector is", badSelector, networkPolicy(func(np *networkingv1.NetworkPolicy) {
			np.Spec.PodSelector = *badValue("a")
			ingressRule(nil, networkingv1.NetworkPolicyPeer{NamespaceSelector: badValue("b")})(np)
		}), nil},
		{"label values are not relaxed", badSelector, networkPolicy(func(np *networkingv1.NetworkPolicy) {
			np.Spec.PodSelector = *badValue("a")
			np.Spec.PodSelector.MatchLabels = map[string]string{"a": "not a value"}
		}), []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.podSelector.matchLabels"}}},
		{"invalid selector value added", networkPolicy(), badSelector, []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.podSelector.matchExpressions[0].values[0]"},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkErrs(t, validateNetworkPolicyUpdate(tc.new, tc.old), tc.want)
		})
	}
}

func TestDefaultNetworkPolicy(t *testing.T) {
	tests := []struct {
		name   string
		tweaks []func(*networkingv1.NetworkPolicy)
		want   []networkingv1.PolicyType
	}{
		{"no rules", nil, []networkingv1.PolicyType{"Ingress"}},
		{"ingress rules", []func(*networkingv1.NetworkPolicy){ingressRule(nil, ipv4Block)}, []networkingv1.PolicyType{"Ingress"}},
		{"egress rules", []func(*networkingv1.NetworkPolicy){egressRule(nil, ipv4Block)}, []networkingv1.PolicyType{"Ingress", "Egress"}},
		{"given", []func(*networkingv1.NetworkPolicy){egressRule(nil, ipv4Block), policyTypes("Egress")}, []networkingv1.PolicyType{"Egress"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			np := networkPolicy(tc.tweaks...)
			defaultNetworkPolicy(np)
			if !reflect.DeepEqual(np.Spec.PolicyTypes, tc.want) {
				t.Errorf("policyTypes = %v, want %v", np.Spec.PolicyTypes, tc.want)
			}
		})
	}

	np := networkPolicy(ingressRule(ports(port(nil, intstr.FromInt32(80), 0), port(udp, intstr.FromInt32(53), 0))), egressRule(ports(port(nil, intstr.FromString("dns"), 0))))
	defaultNetworkPolicy(np)
	got := []corev1.Protocol{*np.Spec.Ingress[0].Ports[0].Protocol, *np.Spec.Ingress[0].Ports[1].Protocol, *np.Spec.Egress[0].Ports[0].Protocol}
	if want := []corev1.Protocol{"TCP", "UDP", "TCP"}; !reflect.DeepEqual(got, want) {
		t.Errorf("protocols = %v, want %v", got, want)
	}
}
