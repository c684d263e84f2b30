package allocator

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// IPRange is a service CIDR. Offset 0 is the address after the network
// address; the broadcast address is not used, as upstream leaves it.
type IPRange struct {
	prefix netip.Prefix
	base   uint32
	size   int
}

// ParseIPRange reads an IPv4 service CIDR such as 10.43.0.0/16. Prefixes
// shorter than /12 are refused as upstream refuses them: the bitmap of a
// larger range would be megabytes rewritten on every allocation.
func ParseIPRange(cidr string) (IPRange, error) {
	p, err := netip.ParsePrefix(strings.TrimSpace(cidr))
	if err != nil {
		return IPRange{}, fmt.Errorf("service CIDR %q: %w", cidr, err)
	}
	p = p.Masked()
	if !p.Addr().Is4() {
		return IPRange{}, fmt.Errorf("service CIDR %q: only IPv4 is supported", cidr)
	}
	if p.Bits() < 12 || p.Bits() > 30 {
		return IPRange{}, fmt.Errorf("service CIDR %q: the prefix length must be between /12 and /30", cidr)
	}
	a := p.Addr().As4()
	return IPRange{prefix: p, base: binary.BigEndian.Uint32(a[:]) + 1, size: 1<<(32-p.Bits()) - 2}, nil
}

// String is the CIDR, as upstream's messages and RangeAllocation.range show it.
func (r IPRange) String() string { return r.prefix.String() }

// Size is the number of allocatable addresses.
func (r IPRange) Size() int { return r.size }

// Offset maps an address to its offset; ok is false outside the range.
func (r IPRange) Offset(ip netip.Addr) (int, bool) {
	ip = ip.Unmap()
	if !ip.Is4() || !r.prefix.Contains(ip) {
		return 0, false
	}
	a := ip.As4()
	off := int(binary.BigEndian.Uint32(a[:])) - int(r.base)
	if off < 0 || off >= r.size {
		return 0, false
	}
	return off, true
}

// Addr maps an offset to its address.
func (r IPRange) Addr(off int) netip.Addr {
	var a [4]byte
	binary.BigEndian.PutUint32(a[:], r.base+uint32(off))
	return netip.AddrFrom4(a)
}

// StaticBand is upstream's reserved low band: min(max(16, cidrSize/16), 256),
// none for ranges of 16 addresses or fewer.
func (r IPRange) StaticBand() int {
	return staticBand(r.size+2, 16, 256, 16)
}

// PortRange is a range of node ports, both ends included.
type PortRange struct {
	Base, Size int
}

// ParsePortRange reads "30000-32767" or "30000+2767", as upstream's flag does.
func ParsePortRange(s string) (PortRange, error) {
	s = strings.TrimSpace(s)
	bad := func(err error) (PortRange, error) {
		return PortRange{}, fmt.Errorf("node port range %q: %w", s, err)
	}
	var lo, hi int
	var err error
	if a, b, ok := strings.Cut(s, "-"); ok {
		if lo, err = strconv.Atoi(a); err != nil {
			return bad(err)
		}
		if hi, err = strconv.Atoi(b); err != nil {
			return bad(err)
		}
	} else if a, b, ok := strings.Cut(s, "+"); ok {
		var n int
		if lo, err = strconv.Atoi(a); err != nil {
			return bad(err)
		}
		if n, err = strconv.Atoi(b); err != nil {
			return bad(err)
		}
		hi = lo + n
	} else {
		return bad(fmt.Errorf("want FIRST-LAST"))
	}
	if lo < 1 || hi > 65535 || hi < lo {
		return bad(fmt.Errorf("want 1 <= FIRST <= LAST <= 65535"))
	}
	return PortRange{Base: lo, Size: hi - lo + 1}, nil
}

// String is upstream's form, "30000-32767".
func (r PortRange) String() string { return fmt.Sprintf("%d-%d", r.Base, r.Base+r.Size-1) }

// Offset maps a port to its offset; ok is false outside the range.
func (r PortRange) Offset(port int) (int, bool) {
	off := port - r.Base
	return off, off >= 0 && off < r.Size
}

// StaticBand is upstream's reserved low band of node ports:
// min(max(16, size/32), 128), none for ranges of 16 ports or fewer.
func (r PortRange) StaticBand() int {
	return staticBand(r.Size, 16, 128, 32)
}

func staticBand(size, lo, hi, step int) int {
	if size <= lo {
		return 0
	}
	return min(max(size/step, lo), hi)
}
