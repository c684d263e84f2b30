package dns

import (
	"net"
	"sort"
	"strings"

	mdns "github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// TTL is the time to live of every answer, kubeadm's CoreDNS setting
// ("ttl 30"): short, because services and endpoints change.
const TTL = 30

// Result is the answer to one question. Forward means the name is not
// ours to answer: it goes to the upstream resolvers, if any.
type Result struct {
	Rcode             int
	Answer, Ns, Extra []mdns.RR
	Forward           bool
}

// Resolver answers questions about the cluster domain from the objects in
// a Cache, as CoreDNS's kubernetes plugin does with "pods insecure" and
// the reverse zones handled with fallthrough.
type Resolver struct {
	zone  string // "cluster.local.", lower case
	cache *Cache
	// serial is the SOA serial; CoreDNS uses its start time too.
	serial uint32
}

// NewResolver answers for zone (e.g. "cluster.local") from c.
func NewResolver(zone string, c *Cache, serial uint32) *Resolver {
	return &Resolver{zone: mdns.Fqdn(strings.ToLower(zone)), cache: c, serial: serial}
}

// Zone is the cluster domain, fully qualified.
func (r *Resolver) Zone() string { return r.zone }

// Resolve answers q.
func (r *Resolver) Resolve(q mdns.Question) Result {
	name := strings.ToLower(mdns.Fqdn(q.Name))
	switch {
	case name == r.zone:
		if q.Qtype == mdns.TypeSOA {
			return Result{Answer: []mdns.RR{r.soa()}}
		}
		return r.nodata()
	case strings.HasSuffix(name, "."+r.zone):
		labels := mdns.SplitDomainName(strings.TrimSuffix(name, "."+r.zone))
		return r.inZone(q, labels)
	case strings.HasSuffix(name, ".in-addr.arpa.") || strings.HasSuffix(name, ".ip6.arpa."):
		return r.reverse(q, name)
	}
	return Result{Forward: true}
}

func (r *Resolver) inZone(q mdns.Question, labels []string) Result {
	n := len(labels)
	switch labels[n-1] {
	case "svc":
		return r.service(q, labels[:n-1])
	case "pod":
		return r.pod(q, labels[:n-1])
	}
	return r.nxdomain()
}

// service answers names under svc.ZONE: NS, SVC.NS, ENDPOINT.SVC.NS and
// _PORT._PROTO.SVC.NS.
func (r *Resolver) service(q mdns.Question, labels []string) Result {
	switch len(labels) {
	case 0:
		return r.nodata()
	case 1:
		if r.cache.namespaceExists(labels[0]) {
			return r.nodata()
		}
		return r.nxdomain()
	case 2, 3, 4:
	default:
		return r.nxdomain()
	}
	ns, name := labels[len(labels)-1], labels[len(labels)-2]
	svc := r.cache.service(ns, name)
	if svc == nil {
		return r.nxdomain()
	}
	svcName := name + "." + ns + ".svc." + r.zone
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		if len(labels) != 2 {
			return r.nxdomain()
		}
		return Result{Answer: []mdns.RR{&mdns.CNAME{Hdr: hdr(q.Name, mdns.TypeCNAME), Target: mdns.Fqdn(svc.Spec.ExternalName)}}}
	}
	var endpoint, portName, proto string
	switch len(labels) {
	case 3:
		endpoint = labels[0]
	case 4:
		if !strings.HasPrefix(labels[0], "_") || !strings.HasPrefix(labels[1], "_") {
			return r.nxdomain()
		}
		portName, proto = labels[0][1:], labels[1][1:]
	}
	targets := r.targets(svc, svcName, endpoint, portName, proto)
	if len(targets) == 0 {
		// CoreDNS: a headless service without ready endpoints, an unknown
		// endpoint or port, is a name that does not exist.
		return r.nxdomain()
	}
	var res Result
	switch q.Qtype {
	case mdns.TypeA, mdns.TypeAAAA, mdns.TypeANY:
		seen := map[string]bool{}
		for _, t := range targets {
			if rr := addressRR(q.Name, t.ip, q.Qtype); rr != nil && !seen[t.ip] {
				seen[t.ip] = true
				res.Answer = append(res.Answer, rr)
			}
		}
	case mdns.TypeSRV:
		var srvs []target
		for _, t := range targets {
			if t.port != 0 {
				srvs = append(srvs, t)
			}
		}
		weight := uint16(0)
		if len(srvs) > 0 {
			weight = uint16(100 / len(srvs))
		}
		extra := map[string]bool{}
		for _, t := range srvs {
			res.Answer = append(res.Answer, &mdns.SRV{Hdr: hdr(q.Name, mdns.TypeSRV), Priority: 0, Weight: weight, Port: uint16(t.port), Target: t.name})
			if !extra[t.name+t.ip] {
				extra[t.name+t.ip] = true
				if rr := addressRR(t.name, t.ip, mdns.TypeANY); rr != nil {
					res.Extra = append(res.Extra, rr)
				}
			}
		}
	}
	if len(res.Answer) == 0 {
		return r.nodata()
	}
	return res
}

