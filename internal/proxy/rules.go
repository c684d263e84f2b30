package proxy

import (
	"fmt"
	"net"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/knftables"

	"github.com/orca-project/orca/internal/nftplan"
)

// Table is the proxy's nftables table (family ip).
const (
	Family = knftables.IPv4Family
	Table  = "orca-proxy"
)

// Names of the table's fixed objects, as upstream's.
const (
	servicesChain        = "services"
	serviceIPsMap        = "service-ips"
	serviceNodePortsMap  = "service-nodeports"
	noEndpointServices   = "no-endpoint-services"
	noEndpointNodePorts  = "no-endpoint-nodeports"
	clusterIPsSet        = "cluster-ips"
	serviceEndpointsChk  = "service-endpoints-check"
	nodePortEndpointsChk = "nodeport-endpoints-check"
	clusterIPsCheckChain = "cluster-ips-check"
	rejectChain          = "reject-chain"
	markMasqChain        = "mark-for-masquerade"
	masqueradingChain    = "masquerading"
	masqueradeMark       = "0x4000"
	firewallIPsMap       = "firewall-ips"
	firewallCheckChain   = "firewall-check"
	// nodePortMatch matches every local address but loopback: upstream's
	// nftables mode serves no NodePorts on localhost.
	nodePortMatch = "fib daddr type local ip daddr != 127.0.0.0/8"
)

// Ruleset is the whole content of the proxy's table.
type Ruleset struct {
	*nftplan.Ruleset
	// Services and Endpoints count the service ports and endpoint chains
	// programmed.
	Services, Endpoints int
}

func newRuleset() *Ruleset { return &Ruleset{Ruleset: nftplan.New()} }

// Build is the table for services, given cfg. It is a pure function:
// the same input always gives the same rule set.
func Build(cfg Config, services []ServicePort) *Ruleset {
	return new(Builder).Build(cfg, services)
}

// Builder builds like Build, but remembers each service port's part of
// the table, so that a rebuild after a small change only formats the
// service ports that changed. Parts are shared between the rule sets it
// returns, which nobody may modify.
type Builder struct {
	cfg   Config
	parts map[string]*part
}

type part struct {
	in  ServicePort
	out *Ruleset
}

// Build is Build(cfg, services), reusing unchanged services' parts.
func (b *Builder) Build(cfg Config, services []ServicePort) *Ruleset {
	if b.parts == nil || b.cfg != cfg {
		b.parts, b.cfg = map[string]*part{}, cfg
	}
	r := base(cfg)
	seen := make(map[string]bool, len(services))
	for i := range services {
		s := &services[i]
		key := s.chainBase()
		seen[key] = true
		p := b.parts[key]
		if p == nil || !reflect.DeepEqual(&p.in, s) {
			p = &part{in: *s, out: newRuleset()}
			p.out.service(cfg, s)
			b.parts[key] = p
		}
		r.merge(p.out)
	}
	for key := range b.parts {
		if !seen[key] {
			delete(b.parts, key)
		}
	}
	return r
}

func (r *Ruleset) merge(p *Ruleset) {
	r.Merge(p.Ruleset)
	r.Services += p.Services
	r.Endpoints += p.Endpoints
}

