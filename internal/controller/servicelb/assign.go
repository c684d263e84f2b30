package servicelb

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"
)

// Port is one port a load balancer serves.
type Port struct {
	Port     int32
	Protocol string
}

func (p Port) String() string { return fmt.Sprintf("%d/%s", p.Port, p.Protocol) }

// Request is one LoadBalancer Service asking for addresses.
type Request struct {
	// Key is namespace/name.
	Key string
	// Order ranks requests: the earlier wins a contested port
	// (creation time, then Key).
	Order int
	Ports []Port
	// Current are the addresses the service holds now; in pool mode it
	// keeps its address when it still may.
	Current []string
}

// Assignment is what one service gets: addresses, or why none.
type Assignment struct {
	IPs   []string
	Error string
}

// Assign gives every request its addresses. Without a pool each service
// gets all nodeIPs (as k3s's ServiceLB), so two services serving the same
// port collide and the later gets an error instead. With a pool each
// service gets one address of its own, keeping the one it has.
func Assign(reqs []Request, nodeIPs []string, pool *Pool) map[string]Assignment {
	reqs = append([]Request(nil), reqs...)
	sort.SliceStable(reqs, func(i, j int) bool {
		if reqs[i].Order != reqs[j].Order {
			return reqs[i].Order < reqs[j].Order
		}
		return reqs[i].Key < reqs[j].Key
	})
	out := make(map[string]Assignment, len(reqs))
	if pool == nil {
		held := map[string]string{} // "ip port/proto" → holder
		for _, r := range reqs {
			if len(nodeIPs) == 0 {
				out[r.Key] = Assignment{Error: "no Ready nodes with an InternalIP to serve the load balancer"}
				continue
			}
			var clash []string
			for _, p := range r.Ports {
				for _, ip := range nodeIPs {
					if h, ok := held[ip+" "+p.String()]; ok {
						clash = append(clash, fmt.Sprintf("port %s on %s is used by service %s", p, ip, h))
						break
					}
				}
			}
			if len(clash) > 0 {
				out[r.Key] = Assignment{Error: strings.Join(clash, "; ")}
				continue
			}
			for _, p := range r.Ports {
				for _, ip := range nodeIPs {
					held[ip+" "+p.String()] = r.Key
				}
			}
			out[r.Key] = Assignment{IPs: append([]string(nil), nodeIPs...)}
		}
		return out
	}
	used := map[netip.Addr]bool{}
	// Addresses held and still in the pool stay with their holders, the
	// earlier holder winning should two claim one.
	var rest []Request
	for _, r := range reqs {
		kept := false
		for _, c := range r.Current {
			a, err := netip.ParseAddr(c)
			if err == nil && pool.Contains(a) && !used[a] {
				used[a] = true
				out[r.Key] = Assignment{IPs: []string{a.String()}}
				kept = true
				break
			}
		}
		if !kept {
			rest = append(rest, r)
		}
	}
	for _, r := range rest {
		a, ok := pool.Next(used)
		if !ok {
			out[r.Key] = Assignment{Error: fmt.Sprintf("no addresses left in the load balancer pool %s", pool)}
			continue
		}
		used[a] = true
		out[r.Key] = Assignment{IPs: []string{a.String()}}
	}
	return out
}

// Pool is a range of addresses for load balancers.
type Pool struct {
	first, last netip.Addr
	spec        string
}

// ParsePool reads a CIDR (its network and broadcast addresses left out)
// or an inclusive range FIRST-LAST.
func ParsePool(spec string) (*Pool, error) {
	if f, l, ok := strings.Cut(spec, "-"); ok {
		first, err1 := netip.ParseAddr(strings.TrimSpace(f))
		last, err2 := netip.ParseAddr(strings.TrimSpace(l))
		if err1 != nil || err2 != nil || first.Is4() != last.Is4() || last.Less(first) {
			return nil, fmt.Errorf("load balancer pool %q: want a CIDR or FIRST-LAST", spec)
		}
		return &Pool{first: first, last: last, spec: spec}, nil
	}
	p, err := netip.ParsePrefix(spec)
	if err != nil {
		return nil, fmt.Errorf("load balancer pool %q: want a CIDR or FIRST-LAST", spec)
	}
	p = p.Masked()
	first, last := p.Addr(), lastAddr(p)
	if p.Addr().Is4() && p.Bits() < 31 {
		first, last = first.Next(), last.Prev()
	}
	return &Pool{first: first, last: last, spec: spec}, nil
}

func (p *Pool) String() string { return p.spec }

// Contains reports whether a is in the pool.
func (p *Pool) Contains(a netip.Addr) bool {
	return !a.Less(p.first) && !p.last.Less(a)
}

// Next is the lowest address not in used.
func (p *Pool) Next(used map[netip.Addr]bool) (netip.Addr, bool) {
	for a := p.first; a.IsValid() && !p.last.Less(a); a = a.Next() {
		if !used[a] {
			return a, true
		}
	}
	return netip.Addr{}, false
}

// lastAddr is the highest address of p: its host bits all set.
func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}
