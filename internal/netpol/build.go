package netpol

import (
	"cmp"
	"crypto/sha256"
	"encoding/base32"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/knftables"

	"github.com/orca-project/orca/internal/nftplan"
)

// The table (family ip, as the pod network is IPv4).
const (
	Family = knftables.IPv4Family
	Table  = "orca-netpol"
)

// Fixed objects of the table.
const (
	forwardChain   = "forward"
	ingressPodsMap = "ingress-pods"
	egressPodsMap  = "egress-pods"
	tableComment   = "rules for orca's network policies"
	// dnsPort is the cluster DNS service's port.
	dnsPort = "53"
)

// Input is what the rules are built from.
type Input struct {
	// Pods are every pod of the cluster the policies concern (PodOf).
	Pods []Pod
	// Namespaces are every namespace's labels.
	Namespaces map[string]map[string]string
	Policies   []*networkingv1.NetworkPolicy
	// DNS are the cluster DNS service's addresses, whose queries pass.
	DNS []string
}

// Ruleset is the table's content and what it enforces.
type Ruleset struct {
	*nftplan.Ruleset
	// Policies counts the policies that select a pod of this node;
	// Isolated the node's pods isolated in at least one direction.
	Policies, Isolated int
	// Problems are policies, or parts of them, that could not be read
	// (an invalid selector): they isolate but allow nothing.
	Problems []string
}

// direction is ingress or egress: which end of a connection a rule
// names, and which of the pod's maps it hangs from.
type direction struct {
	name    string // "ingress" or "egress"
	peerDir string // "saddr" for ingress (who connects), "daddr" for egress
	podDir  string // the pod's own end
	podMap  string
}

var (
	ingress = direction{"ingress", "saddr", "daddr", ingressPodsMap}
	egress  = direction{"egress", "daddr", "saddr", egressPodsMap}
)

// Build is the table for in. It is a pure function: the same input gives
// the same rule set.
func Build(in Input) *Ruleset {
	b := &builder{in: &in, r: &Ruleset{Ruleset: nftplan.New()}, byNamespace: map[string][]*Pod{}, chains: map[string]map[string]bool{}}
	for i := range in.Pods {
		p := &in.Pods[i]
		b.byNamespace[p.Namespace] = append(b.byNamespace[p.Namespace], p)
	}
	b.base()
	policies := slices.Clone(in.Policies)
	slices.SortFunc(policies, func(a, c *networkingv1.NetworkPolicy) int {
		return cmp.Or(strings.Compare(a.Namespace, c.Namespace), strings.Compare(a.Name, c.Name))
	})
	for _, np := range policies {
		b.policy(np)
	}
	b.finish()
	return b.r
}

type builder struct {
	in          *Input
	r           *Ruleset
	byNamespace map[string][]*Pod
	// chains are the pods' chains made so far, by direction and pod key.
	chains map[string]map[string]bool
}

func (b *builder) base() {
	r := b.r
	verdictMap := "ipv4_addr : verdict"
	r.Maps[ingressPodsMap] = &knftables.Map{Name: ingressPodsMap, Type: verdictMap, Comment: knftables.PtrTo("pods of this node isolated for ingress")}
	r.Maps[egressPodsMap] = &knftables.Map{Name: egressPodsMap, Type: verdictMap, Comment: knftables.PtrTo("pods of this node isolated for egress")}
	rules := []string{"ct state established,related accept"}
	for _, ip := range slices.Sorted(slices.Values(b.in.DNS)) {
		rules = append(rules, fmt.Sprintf(`ct original ip daddr %s meta l4proto { tcp, udp } ct original proto-dst %s accept comment "cluster DNS"`, ip, dnsPort))
	}
	// Egress first: a connection between two pods of this node must be
	// allowed out of one and into the other.
	rules = append(rules, "ip saddr vmap @"+egressPodsMap, "ip daddr vmap @"+ingressPodsMap)
	r.BaseChain(forwardChain, knftables.FilterType, knftables.ForwardHook, knftables.FilterPriority, rules...)
}

// policyTypes are the directions a policy isolates in: as written, or,
// when it says none, ingress always and egress if it has egress rules
// (the API's own default).
func policyTypes(np *networkingv1.NetworkPolicy) (in, out bool) {
	if len(np.Spec.PolicyTypes) == 0 {
		return true, len(np.Spec.Egress) > 0
	}
	return slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeIngress), slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress)
}