// target is one address a service name stands for, with one of its ports.
type target struct {
	name     string // FQDN of the address: the service's, or the endpoint's
	ip       string
	portName string
	port     int32
}

// targets lists what a service name resolves to: its cluster IPs, or for
// a headless service (or an endpoint name) the ready endpoints, each
// with the service's (or the slice's) ports, filtered by name and protocol
// when the query names them.
func (r *Resolver) targets(svc *corev1.Service, svcName, endpoint, portName, proto string) []target {
	var out []target
	match := func(name string, p corev1.Protocol) bool {
		if portName == "" {
			return true
		}
		return strings.EqualFold(name, portName) && strings.EqualFold(string(p), proto)
	}
	headless := svc.Spec.ClusterIP == corev1.ClusterIPNone || svc.Spec.ClusterIP == ""
	if !headless && endpoint == "" {
		ips := svc.Spec.ClusterIPs
		if len(ips) == 0 {
			ips = []string{svc.Spec.ClusterIP}
		}
		for _, ip := range ips {
			if len(svc.Spec.Ports) == 0 && portName == "" {
				out = append(out, target{name: svcName, ip: ip})
			}
			for _, p := range svc.Spec.Ports {
				if match(p.Name, p.Protocol) {
					out = append(out, target{name: svcName, ip: ip, portName: p.Name, port: p.Port})
				}
			}
		}
		return out
	}
	for _, s := range r.cache.slices(svc.Namespace, svc.Name) {
		for _, ep := range s.Endpoints {
			if !ready(ep) && !svc.Spec.PublishNotReadyAddresses {
				continue
			}
			for _, ip := range ep.Addresses {
				host := endpointHostname(ep, ip)
				if endpoint != "" && host != endpoint {
					continue
				}
				name := host + "." + svcName
				if len(s.Ports) == 0 && portName == "" {
					out = append(out, target{name: name, ip: ip})
				}
				for _, p := range s.Ports {
					pn, pp := deref(p.Name), corev1.ProtocolTCP
					if p.Protocol != nil {
						pp = *p.Protocol
					}
					if match(pn, pp) && p.Port != nil {
						out = append(out, target{name: name, ip: ip, portName: pn, port: *p.Port})
					}
				}
			}
		}
	}
	// Slices come from a map; answers should not shuffle between queries
	// for no reason.
	sort.SliceStable(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// pod answers A-B-C-D.NS.pod.ZONE without looking the pod up ("pods
// insecure", kubeadm's default).
func (r *Resolver) pod(q mdns.Question, labels []string) Result {
	switch len(labels) {
	case 0, 1:
		return r.nodata()
	case 2:
	default:
		return r.nxdomain()
	}
	ip := net.ParseIP(strings.ReplaceAll(labels[0], "-", "."))
	if ip == nil || ip.To4() == nil {
		return r.nxdomain()
	}
	if q.Qtype != mdns.TypeA && q.Qtype != mdns.TypeANY {
		return r.nodata()
	}
	return Result{Answer: []mdns.RR{&mdns.A{Hdr: hdr(q.Name, mdns.TypeA), A: ip.To4()}}}
}

// reverse answers PTR queries for service and endpoint addresses; other
// addresses fall through to the upstreams, as kubeadm's Corefile has it.
func (r *Resolver) reverse(q mdns.Question, name string) Result {
	ip := ipFromReverse(name)
	if ip == "" {
		return Result{Forward: true}
	}
	names := r.cache.namesOf(ip, r.zone)
	if len(names) == 0 {
		return Result{Forward: true}
	}
	if q.Qtype != mdns.TypePTR && q.Qtype != mdns.TypeANY {
		return Result{}
	}
	var res Result
	for _, n := range names {
		res.Answer = append(res.Answer, &mdns.PTR{Hdr: hdr(q.Name, mdns.TypePTR), Ptr: n})
	}
	return res
}

func (r *Resolver) soa() *mdns.SOA {
	return &mdns.SOA{Hdr: mdns.RR_Header{Name: r.zone, Rrtype: mdns.TypeSOA, Class: mdns.ClassINET, Ttl: TTL},
		Ns: "ns.dns." + r.zone, Mbox: "hostmaster." + r.zone, Serial: r.serial,
		Refresh: 7200, Retry: 1800, Expire: 86400, Minttl: TTL}
}

func (r *Resolver) nxdomain() Result {
	return Result{Rcode: mdns.RcodeNameError, Ns: []mdns.RR{r.soa()}}
}

func (r *Resolver) nodata() Result { return Result{Ns: []mdns.RR{r.soa()}} }

func hdr(name string, t uint16) mdns.RR_Header {
	return mdns.RR_Header{Name: name, Rrtype: t, Class: mdns.ClassINET, Ttl: TTL}
}

// addressRR is an A or AAAA record for ip when it has the family qtype
// asks for (ANY takes either).
func addressRR(name, ip string, qtype uint16) mdns.RR {
	p := net.ParseIP(ip)
	switch {
	case p == nil:
		return nil
	case p.To4() != nil && (qtype == mdns.TypeA || qtype == mdns.TypeANY):
		return &mdns.A{Hdr: hdr(name, mdns.TypeA), A: p.To4()}
	case p.To4() == nil && (qtype == mdns.TypeAAAA || qtype == mdns.TypeANY):
		return &mdns.AAAA{Hdr: hdr(name, mdns.TypeAAAA), AAAA: p}
	}
	return nil
}

// endpointHostname is an endpoint's DNS label: its hostname, or its
// address with dashes, as CoreDNS names endpoints without one.
func endpointHostname(ep discoveryv1.Endpoint, ip string) string {
	if ep.Hostname != nil && *ep.Hostname != "" {
		return strings.ToLower(*ep.Hostname)
	}
	return strings.NewReplacer(".", "-", ":", "-").Replace(ip)
}

func ready(ep discoveryv1.Endpoint) bool {
	return ep.Conditions.Ready == nil || *ep.Conditions.Ready
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// ipFromReverse reads the address out of a full in-addr.arpa or ip6.arpa
// name; "" when the name is partial or malformed.
func ipFromReverse(name string) string {
	if v4, ok := strings.CutSuffix(name, ".in-addr.arpa."); ok {
		parts := strings.Split(v4, ".")
		if len(parts) != 4 {
			return ""
		}
		for i, j := 0, 3; i < j; i, j = i+1, j-1 {
			parts[i], parts[j] = parts[j], parts[i]
		}
		ip := net.ParseIP(strings.Join(parts, "."))
		if ip == nil {
			return ""
		}
		return ip.String()
	}
	if v6, ok := strings.CutSuffix(name, ".ip6.arpa."); ok {
		nibbles := strings.Split(v6, ".")
		if len(nibbles) != 32 {
			return ""
		}
		var b strings.Builder
		for i := 31; i >= 0; i-- {
			b.WriteString(nibbles[i])
			if i%4 == 0 && i > 0 {
				b.WriteByte(':')
			}
		}
		ip := net.ParseIP(b.String())
		if ip == nil {
			return ""
		}
		return ip.String()
	}
	return ""
}
