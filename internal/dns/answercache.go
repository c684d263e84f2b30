package dns

import (
	"strings"
	"sync"
	"time"

	mdns "github.com/miekg/dns"
)

// AnswerCache keeps the upstreams' answers for their TTL, as CoreDNS's
// cache plugin does with kubeadm's Corefile (`cache 30`): answers and
// denials (NXDOMAIN, and NOERROR without answers) for the smallest TTL
// of their records, at least MinTTL and at most MaxTTL (a denial's TTL is
// its SOA's, as RFC 2308 reads it), and upstream failures (SERVFAIL) for
// FailureTTL, so that a client retrying a broken name does not hammer
// the upstreams. As CoreDNS's, every record of an answer carries the
// entry's remaining lifetime as its TTL: capped when first relayed, then
// counting down.
type AnswerCache struct {
	// MaxTTL caps what an entry lives; MinTTL is its least, for records
	// with TTL 0 (30 s and 5 s when zero, as `cache 30`).
	MaxTTL, MinTTL time.Duration
	// FailureTTL is how long a SERVFAIL is kept (5 s when zero, CoreDNS's
	// default).
	FailureTTL time.Duration
	// Capacity bounds each kind (success, denial) of entry (9984 when
	// zero, CoreDNS's default); a full cache drops an entry at random.
	Capacity int
	// Now is the clock; time.Now when nil.
	Now func() time.Time

	mu      sync.Mutex
	entries map[cacheKey]*cacheEntry
	counts  map[string]int
}

// cacheKey is what makes two questions the same: the name without case,
// type, class, and whether the client asked for DNSSEC records.
type cacheKey struct {
	name         string
	qtype, class uint16
	do           bool
}

type cacheEntry struct {
	msg     *mdns.Msg
	stored  time.Time
	ttl     uint32 // seconds
	expires time.Time
	kind    string
}

// Entry kinds, CoreDNS's metric label values.
const (
	kindSuccess = "success"
	kindDenial  = "denial"
)

func (c *AnswerCache) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func keyOf(req *mdns.Msg) (cacheKey, bool) {
	if len(req.Question) != 1 {
		return cacheKey{}, false
	}
	q := req.Question[0]
	do := false
	if opt := req.IsEdns0(); opt != nil {
		do = opt.Do()
	}
	return cacheKey{name: strings.ToLower(q.Name), qtype: q.Qtype, class: q.Qclass, do: do}, true
}

// Get is the cached answer to req, its TTLs the entry's remaining
// seconds and its ID and question req's; nil when there is none still
// fresh.
func (c *AnswerCache) Get(req *mdns.Msg) (*mdns.Msg, string) {
	key, ok := keyOf(req)
	if !ok {
		return nil, ""
	}
	now := c.now()
	c.mu.Lock()
	e := c.entries[key]
	if e != nil && !now.Before(e.expires) {
		c.remove(key, e)
		e = nil
	}
	c.mu.Unlock()
	if e == nil {
		return nil, ""
	}
	m := e.msg.Copy()
	m.Id = req.Id
	m.Question = req.Question
	// Whole seconds of age off the lifetime, as CoreDNS counts them.
	setTTLs(m, e.ttl-min(e.ttl, uint32(now.Sub(e.stored)/time.Second)))
	return m, e.kind
}

// setTTLs gives every record of m but the EDNS one the TTL ttl.
func setTTLs(m *mdns.Msg, ttl uint32) {
	for _, section := range [][]mdns.RR{m.Answer, m.Ns, m.Extra} {
		for _, rr := range section {
			if h := rr.Header(); h.Rrtype != mdns.TypeOPT {
				h.Ttl = ttl
			}
		}
	}
}

// Put keeps resp, the upstreams' answer to req, if it may be cached, and
// returns what to relay: resp with its TTLs capped to the entry's
// lifetime, or resp itself when it is not kept.
func (c *AnswerCache) Put(req, resp *mdns.Msg) *mdns.Msg {
	key, ok := keyOf(req)
	if !ok || resp == nil || resp.Truncated {
		return resp
	}
	ttl, kind, ok := c.lifetime(resp)
	if !ok {
		return resp
	}
	kept := resp.Copy()
	setTTLs(kept, uint32(ttl/time.Second))
	now := c.now()
	capacity := c.Capacity
	if capacity == 0 {
		capacity = 9984
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries, c.counts = map[cacheKey]*cacheEntry{}, map[string]int{}
	}
	if old := c.entries[key]; old != nil {
		c.remove(key, old)
	}
	if c.counts[kind] >= capacity {
		for k, e := range c.entries { // map order: a random victim
			if e.kind == kind {
				c.remove(k, e)
				break
			}
		}
	}
	c.entries[key] = &cacheEntry{msg: kept, stored: now, ttl: uint32(ttl / time.Second), expires: now.Add(ttl), kind: kind}
	c.counts[kind]++
	return kept.Copy()
}

func (c *AnswerCache) remove(key cacheKey, e *cacheEntry) {
	delete(c.entries, key)
	c.counts[e.kind]--
}

// Len is the number of entries of kind.
func (c *AnswerCache) Len(kind string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.counts[kind]
}

// lifetime says how long resp may be kept, and as what; ok is false for
// an answer that is not kept (refused, not implemented, a format error).
func (c *AnswerCache) lifetime(resp *mdns.Msg) (ttl time.Duration, kind string, ok bool) {
	maxTTL, minTTL, failTTL := c.MaxTTL, c.MinTTL, c.FailureTTL
	if maxTTL == 0 {
		maxTTL = 30 * time.Second
	}
	if minTTL == 0 {
		minTTL = 5 * time.Second
	}
	if failTTL == 0 {
		failTTL = 5 * time.Second
	}
	clamp := func(s uint32) time.Duration {
		return min(max(time.Duration(s)*time.Second, minTTL), maxTTL)
	}
	switch {
	case resp.Rcode == mdns.RcodeServerFailure:
		return failTTL, kindDenial, true
	case resp.Rcode == mdns.RcodeNameError || resp.Rcode == mdns.RcodeSuccess && len(resp.Answer) == 0:
		// A denial lives as long as its SOA says: the smaller of the
		// record's TTL and its minimum field.
		for _, rr := range resp.Ns {
			if soa, isSOA := rr.(*mdns.SOA); isSOA {
				return clamp(min(soa.Hdr.Ttl, soa.Minttl)), kindDenial, true
			}
		}
		return minTTL, kindDenial, true
	case resp.Rcode == mdns.RcodeSuccess:
		least := ^uint32(0)
		for _, section := range [][]mdns.RR{resp.Answer, resp.Ns, resp.Extra} {
			for _, rr := range section {
				if rr.Header().Rrtype != mdns.TypeOPT {
					least = min(least, rr.Header().Ttl)
				}
			}
		}
		return clamp(least), kindSuccess, true
	}
	return 0, "", false
}
