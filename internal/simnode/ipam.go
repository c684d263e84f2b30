package simnode

import (
	"fmt"
	"net/netip"

	"k8s.io/apimachinery/pkg/types"
)

// Pool hands out pod addresses from one node's podCIDR, as the CNI
// host-local plugin would: the network address, the first one (the
// bridge's gateway) and, for IPv4, the broadcast address are never given.
// It is not safe for concurrent use.
type Pool struct {
	prefix netip.Prefix
	size   int // usable addresses, from offset 2
	used   map[netip.Addr]types.UID
	byUID  map[types.UID]netip.Addr
	next   int
}

// NewPool returns an empty pool over cidr.
func NewPool(cidr string) (*Pool, error) {
	p, err := netip.ParsePrefix(cidr)
	if err != nil {
		return nil, fmt.Errorf("pod range %q: %w", cidr, err)
	}
	p = p.Masked()
	host := p.Addr().BitLen() - p.Bits()
	if host > 16 {
		host = 16 // more than any node holds pods
	}
	size := 1<<host - 2 // network and gateway
	if p.Addr().Is4() {
		size-- // broadcast
	}
	if size < 1 {
		return nil, fmt.Errorf("pod range %q has no room for pods", cidr)
	}
	return &Pool{prefix: p, size: size, used: map[netip.Addr]types.UID{}, byUID: map[types.UID]netip.Addr{}}, nil
}

// Hold records that uid has ip (a pod found running at start-up). It
// reports false when ip is outside the range or another pod holds it.
func (p *Pool) Hold(uid types.UID, ip string) bool {
	a, err := netip.ParseAddr(ip)
	if err != nil || !p.prefix.Contains(a) {
		return false
	}
	if owner, ok := p.used[a]; ok {
		return owner == uid
	}
	if old, ok := p.byUID[uid]; ok {
		delete(p.used, old)
	}
	p.used[a], p.byUID[uid] = uid, a
	return true
}

// Allocate returns uid's address, choosing a free one the first time.
func (p *Pool) Allocate(uid types.UID) (string, error) {
	if a, ok := p.byUID[uid]; ok {
		return a.String(), nil
	}
	for range p.size {
		a := p.addr(p.next)
		p.next = (p.next + 1) % p.size
		if _, ok := p.used[a]; !ok {
			p.used[a], p.byUID[uid] = uid, a
			return a.String(), nil
		}
	}
	return "", fmt.Errorf("no free address in %s", p.prefix)
}

// Release frees uid's address, if it has one.
func (p *Pool) Release(uid types.UID) {
	if a, ok := p.byUID[uid]; ok {
		delete(p.used, a)
		delete(p.byUID, uid)
	}
}

// addr is the i-th usable address: the range's base plus i+2.
func (p *Pool) addr(i int) netip.Addr {
	a := p.prefix.Addr()
	for range i + 2 {
		a = a.Next()
	}
	return a
}