func (b *builder) policy(np *networkingv1.NetworkPolicy) {
	key := np.Namespace + "/" + np.Name
	sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
	if err != nil {
		b.r.Problems = append(b.r.Problems, fmt.Sprintf("%s: podSelector: %v", key, err))
		return
	}
	var local []*Pod
	for _, p := range b.byNamespace[np.Namespace] {
		if p.Local && sel.Matches(labels.Set(p.Labels)) {
			local = append(local, p)
		}
	}
	if len(local) == 0 {
		return
	}
	b.r.Policies++
	isIn, isOut := policyTypes(np)
	if isIn {
		for _, p := range local {
			b.chain(ingress, p)
		}
		for i, rule := range np.Spec.Ingress {
			b.rule(ingress, np, i, rule.From, rule.Ports, local)
		}
	}
	if isOut {
		for _, p := range local {
			b.chain(egress, p)
		}
		for i, rule := range np.Spec.Egress {
			b.rule(egress, np, i, rule.To, rule.Ports, local)
		}
	}
}

// podChain is the name of a pod's chain for one direction.
func podChain(d direction, p *Pod) string {
	return d.name + "-" + nftplan.HashAndTruncate(p.Key())
}

// chain makes a pod's chain for d on first use. It starts by letting the
// pod reach itself, through a Service of its own too: the API says a pod
// cannot block access to itself.
func (b *builder) chain(d direction, p *Pod) {
	if b.chains[d.name] == nil {
		b.chains[d.name] = map[string]bool{}
	}
	if b.chains[d.name][p.Key()] {
		return
	}
	b.chains[d.name][p.Key()] = true
	name := podChain(d, p)
	b.r.Chain(name, fmt.Sprintf("ip %s %s return", d.peerDir, p.IP))
	b.r.Element(&knftables.Element{Map: d.podMap, Key: []string{p.IP}, Value: []string{"jump " + name}, Comment: knftables.PtrTo(p.Key())})
}

// finish closes every pod chain with its drop.
func (b *builder) finish() {
	for _, d := range []direction{ingress, egress} {
		for _, key := range slices.Sorted(maps.Keys(b.chains[d.name])) {
			ns, name, _ := strings.Cut(key, "/")
			b.r.Chain(podChain(d, &Pod{Namespace: ns, Name: name}), fmt.Sprintf(`drop comment "%s isolated for %s"`, key, d.name))
		}
	}
	isolated := map[string]bool{}
	for _, m := range b.chains {
		for k := range m {
			isolated[k] = true
		}
	}
	b.r.Isolated = len(isolated)
}

// rule adds one rule of a policy to the chains of the local pods it
// selects: peers (nil: anyone) on ports (nil: any).
func (b *builder) rule(d direction, np *networkingv1.NetworkPolicy, index int, peers []networkingv1.NetworkPolicyPeer, ports []networkingv1.NetworkPolicyPort, local []*Pod) {
	where := fmt.Sprintf("%s/%s/%s/%d", np.Namespace, np.Name, d.name, index)
	// Who: a set of peer addresses, unless the rule names no peers.
	peerMatch := ""
	var peerPods []*Pod
	if len(peers) > 0 {
		var a addrs
		for j, peer := range peers {
			pods, err := b.peerPods(np.Namespace, peer)
			if err != nil {
				b.r.Problems = append(b.r.Problems, fmt.Sprintf("%s: peer %d: %v", where, j, err))
				continue
			}
			for _, p := range pods {
				a.addIP(p.IP)
			}
			peerPods = append(peerPods, pods...)
			if peer.IPBlock != nil && !a.addBlock(peer.IPBlock.CIDR, peer.IPBlock.Except) {
				b.r.Problems = append(b.r.Problems, fmt.Sprintf("%s: peer %d: ipBlock %s is not IPv4; ignored", where, j, peer.IPBlock.CIDR))
			}
		}
		var elems [][]string
		for _, e := range a.elements() {
			elems = append(elems, []string{e})
		}
		set := b.set("peers-", "ipv4_addr", []knftables.SetFlag{knftables.IntervalFlag}, peerIdentity(np.Namespace, peers, nil), elems, where)
		peerMatch = fmt.Sprintf("ip %s @%s ", d.peerDir, set)
	} else if d == egress {
		// A named port with no peers means that port of any pod.
		peerPods = b.in.podPointers()
	}
	if len(ports) == 0 {
		for _, p := range local {
			b.r.Chain(podChain(d, p), peerMatch+"return")
		}
		return
	}
	var named [][]string
	var names []string
	for _, port := range ports {
		proto := v1.ProtocolTCP
		if port.Protocol != nil {
			proto = *port.Protocol
		}
		l4 := "meta l4proto " + strings.ToLower(string(proto))
		switch {
		case port.Port == nil:
			for _, p := range local {
				b.r.Chain(podChain(d, p), peerMatch+l4+" return")
			}
		case port.Port.StrVal != "" && d == ingress:
			// Ingress: the name is the destination pod's own port.
			for _, p := range local {
				if n, ok := p.port(port.Port.StrVal, proto); ok {
					b.r.Chain(podChain(d, p), fmt.Sprintf("%s%s th dport %d return", peerMatch, l4, n))
				}
			}
		case port.Port.StrVal != "":
			// Egress: the name is each peer pod's, so the set holds the
			// address, protocol and port of each peer that has it.
			names = append(names, string(proto)+"/"+port.Port.StrVal)
			for _, pp := range peerPods {
				if n, ok := pp.port(port.Port.StrVal, proto); ok {
					named = append(named, []string{pp.IP, strings.ToLower(string(proto)), strconv.Itoa(int(n))})
				}
			}
		default:
			dport := strconv.Itoa(int(port.Port.IntVal))
			if port.EndPort != nil && *port.EndPort > port.Port.IntVal {
				dport += "-" + strconv.Itoa(int(*port.EndPort))
			}
			for _, p := range local {
				b.r.Chain(podChain(d, p), peerMatch+l4+" th dport "+dport+" return")
			}
		}
	}
	if len(names) > 0 {
		set := b.set("ports-", "ipv4_addr . inet_proto . inet_service", nil, peerIdentity(np.Namespace, peers, names), named, where+" named ports")
		for _, p := range local {
			b.r.Chain(podChain(d, p), fmt.Sprintf("ip daddr . meta l4proto . th dport @%s return", set))
		}
	}
}

