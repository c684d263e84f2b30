package dns

import (
	"fmt"
	"testing"
	"time"

	mdns "github.com/miekg/dns"
)

func answer(req *mdns.Msg, rcode int, rrs ...string) *mdns.Msg {
	m := new(mdns.Msg).SetRcode(req, rcode)
	for _, s := range rrs {
		rr, err := mdns.NewRR(s)
		if err != nil {
			panic(err)
		}
		if rr.Header().Rrtype == mdns.TypeSOA {
			m.Ns = append(m.Ns, rr)
		} else {
			m.Answer = append(m.Answer, rr)
		}
	}
	return m
}

const upstreamSOA = "example.org. %d IN SOA ns.example.org. host.example.org. 1 7200 3600 1209600 %d"

// TestAnswerCacheLifetimes: how long each kind of answer is kept, and the
// TTLs a cached answer carries as it ages.
func TestAnswerCacheLifetimes(t *testing.T) {
	for _, tc := range []struct {
		name     string
		rcode    int
		rrs      []string
		lifetime time.Duration // 0: not kept
	}{
		{"an answer for its smallest TTL", mdns.RcodeSuccess, []string{"a.example.org. 20 IN A 192.0.2.1", "a.example.org. 12 IN A 192.0.2.2"}, 12 * time.Second},
		{"capped at 30 s", mdns.RcodeSuccess, []string{"a.example.org. 3600 IN A 192.0.2.1"}, 30 * time.Second},
		{"at least 5 s", mdns.RcodeSuccess, []string{"a.example.org. 0 IN A 192.0.2.1"}, 5 * time.Second},
		{"NXDOMAIN for its SOA's minimum", mdns.RcodeNameError, []string{fmt.Sprintf(upstreamSOA, 600, 10)}, 10 * time.Second},
		{"NODATA for the SOA's own TTL when smaller", mdns.RcodeSuccess, []string{fmt.Sprintf(upstreamSOA, 8, 600)}, 8 * time.Second},
		{"a denial without SOA for 5 s", mdns.RcodeNameError, nil, 5 * time.Second},
		{"SERVFAIL for 5 s", mdns.RcodeServerFailure, nil, 5 * time.Second},
		{"REFUSED not kept", mdns.RcodeRefused, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := time.Unix(1000, 0)
			c := &AnswerCache{Now: func() time.Time { return now }}
			req := new(mdns.Msg).SetQuestion("a.example.org.", mdns.TypeA)
			relayed := c.Put(req, answer(req, tc.rcode, tc.rrs...))
			got, _ := c.Get(req)
			if tc.lifetime == 0 {
				if got != nil {
					t.Fatal("kept")
				}
				return
			}
			if got == nil {
				t.Fatal("not kept")
			}
			secs := uint32(tc.lifetime / time.Second)
			for _, rr := range append(relayed.Answer, relayed.Ns...) {
				if rr.Header().Ttl != secs {
					t.Errorf("relayed with TTL %d, want the lifetime %d", rr.Header().Ttl, secs)
				}
			}
			now = now.Add(tc.lifetime - 1500*time.Millisecond)
			got, _ = c.Get(req)
			if got == nil {
				t.Fatal("gone before its lifetime")
			}
			for _, rr := range append(got.Answer, got.Ns...) {
				if want := secs - uint32((tc.lifetime-1500*time.Millisecond)/time.Second); rr.Header().Ttl != want {
					t.Errorf("after %v: TTL %d, want %d", tc.lifetime-1500*time.Millisecond, rr.Header().Ttl, want)
				}
			}
			now = now.Add(1500 * time.Millisecond)
			if got, _ := c.Get(req); got != nil {
				t.Error("still there at the end of its lifetime")
			}
		})
	}
}

// TestAnswerCacheKeys: the name's case does not matter, its type does,
// and a cached answer takes the request's ID and question.
func TestAnswerCacheKeys(t *testing.T) {
	c := &AnswerCache{}
	req := new(mdns.Msg).SetQuestion("a.example.org.", mdns.TypeA)
	c.Put(req, answer(req, mdns.RcodeSuccess, "a.example.org. 60 IN A 192.0.2.1"))
	upper := new(mdns.Msg).SetQuestion("A.Example.ORG.", mdns.TypeA)
	got, kind := c.Get(upper)
	if got == nil || got.Id != upper.Id || got.Question[0].Name != "A.Example.ORG." || kind != "success" {
		t.Fatalf("the same name in capitals: %v %q", got, kind)
	}
	if got, _ := c.Get(new(mdns.Msg).SetQuestion("a.example.org.", mdns.TypeAAAA)); got != nil {
		t.Error("an AAAA question answered from an A answer")
	}
	truncated := answer(req, mdns.RcodeSuccess, "b.example.org. 60 IN A 192.0.2.1")
	truncated.Truncated = true
	treq := new(mdns.Msg).SetQuestion("b.example.org.", mdns.TypeA)
	c.Put(treq, truncated)
	if got, _ := c.Get(treq); got != nil {
		t.Error("a truncated answer was kept")
	}
}

// TestAnswerCacheCapacity: a full cache makes room by dropping one entry.
func TestAnswerCacheCapacity(t *testing.T) {
	c := &AnswerCache{Capacity: 2}
	for _, name := range []string{"a.", "b.", "c."} {
		req := new(mdns.Msg).SetQuestion(name, mdns.TypeA)
		c.Put(req, answer(req, mdns.RcodeSuccess, name+" 60 IN A 192.0.2.1"))
	}
	if n := c.Len("success"); n != 2 {
		t.Errorf("%d entries, want the capacity 2", n)
	}
	if got, _ := c.Get(new(mdns.Msg).SetQuestion("c.", mdns.TypeA)); got == nil {
		t.Error("the newest entry was dropped")
	}
}