// base is the table's fixed part.
func base(cfg Config) *Ruleset {
	r := newRuleset()
	ipPortProto := "ipv4_addr . inet_proto . inet_service : verdict"
	r.Maps[serviceIPsMap] = &knftables.Map{Name: serviceIPsMap, Type: ipPortProto, Comment: knftables.PtrTo("ClusterIP, ExternalIP and LoadBalancer IP traffic")}
	r.Maps[serviceNodePortsMap] = &knftables.Map{Name: serviceNodePortsMap, Type: "inet_proto . inet_service : verdict", Comment: knftables.PtrTo("NodePort traffic")}
	r.Maps[noEndpointServices] = &knftables.Map{Name: noEndpointServices, Type: ipPortProto, Comment: knftables.PtrTo("vmap to drop or reject packets to services with no endpoints")}
	r.Maps[noEndpointNodePorts] = &knftables.Map{Name: noEndpointNodePorts, Type: "inet_proto . inet_service : verdict", Comment: knftables.PtrTo("vmap to drop or reject packets to service nodeports with no endpoints")}
	r.Sets[clusterIPsSet] = &knftables.Set{Name: clusterIPsSet, Type: "ipv4_addr", Comment: knftables.PtrTo("Active ClusterIPs")}
	r.Maps[firewallIPsMap] = &knftables.Map{Name: firewallIPsMap, Type: ipPortProto, Comment: knftables.PtrTo("destinations that are subject to LoadBalancerSourceRanges")}

	// Filtering runs after DNAT (filter-10 > dstnat), so it only sees
	// service traffic no endpoint took.
	ctNew := "ct state new jump "
	r.BaseChain("filter-input", knftables.FilterType, knftables.InputHook, knftables.FilterPriority+"-10",
		ctNew+nodePortEndpointsChk, ctNew+serviceEndpointsChk)
	r.BaseChain("filter-forward", knftables.FilterType, knftables.ForwardHook, knftables.FilterPriority+"-10",
		ctNew+serviceEndpointsChk, ctNew+clusterIPsCheckChain)
	r.BaseChain("filter-output", knftables.FilterType, knftables.OutputHook, knftables.FilterPriority+"-10",
		ctNew+serviceEndpointsChk, ctNew+clusterIPsCheckChain)
	// Source ranges are checked on the load balancer address, before
	// DNAT turns it into an endpoint's.
	r.BaseChain("filter-prerouting-pre-dnat", knftables.FilterType, knftables.PreroutingHook, knftables.DNATPriority+"-10", "jump "+firewallCheckChain)
	r.BaseChain("filter-output-pre-dnat", knftables.FilterType, knftables.OutputHook, knftables.DNATPriority+"-10", "jump "+firewallCheckChain)
	r.Chain(firewallCheckChain, "ip daddr . meta l4proto . th dport vmap @"+firewallIPsMap)
	r.BaseChain("nat-prerouting", knftables.NATType, knftables.PreroutingHook, knftables.DNATPriority, "jump "+servicesChain)
	r.BaseChain("nat-output", knftables.NATType, knftables.OutputHook, knftables.DNATPriority, "jump "+servicesChain)
	r.BaseChain("nat-postrouting", knftables.NATType, knftables.PostroutingHook, knftables.SNATPriority, "jump "+masqueradingChain)

	r.Chain(servicesChain,
		"ip daddr . meta l4proto . th dport vmap @"+serviceIPsMap,
		nodePortMatch+" meta l4proto . th dport vmap @"+serviceNodePortsMap)
	r.Chain(serviceEndpointsChk, "ip daddr . meta l4proto . th dport vmap @"+noEndpointServices)
	r.Chain(nodePortEndpointsChk, nodePortMatch+" meta l4proto . th dport vmap @"+noEndpointNodePorts)
	r.Chain(clusterIPsCheckChain, `ip daddr @`+clusterIPsSet+` reject comment "Reject traffic to invalid ports of ClusterIPs"`)
	if cfg.ServiceCIDR != "" {
		r.Chain(clusterIPsCheckChain, "ip daddr "+cfg.ServiceCIDR+` drop comment "Drop traffic to unallocated ClusterIPs"`)
	}
	r.Chain(rejectChain, "reject")
	r.Chain(markMasqChain, "mark set mark or "+masqueradeMark)
	r.Chain(masqueradingChain,
		"mark and "+masqueradeMark+" == 0 return",
		"mark set mark xor "+masqueradeMark,
		"masquerade fully-random")

	return r
}

