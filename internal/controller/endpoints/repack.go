package endpoints

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// addrKey tells addresses apart: the same IP from two pods (say, host
// network) is two addresses.
type addrKey struct {
	ip  string
	uid types.UID
}

func keyOf(a *v1.EndpointAddress) addrKey {
	k := addrKey{ip: a.IP}
	if a.TargetRef != nil {
		k.uid = a.TargetRef.UID
	}
	return k
}

// noPort stands for "no ports" so that addresses of a port-less headless
// service are not lost.
var noPort = v1.EndpointPort{Port: -1}

func portKey(p v1.EndpointPort) string {
	app := ""
	if p.AppProtocol != nil {
		app = "=" + *p.AppProtocol
	}
	return fmt.Sprintf("%s/%d/%s%s", p.Name, p.Port, p.Protocol, app)
}

// RepackSubsets packs subsets into the N-to-M form the API wants, as
// upstream's RepackSubsets: every set of addresses that offers the same
// ports becomes one subset, an address ready on one entry for a port is
// ready for it, and the result is sorted so that equal inputs give equal
// objects.
func RepackSubsets(subsets []v1.EndpointSubset) []v1.EndpointSubset {
	addrs := map[addrKey]v1.EndpointAddress{}
	ports := map[string]v1.EndpointPort{}
	byPort := map[string]map[addrKey]bool{}
	note := func(p v1.EndpointPort, a v1.EndpointAddress, ready bool) {
		k := keyOf(&a)
		if _, ok := addrs[k]; !ok {
			addrs[k] = a
		}
		pk := portKey(p)
		ports[pk] = p
		if byPort[pk] == nil {
			byPort[pk] = map[addrKey]bool{}
		}
		byPort[pk][k] = byPort[pk][k] || ready
	}
	for _, s := range subsets {
		ps := s.Ports
		if len(ps) == 0 {
			ps = []v1.EndpointPort{noPort}
		}
		for _, p := range ps {
			for _, a := range s.Addresses {
				note(p, a, true)
			}
			for _, a := range s.NotReadyAddresses {
				note(p, a, false)
			}
		}
	}

	// Group the ports by the exact set of (address, readiness) offering them.
	type group struct {
		set   map[addrKey]bool
		ports []v1.EndpointPort
	}
	groups := map[string]*group{}
	for pk, set := range byPort {
		keys := make([]string, 0, len(set))
		for k, r := range set {
			keys = append(keys, fmt.Sprintf("%s|%s|%t", k.ip, k.uid, r))
		}
		slices.Sort(keys)
		gk := strings.Join(keys, ",")
		g := groups[gk]
		if g == nil {
			g = &group{set: set}
			groups[gk] = g
		}
		if p := ports[pk]; p.Port > 0 {
			g.ports = append(g.ports, p)
		}
	}
	final := []v1.EndpointSubset{}
	for _, g := range groups {
		var s v1.EndpointSubset
		for k, r := range g.set {
			if r {
				s.Addresses = append(s.Addresses, addrs[k])
			} else {
				s.NotReadyAddresses = append(s.NotReadyAddresses, addrs[k])
			}
		}
		s.Ports = g.ports
		final = append(final, s)
	}
	return SortSubsets(final)
}

// SortSubsets orders addresses by IP and UID, ports by name, number and
// protocol, and subsets by their first port and address.
func SortSubsets(subsets []v1.EndpointSubset) []v1.EndpointSubset {
	byAddr := func(a, b v1.EndpointAddress) int {
		ka, kb := keyOf(&a), keyOf(&b)
		return cmp.Or(cmp.Compare(ka.ip, kb.ip), cmp.Compare(ka.uid, kb.uid))
	}
	for i := range subsets {
		slices.SortFunc(subsets[i].Addresses, byAddr)
		slices.SortFunc(subsets[i].NotReadyAddresses, byAddr)
		slices.SortFunc(subsets[i].Ports, func(a, b v1.EndpointPort) int { return cmp.Compare(portKey(a), portKey(b)) })
	}
	slices.SortFunc(subsets, func(a, b v1.EndpointSubset) int { return cmp.Compare(subsetKey(a), subsetKey(b)) })
	return subsets
}

func subsetKey(s v1.EndpointSubset) string {
	var b strings.Builder
	for _, p := range s.Ports {
		b.WriteString(portKey(p) + ";")
	}
	b.WriteString("#")
	for _, a := range s.Addresses {
		b.WriteString(a.IP + ";")
	}
	b.WriteString("#")
	for _, a := range s.NotReadyAddresses {
		b.WriteString(a.IP + ";")
	}
	return b.String()
}

// MaxCapacity is how many addresses an Endpoints object holds at most;
// beyond it the object is truncated and annotated (EndpointSlices have no
// such limit).
const MaxCapacity = 1000

// Truncate cuts subsets down to MaxCapacity addresses as upstream does:
// not-ready addresses go first; if the ready ones alone are too many, every
// subset keeps its proportional share of them. It reports whether anything
// was cut.
func Truncate(subsets []v1.EndpointSubset) bool {
	totalReady, totalNotReady := 0, 0
	for _, s := range subsets {
		totalReady += len(s.Addresses)
		totalNotReady += len(s.NotReadyAddresses)
	}
	if totalReady+totalNotReady <= MaxCapacity {
		return false
	}
	truncateReady := totalReady > MaxCapacity
	limit, total := MaxCapacity-totalReady, totalNotReady
	if truncateReady {
		limit, total = MaxCapacity, totalReady
	}
	left := limit
	for i := range subsets {
		s := &subsets[i]
		n := len(s.NotReadyAddresses)
		if truncateReady {
			n = len(s.Addresses)
		}
		// Shares round up, so the last subsets may get fewer than theirs.
		add := min(int(math.Ceil(float64(n)/float64(total)*float64(limit))), left)
		if truncateReady {
			s.Addresses = s.Addresses[:min(len(s.Addresses), add)]
			s.NotReadyAddresses = []v1.EndpointAddress{}
			left -= len(s.Addresses)
		} else {
			s.NotReadyAddresses = s.NotReadyAddresses[:min(len(s.NotReadyAddresses), add)]
			left -= len(s.NotReadyAddresses)
		}
	}
	return true
}