// peerIdentity says what a set of peers is, whatever it holds now: the
// policy's namespace (which a pod selector alone reads), the peers as
// written and, for a set of named ports, the names.
func peerIdentity(namespace string, peers []networkingv1.NetworkPolicyPeer, names []string) string {
	b, _ := json.Marshal(struct {
		Namespace string
		Peers     []networkingv1.NetworkPolicyPeer
		Names     []string
	}{namespace, peers, names})
	return string(b)
}

// set is the name of a set of type typ for the peers identity says,
// holding elems, made on first use. Rules with the same peers (many
// policies letting in one namespace's pods, say) share one set, which
// keeps the table small, and with it every nft run, which reads the
// table whole. The name comes from the identity, not the content, so
// that a pod coming or going changes elements, not the rules that refer
// to the set. comment names the first rule that uses it.
func (b *builder) set(prefix, typ string, flags []knftables.SetFlag, identity string, elems [][]string, comment string) string {
	h := sha256.Sum256([]byte(typ + "\x00" + identity))
	name := prefix + strings.ToLower(base32.StdEncoding.EncodeToString(h[:])[:16])
	if _, ok := b.r.Sets[name]; ok {
		return name
	}
	keys := make([]string, len(elems))
	for i, e := range elems {
		keys[i] = strings.Join(e, " . ")
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	b.r.Sets[name] = &knftables.Set{Name: name, Type: typ, Flags: flags, Comment: knftables.PtrTo(comment)}
	for _, k := range keys {
		b.r.Element(&knftables.Element{Set: name, Key: strings.Split(k, " . ")})
	}
	return name
}

// peerPods are the pods a peer selects: by pod selector in the policy's
// namespace, by namespace selector in every namespace it matches, or by
// both; none for an ipBlock.
func (b *builder) peerPods(namespace string, peer networkingv1.NetworkPolicyPeer) ([]*Pod, error) {
	if peer.PodSelector == nil && peer.NamespaceSelector == nil {
		return nil, nil
	}
	podSel := labels.Everything()
	if peer.PodSelector != nil {
		s, err := metav1.LabelSelectorAsSelector(peer.PodSelector)
		if err != nil {
			return nil, fmt.Errorf("podSelector: %w", err)
		}
		podSel = s
	}
	namespaces := []string{namespace}
	if peer.NamespaceSelector != nil {
		nsSel, err := metav1.LabelSelectorAsSelector(peer.NamespaceSelector)
		if err != nil {
			return nil, fmt.Errorf("namespaceSelector: %w", err)
		}
		namespaces = nil
		for _, ns := range slices.Sorted(maps.Keys(b.in.Namespaces)) {
			if nsSel.Matches(labels.Set(b.in.Namespaces[ns])) {
				namespaces = append(namespaces, ns)
			}
		}
	}
	var out []*Pod
	for _, ns := range namespaces {
		for _, p := range b.byNamespace[ns] {
			if podSel.Matches(labels.Set(p.Labels)) {
				out = append(out, p)
			}
		}
	}
	return out, nil
}

func (in *Input) podPointers() []*Pod {
	out := make([]*Pod, len(in.Pods))
	for i := range in.Pods {
		out[i] = &in.Pods[i]
	}
	return out
}