// service adds one service port's chains and map elements, as upstream's
// syncProxyRules does for each service.
func (r *Ruleset) service(cfg Config, s *ServicePort) {
	base := s.chainBase()
	clusterChain := "service-" + nftplan.HashAndTruncate(base)
	localChain := "local-" + nftplan.HashAndTruncate(base)
	externalChain := "external-" + nftplan.HashAndTruncate(base)
	port := strconv.Itoa(int(s.Port))
	comment := knftables.PtrTo(s.Key())

	cluster, local := categorize(s)
	externallyAccessible := s.NodePort != 0 || len(s.ExternalIPs) > 0 || len(s.LoadBalancerIPs) > 0
	usesClusterChain := len(cluster) > 0 && (!s.InternalLocal || externallyAccessible)
	usesLocalChain := len(local) > 0 && (s.InternalLocal || (s.ExternalLocal && externallyAccessible))
	hasEndpoints := len(cluster) > 0 || len(local) > 0
	usesExternalChain := hasEndpoints && externallyAccessible

	internalChain, hasInternal := clusterChain, len(cluster) > 0
	if s.InternalLocal {
		internalChain, hasInternal = localChain, len(local) > 0
	}
	externalPolicyChain, hasExternal := clusterChain, len(cluster) > 0
	if s.ExternalLocal {
		externalPolicyChain, hasExternal = localChain, len(local) > 0
	}
	// Filter verdicts for traffic no DNAT took: reject at once when the
	// service has no endpoints at all, drop when it only lacks local ones.
	internalVerdict, externalVerdict := "goto "+rejectChain, "goto "+rejectChain
	if hasEndpoints {
		internalVerdict, externalVerdict = "drop", "drop"
	}

	r.Services++
	if s.ClusterIP != "" {
		r.Element(&knftables.Element{Set: clusterIPsSet, Key: []string{s.ClusterIP}})
		if hasInternal {
			r.Element(&knftables.Element{Map: serviceIPsMap, Key: []string{s.ClusterIP, s.Protocol, port}, Value: []string{"goto " + internalChain}, Comment: comment})
			if cfg.ClusterCIDR != "" {
				// Traffic from outside the pod network may leave the node
				// again towards an endpoint: masquerade it so replies come
				// back through this node.
				r.Chain(internalChain, fmt.Sprintf("ip daddr %s %s dport %s ip saddr != %s jump %s", s.ClusterIP, s.Protocol, port, cfg.ClusterCIDR, markMasqChain))
			}
		} else {
			r.Element(&knftables.Element{Map: noEndpointServices, Key: []string{s.ClusterIP, s.Protocol, port}, Value: []string{internalVerdict}, Comment: comment})
		}
	}
	if len(s.SourceRanges) > 0 && len(s.LoadBalancerIPs) > 0 {
		r.firewall(cfg, s)
	}
	for _, ip := range append(append([]string(nil), s.ExternalIPs...), s.LoadBalancerIPs...) {
		if usesExternalChain {
			r.Element(&knftables.Element{Map: serviceIPsMap, Key: []string{ip, s.Protocol, port}, Value: []string{"goto " + externalChain}, Comment: comment})
		}
		if !hasExternal {
			r.Element(&knftables.Element{Map: noEndpointServices, Key: []string{ip, s.Protocol, port}, Value: []string{externalVerdict}, Comment: comment})
		}
	}
	if s.NodePort != 0 {
		np := strconv.Itoa(int(s.NodePort))
		if usesExternalChain {
			r.Element(&knftables.Element{Map: serviceNodePortsMap, Key: []string{s.Protocol, np}, Value: []string{"goto " + externalChain}, Comment: comment})
		}
		if !hasExternal {
			r.Element(&knftables.Element{Map: noEndpointNodePorts, Key: []string{s.Protocol, np}, Value: []string{externalVerdict}, Comment: comment})
		}
	}

	if usesExternalChain {
		if !s.ExternalLocal {
			// Endpoints may be on other nodes: masquerade so that replies
			// return through this node.
			r.Chain(externalChain, "jump "+markMasqChain)
		} else {
			if usesClusterChain && cfg.ClusterCIDR != "" {
				// Pods reaching an external address act as if they went
				// out to a load balancer and came back: no policy applies.
				r.Chain(externalChain, fmt.Sprintf(`ip saddr %s goto %s comment "short-circuit pod traffic"`, cfg.ClusterCIDR, clusterChain))
			}
			// The host's own traffic has a node address as source, which
			// an endpoint could not answer directly.
			r.Chain(externalChain, `fib saddr type local jump `+markMasqChain+` comment "masquerade local traffic"`)
			if usesClusterChain {
				r.Chain(externalChain, `fib saddr type local goto `+clusterChain+` comment "short-circuit local traffic"`)
			}
		}
		if hasExternal {
			r.Chain(externalChain, "goto "+externalPolicyChain)
		}
	}
	if usesClusterChain {
		r.pick(s, clusterChain, cluster)
	}
	if usesLocalChain {
		r.pick(s, localChain, local)
	}
	seen := map[string]bool{}
	for _, eps := range [][]Endpoint{cluster, local} {
		for _, e := range eps {
			if seen[e.String()] {
				continue
			}
			seen[e.String()] = true
			r.endpoint(s, e)
		}
	}
}

