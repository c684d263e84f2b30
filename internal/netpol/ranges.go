package netpol

import (
	"cmp"
	"encoding/binary"
	"math/bits"
	"net/netip"
	"slices"
	"strconv"
)

// span is an inclusive range of IPv4 addresses, as numbers.
type span struct{ lo, hi uint32 }

// addrs collects addresses and blocks into the disjoint ranges an
// nftables interval set takes (which refuses overlapping elements).
type addrs struct{ spans []span }

func v4(a netip.Addr) uint32 { b := a.As4(); return binary.BigEndian.Uint32(b[:]) }

func fromV4(n uint32) netip.Addr {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], n)
	return netip.AddrFrom4(b)
}

func prefixSpan(p netip.Prefix) span {
	p = p.Masked()
	lo := v4(p.Addr())
	return span{lo, lo | (1<<(32-p.Bits()) - 1)}
}

// addIP adds one address; anything but IPv4 is ignored.
func (a *addrs) addIP(ip string) {
	if addr, err := netip.ParseAddr(ip); err == nil && addr.Is4() {
		n := v4(addr)
		a.spans = append(a.spans, span{n, n})
	}
}

// addBlock adds cidr without the except blocks, as an ipBlock reads;
// false for a block that is not IPv4 (validation lets IPv6 through,
// which Orca's pod network does not carry).
func (a *addrs) addBlock(cidr string, except []string) bool {
	p, err := netip.ParsePrefix(cidr)
	if err != nil || !p.Addr().Is4() {
		return false
	}
	parts := []span{prefixSpan(p)}
	for _, e := range except {
		ep, err := netip.ParsePrefix(e)
		if err != nil || !ep.Addr().Is4() {
			continue
		}
		parts = subtract(parts, prefixSpan(ep))
	}
	a.spans = append(a.spans, parts...)
	return true
}

// subtract is parts without cut.
func subtract(parts []span, cut span) []span {
	var out []span
	for _, s := range parts {
		if cut.hi < s.lo || cut.lo > s.hi {
			out = append(out, s)
			continue
		}
		if cut.lo > s.lo {
			out = append(out, span{s.lo, cut.lo - 1})
		}
		if cut.hi < s.hi {
			out = append(out, span{cut.hi + 1, s.hi})
		}
	}
	return out
}

// elements are the collected addresses as disjoint, sorted set
// elements: a single address, a CIDR block where a range is exactly
// one, or FIRST-LAST.
func (a *addrs) elements() []string {
	s := slices.Clone(a.spans)
	slices.SortFunc(s, func(x, y span) int { return cmp.Or(cmp.Compare(x.lo, y.lo), cmp.Compare(x.hi, y.hi)) })
	var merged []span
	for _, x := range s {
		if n := len(merged); n > 0 && (x.lo <= merged[n-1].hi || merged[n-1].hi != ^uint32(0) && x.lo == merged[n-1].hi+1) {
			merged[n-1].hi = max(merged[n-1].hi, x.hi)
			continue
		}
		merged = append(merged, x)
	}
	out := make([]string, 0, len(merged))
	for _, m := range merged {
		out = append(out, m.String())
	}
	return out
}

func (s span) String() string {
	if s.lo == s.hi {
		return fromV4(s.lo).String()
	}
	size := uint64(s.hi) - uint64(s.lo) + 1
	if size&(size-1) == 0 && uint64(s.lo)%size == 0 {
		return fromV4(s.lo).String() + "/" + strconv.Itoa(32-bits.TrailingZeros64(size))
	}
	return fromV4(s.lo).String() + "-" + fromV4(s.hi).String()
}
