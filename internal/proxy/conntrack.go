package proxy

import (
	"fmt"
	"net/netip"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// Flow is a UDP conntrack entry as the cleanup reads it: where the
// client sent to (OrigDst) and who answers (ReplySrc), the endpoint the
// service proxy's DNAT chose, or the destination itself when no DNAT
// happened.
type Flow struct {
	OrigDst, ReplySrc netip.AddrPort
}

// StaleUDP is the flows to delete after a sync: UDP has no connection
// to end, so an entry for a service address keeps sending a client's
// datagrams to the endpoint it first chose, even once that endpoint is
// gone, for as long as the client keeps talking (a resolver to a dead
// DNS pod, forever). As upstream's conntrack reconciler, an entry for a
// UDP service's address and port (cluster IP, external and load
// balancer IPs, any address on the node port) whose answering end is
// not one of the endpoints the rules now route to goes, so the next
// datagram is routed afresh: that covers a removed endpoint and a
// service that had none (its entries' answering end is the service
// address itself).
func StaleUDP(svcs []ServicePort, flows []Flow) []Flow {
	byAddr := map[netip.AddrPort]*ServicePort{}
	byNodePort := map[uint16]*ServicePort{}
	serving := map[*ServicePort]map[netip.AddrPort]bool{}
	for i := range svcs {
		s := &svcs[i]
		if s.Protocol != "udp" {
			continue
		}
		for _, ip := range append(append([]string{s.ClusterIP}, s.ExternalIPs...), s.LoadBalancerIPs...) {
			if a, err := netip.ParseAddr(ip); err == nil {
				byAddr[netip.AddrPortFrom(a, uint16(s.Port))] = s
			}
		}
		if s.NodePort != 0 {
			byNodePort[uint16(s.NodePort)] = s
		}
		eps := map[netip.AddrPort]bool{}
		cluster, local := categorize(s)
		for _, e := range append(cluster, local...) {
			if a, err := netip.ParseAddr(e.IP); err == nil {
				eps[netip.AddrPortFrom(a, uint16(e.Port))] = true
			}
		}
		serving[s] = eps
	}
	var out []Flow
	for _, f := range flows {
		s := byAddr[f.OrigDst]
		if s == nil {
			s = byNodePort[f.OrigDst.Port()]
		}
		if s != nil && !serving[s][f.ReplySrc] {
			out = append(out, f)
		}
	}
	return out
}

// conntrackTable is what the cleanup needs of the kernel's table.
type conntrackTable interface {
	ListUDP() ([]Flow, error)
	Delete([]Flow) (uint, error)
}

// kernelConntrack is the node's own table, over netlink.
type kernelConntrack struct{}

func (kernelConntrack) ListUDP() ([]Flow, error) {
	flows, err := netlink.ConntrackTableList(netlink.ConntrackTable, unix.AF_INET)
	if err != nil {
		return nil, fmt.Errorf("list conntrack entries: %w", err)
	}
	var out []Flow
	for _, f := range flows {
		if f.Forward.Protocol != unix.IPPROTO_UDP {
			continue
		}
		dst, ok1 := netip.AddrFromSlice(f.Forward.DstIP.To4())
		src, ok2 := netip.AddrFromSlice(f.Reverse.SrcIP.To4())
		if ok1 && ok2 {
			out = append(out, Flow{OrigDst: netip.AddrPortFrom(dst, f.Forward.DstPort), ReplySrc: netip.AddrPortFrom(src, f.Reverse.SrcPort)})
		}
	}
	return out, nil
}

func (kernelConntrack) Delete(flows []Flow) (uint, error) {
	if len(flows) == 0 {
		return 0, nil
	}
	set := flowSet{}
	for _, f := range flows {
		set[f] = true
	}
	n, err := netlink.ConntrackDeleteFilters(netlink.ConntrackTable, unix.AF_INET, set)
	if err != nil {
		return n, fmt.Errorf("delete conntrack entries: %w", err)
	}
	return n, nil
}

// flowSet matches the UDP entries of the given flows.
type flowSet map[Flow]bool

func (s flowSet) MatchConntrackFlow(f *netlink.ConntrackFlow) bool {
	if f.Forward.Protocol != unix.IPPROTO_UDP {
		return false
	}
	dst, ok1 := netip.AddrFromSlice(f.Forward.DstIP.To4())
	src, ok2 := netip.AddrFromSlice(f.Reverse.SrcIP.To4())
	if !ok1 || !ok2 {
		return false
	}
	return s[Flow{OrigDst: netip.AddrPortFrom(dst, f.Forward.DstPort), ReplySrc: netip.AddrPortFrom(src, f.Reverse.SrcPort)}]
}

func (f Flow) String() string { return f.OrigDst.String() + " -> " + f.ReplySrc.String() }