// firewall drops traffic to the service's load balancer addresses from
// outside its source ranges, as upstream's firewall chain. When the
// ranges cover the node's own address, the load balancer addresses are
// let in as sources too: a node that holds such an address sends to it
// from it.
func (r *Ruleset) firewall(cfg Config, s *ServicePort) {
	chain := "firewall-" + nftplan.HashAndTruncate(s.chainBase())
	sources := slices.Clone(s.SourceRanges)
	if node := net.ParseIP(cfg.NodeIP); node != nil {
		for _, cidr := range s.SourceRanges {
			if _, n, err := net.ParseCIDR(cidr); err == nil && n.Contains(node) {
				sources = append(sources, s.LoadBalancerIPs...)
				break
			}
		}
	}
	r.Chain(chain, "ip saddr != { "+strings.Join(sources, ", ")+" } drop")
	port := strconv.Itoa(int(s.Port))
	for _, ip := range s.LoadBalancerIPs {
		r.Element(&knftables.Element{Map: firewallIPsMap, Key: []string{ip, s.Protocol, port}, Value: []string{"goto " + chain}, Comment: knftables.PtrTo(s.Key())})
	}
}

func endpointBase(s *ServicePort, e Endpoint) string {
	return nftplan.HashAndTruncate(s.chainBase() + "__" + e.IP + "/" + strconv.Itoa(int(e.Port)))
}

// pick sends a connection to one of eps at random, or to the one a
// client's affinity names.
func (r *Ruleset) pick(s *ServicePort, chain string, eps []Endpoint) {
	if s.AffinityTimeout > 0 {
		for _, e := range eps {
			b := endpointBase(s, e)
			r.Chain(chain, fmt.Sprintf("ip saddr @affinity-%s goto endpoint-%s", b, b))
		}
	}
	verdicts := make([]string, len(eps))
	for i, e := range eps {
		verdicts[i] = fmt.Sprintf("%d : goto endpoint-%s", i, endpointBase(s, e))
	}
	r.Chain(chain, fmt.Sprintf("numgen random mod %d vmap { %s }", len(eps), strings.Join(verdicts, " , ")))
}

// endpoint is the chain that DNATs to e.
func (r *Ruleset) endpoint(s *ServicePort, e Endpoint) {
	b := endpointBase(s, e)
	r.Endpoints++
	// Hairpin: a pod reaching itself through its service must see the
	// reply come from the service, so its own source is hidden.
	c := r.Chain("endpoint-"+b, fmt.Sprintf("ip saddr %s jump %s", e.IP, markMasqChain))
	if s.AffinityTimeout > 0 {
		set := "affinity-" + b
		r.Sets[set] = &knftables.Set{Name: set, Type: "ipv4_addr", Flags: []knftables.SetFlag{knftables.DynamicFlag, knftables.TimeoutFlag}, Timeout: &s.AffinityTimeout}
		c.Rules = append(c.Rules, fmt.Sprintf("update @%s { ip saddr }", set))
	}
	c.Rules = append(c.Rules, fmt.Sprintf("meta l4proto %s dnat to %s", s.Protocol, e))
}
