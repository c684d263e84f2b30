package dns

import (
	"fmt"
	"net"
	"sync/atomic"
	"time"

	mdns "github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"
)

// Handler serves DNS messages: the cluster domain from a Resolver, other
// names through the upstreams.
type Handler struct {
	res       *Resolver
	upstreams []string
	ready     atomic.Bool
	requests  *prometheus.CounterVec
	responses *prometheus.CounterVec
	duration  *prometheus.HistogramVec
	// cache keeps the upstreams' answers for their TTL.
	cache        *AnswerCache
	hits         *prometheus.CounterVec
	misses       prometheus.Counter
	cacheEntries *prometheus.GaugeVec
}

// NewHandler serves from res and forwards to upstreams; metrics go to
// reg when it is not nil. The handler answers at once (tests, benchmarks);
// a Server holds answers back until its caches have synced.
func NewHandler(res *Resolver, upstreams []string, reg prometheus.Registerer) (*Handler, error) {
	h := &Handler{
		res: res,
		// CoreDNS's metric names, so that its dashboards work.
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "coredns_dns_requests_total",
			Help: "Counter of DNS requests made per zone, protocol and family."}, []string{"zone", "proto", "family", "type"}),
		responses: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "coredns_dns_responses_total",
			Help: "Counter of response status codes."}, []string{"zone", "rcode"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "coredns_dns_request_duration_seconds",
			Help: "Histogram of the time (in seconds) each request took.", Buckets: prometheus.ExponentialBuckets(0.00025, 2, 16)}, []string{"zone", "type"}),
		cache: &AnswerCache{},
		hits: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "coredns_cache_hits_total",
			Help: "The count of cache hits."}, []string{"type"}),
		misses: prometheus.NewCounter(prometheus.CounterOpts{Name: "coredns_cache_misses_total",
			Help: "The count of cache misses."}),
		cacheEntries: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "coredns_cache_entries",
			Help: "The number of elements in the cache."}, []string{"type"}),
	}
	for _, u := range upstreams {
		if _, _, err := net.SplitHostPort(u); err != nil {
			u = net.JoinHostPort(u, "53")
		}
		h.upstreams = append(h.upstreams, u)
	}
	h.ready.Store(true)
	if reg != nil {
		for _, c := range []prometheus.Collector{h.requests, h.responses, h.duration, h.hits, h.misses, h.cacheEntries} {
			if err := reg.Register(c); err != nil {
				return nil, fmt.Errorf("dns: metrics: %w", err)
			}
		}
	}
	return h, nil
}

// ServeDNS implements mdns.Handler.
func (h *Handler) ServeDNS(w mdns.ResponseWriter, req *mdns.Msg) {
	start := time.Now()
	proto := "udp"
	if _, ok := w.RemoteAddr().(*net.TCPAddr); ok {
		proto = "tcp"
	}
	family := "1"
	if ip := remoteIP(w.RemoteAddr()); ip != nil && ip.To4() == nil {
		family = "2"
	}
	qtype, zone := "other", "."
	if len(req.Question) == 1 {
		qtype = mdns.TypeToString[req.Question[0].Qtype]
		if mdns.IsSubDomain(h.res.Zone(), req.Question[0].Name) {
			zone = h.res.Zone()
		}
	}
	resp := h.answer(req, proto)
	h.requests.WithLabelValues(zone, proto, family, qtype).Inc()
	h.responses.WithLabelValues(zone, mdns.RcodeToString[resp.Rcode]).Inc()
	h.duration.WithLabelValues(zone, qtype).Observe(time.Since(start).Seconds())
	_ = w.WriteMsg(resp)
}

// answer builds the response to req received over proto.
func (h *Handler) answer(req *mdns.Msg, proto string) *mdns.Msg {
	m := new(mdns.Msg)
	if req.Opcode != mdns.OpcodeQuery || len(req.Question) != 1 {
		return m.SetRcode(req, mdns.RcodeNotImplemented)
	}
	if !h.ready.Load() {
		return m.SetRcode(req, mdns.RcodeServerFailure)
	}
	res := h.res.Resolve(req.Question[0])
	if res.Forward {
		return h.forward(req, proto)
	}
	m.SetRcode(req, res.Rcode)
	m.Authoritative = true
	m.RecursionAvailable = true
	m.Answer, m.Ns, m.Extra = res.Answer, res.Ns, res.Extra
	size := mdns.MinMsgSize
	if proto == "tcp" {
		size = mdns.MaxMsgSize
	}
	if opt := req.IsEdns0(); opt != nil {
		if proto == "udp" && int(opt.UDPSize()) > size {
			size = int(opt.UDPSize())
		}
		m.SetEdns0(uint16(size), false)
	}
	// Truncate sets TC when records had to go, so that the client retries
	// over TCP.
	m.Truncate(size)
	return m
}

// forward answers from the cache, or asks the upstreams in turn and
// keeps what they say; without any, or when none answers, the client
// gets SERVFAIL (what CoreDNS returns when no plugin handles a name).
func (h *Handler) forward(req *mdns.Msg, proto string) *mdns.Msg {
	if len(h.upstreams) == 0 {
		return new(mdns.Msg).SetRcode(req, mdns.RcodeServerFailure)
	}
	if resp, kind := h.cache.Get(req); resp != nil {
		h.hits.WithLabelValues(kind).Inc()
		return resp
	}
	h.misses.Inc()
	resp := h.cache.Put(req, h.exchange(req, proto))
	for _, kind := range []string{kindSuccess, kindDenial} {
		h.cacheEntries.WithLabelValues(kind).Set(float64(h.cache.Len(kind)))
	}
	return resp
}

func (h *Handler) exchange(req *mdns.Msg, proto string) *mdns.Msg {
	for _, u := range h.upstreams {
		c := &mdns.Client{Net: proto, Timeout: 2 * time.Second}
		// A truncated upstream answer is relayed as it is (and not
		// cached): the client retries over TCP, which is forwarded over
		// TCP.
		if resp, _, err := c.Exchange(req, u); err == nil {
			return resp
		}
	}
	return new(mdns.Msg).SetRcode(req, mdns.RcodeServerFailure)
}

func remoteIP(a net.Addr) net.IP {
	switch v := a.(type) {
	case *net.UDPAddr:
		return v.IP
	case *net.TCPAddr:
		return v.IP
	}
	if a == nil {
		return nil
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return nil
	}
	return net.ParseIP(host)
}
