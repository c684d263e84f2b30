// Package proxy is the data path of Orca's ingress controller: an HTTP
// handler that routes each request by the current route.Table straight to
// a ready endpoint of the chosen backend (no hop through the cluster IP),
// and the TLS configuration that answers each server name with its
// Ingress's certificate. Swapping the table changes routing for the next
// request; requests and connections in flight keep going.
package proxy

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/orca-project/orca/internal/ingress/gateway"
	"github.com/orca-project/orca/internal/ingress/route"
)

// Handler routes requests by the tables it holds: the Gateway API's,
// then the Ingresses'.
type Handler struct {
	table    atomic.Pointer[route.Table]
	gateways atomic.Pointer[gateway.Table]
	proxy    *httputil.ReverseProxy
	log      *slog.Logger
	// random draws in [0, 1), for canary weights and endpoint choice.
	random func() float64
	// requests and latency are nil until Register.
	requests *prometheus.CounterVec
	latency  prometheus.Histogram
}

// Register adds the handler's metrics to reg: requests by status code
// and the time to answer them.
func (h *Handler) Register(reg prometheus.Registerer) error {
	requests := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "orca_ingress_requests_total", Help: "Requests the ingress answered, by status code.",
	}, []string{"code"})
	latency := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "orca_ingress_request_duration_seconds", Help: "Time from a request's arrival at the ingress to the end of its answer.",
		Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
	})
	for _, c := range []prometheus.Collector{requests, latency} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	h.requests, h.latency = requests, latency
	return nil
}

// New builds a handler with an empty table (every request 404s until Set).
func New(log *slog.Logger) *Handler {
	if log == nil {
		log = slog.Default()
	}
	h := &Handler{log: log, random: rand.Float64}
	h.table.Store(&route.Table{})
	h.proxy = &httputil.ReverseProxy{
		Rewrite:        rewrite,
		ModifyResponse: modifyResponse,
		Transport:      newTransport(),
		ErrorHandler:   h.proxyError,
		// No periodic flush: an answer of known length goes out in as few
		// writes as it can; streams (no Content-Length, or server-sent
		// events) are flushed as they are written, which ReverseProxy does
		// for them whatever this says.
		FlushInterval: 0,
		// Without a pool each answer's copy allocates and clears 32 KiB.
		BufferPool: bufferPool{},
		ErrorLog:   slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
	return h
}

// bufferPool lends the 32 KiB buffers ReverseProxy copies answers
// through.
type bufferPool struct{}

var buffers = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

func (bufferPool) Get() []byte  { return *buffers.Get().(*[]byte) }
func (bufferPool) Put(b []byte) { buffers.Put(&b) }

// Set makes t the Ingress routing of the next requests.
func (h *Handler) Set(t *route.Table) { h.table.Store(t) }

// SetGateways makes t the Gateway API routing of the next requests.
func (h *Handler) SetGateways(t *gateway.Table) { h.gateways.Store(t) }

// Table is the routing in use.
func (h *Handler) Table() *route.Table { return h.table.Load() }

// newTransport keeps connections to endpoints alive between requests, as
// the point of an in-process proxy is to cost little per request.
func newTransport() *http.Transport {
	return &http.Transport{
		Proxy:                 nil,
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          1024,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		ResponseHeaderTimeout: 60 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

type ctxKey int

const (
	targetKey ctxKey = iota
	portKey
	planKey
)

// plan is what a Gateway API rule changes in a request it proxies and in
// the answer.
type plan struct {
	host, path                      string
	requestHeaders, responseHeaders []*gwv1.HTTPHeaderFilter
}

// ServeHTTP routes one request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.requests == nil {
		h.serve(w, r)
		return
	}
	start := time.Now()
	cw := &codeWriter{ResponseWriter: w}
	h.serve(cw, r)
	code := cw.code
	if code == 0 {
		code = http.StatusOK
	}
	h.requests.WithLabelValues(strconv.Itoa(code)).Inc()
	h.latency.Observe(time.Since(start).Seconds())
}

// codeWriter remembers the status code written. Unwrap lets the proxy
// reach the connection for upgrades and flushes
// (http.ResponseController).
type codeWriter struct {
	http.ResponseWriter
	code int
}

func (c *codeWriter) WriteHeader(code int) {
	if c.code == 0 && code >= 200 || code == http.StatusSwitchingProtocols {
		c.code = code
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *codeWriter) Write(b []byte) (int, error) {
	if c.code == 0 {
		c.code = http.StatusOK
	}
	return c.ResponseWriter.Write(b)
}

func (c *codeWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

func (h *Handler) serve(w http.ResponseWriter, r *http.Request) {
	host := r.Host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		host = hh
	}
	port := localPort(r)
	gw := h.gateways.Load()
	// A Gateway's own address routes by that Gateway alone.
	if own, ok := gw.For(originalDstOf(r.Context())); ok {
		if rule, m, ok := own.Route(port, host, r); ok {
			h.serveGateway(w, r, rule, m, port)
			return
		}
		http.Error(w, "404 page not found", http.StatusNotFound)
		return
	}
	if gw.Serves(port) {
		if rule, m, ok := gw.Route(port, host, r); ok {
			h.serveGateway(w, r, rule, m, port)
			return
		}
	}
	m, ok := h.table.Load().Route(host, r.URL.Path)
	if !ok {
		http.Error(w, "404 page not found", http.StatusNotFound)
		return
	}
	b := m.PickByHeader(r.Header.Get, h.random())
	if len(b.Endpoints) == 0 {
		http.Error(w, "503 Service Unavailable: no ready endpoint for "+b.Service.String()+":"+b.Port, http.StatusServiceUnavailable)
		return
	}
	h.forward(w, r, b.Endpoints, port, nil)
}

// forward proxies r to one of endpoints, at random, with p's changes.
func (h *Handler) forward(w http.ResponseWriter, r *http.Request, endpoints []string, port int32, p *plan) {
	ep := endpoints[int(h.random()*float64(len(endpoints)))%len(endpoints)]
	ctx := context.WithValue(r.Context(), targetKey, ep)
	if port != 0 {
		ctx = context.WithValue(ctx, portKey, strconv.Itoa(int(port)))
	}
	if p != nil {
		ctx = context.WithValue(ctx, planKey, p)
	}
	h.proxy.ServeHTTP(w, r.WithContext(ctx))
}

// localPort is the port the request came in on, 0 when unknown.
func localPort(r *http.Request) int32 {
	if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if _, port, err := net.SplitHostPort(la.String()); err == nil {
			n, _ := strconv.Atoi(port)
			return int32(n)
		}
	}
	return 0
}

// serveGateway answers a request an HTTPRoute rule matched: a redirect,
// a 500 for a rule that cannot be served (or a backend that is not
// valid), or the request proxied to a backend picked by weight with the
// rule's and the backend's filters.
func (h *Handler) serveGateway(w http.ResponseWriter, r *http.Request, rule *gateway.Rule, m *gateway.Match, port int32) {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if f := rule.Redirect; f != nil {
		w.Header().Set("Location", gateway.RedirectLocation(f, r, m, scheme, port))
		w.WriteHeader(gateway.RedirectCode(f))
		return
	}
	if rule.Fail {
		http.Error(w, "500 Internal Server Error: the route's rule cannot be served", http.StatusInternalServerError)
		return
	}
	b := rule.Pick(h.random())
	if b == nil || b.Invalid {
		http.Error(w, "500 Internal Server Error: no valid backend", http.StatusInternalServerError)
		return
	}
	if len(b.Endpoints) == 0 {
		http.Error(w, "503 Service Unavailable: no ready endpoint for "+b.Service.String()+":"+b.Port, http.StatusServiceUnavailable)
		return
	}
	p := &plan{
		requestHeaders:  append(slices.Clone(rule.RequestHeaders), b.RequestHeaders...),
		responseHeaders: append(slices.Clone(rule.ResponseHeaders), b.ResponseHeaders...),
	}
	if rw := rule.Rewrite; rw != nil {
		if rw.Hostname != nil {
			p.host = string(*rw.Hostname)
		}
		if rw.Path != nil {
			p.path = gateway.ModifyPath(rw.Path, r.URL.Path, m)
		}
	}
	h.forward(w, r, b.Endpoints, port, p)
}

// rewrite sends the request to the chosen endpoint with the client's
// Host and the X-Forwarded-* headers backends expect behind an ingress,
// then applies a Gateway API rule's changes.
func rewrite(pr *httputil.ProxyRequest) {
	ep, _ := pr.In.Context().Value(targetKey).(string)
	pr.SetURL(&url.URL{Scheme: "http", Host: ep})
	pr.Out.Host = pr.In.Host
	pr.SetXForwarded()
	if port, ok := pr.In.Context().Value(portKey).(string); ok {
		pr.Out.Header.Set("X-Forwarded-Port", port)
	}
	if ip, _, err := net.SplitHostPort(pr.In.RemoteAddr); err == nil {
		pr.Out.Header.Set("X-Real-Ip", ip)
	}
	p, _ := pr.In.Context().Value(planKey).(*plan)
	if p == nil {
		return
	}
	if p.host != "" {
		pr.Out.Host = p.host
	}
	if p.path != "" {
		pr.Out.URL.Path, pr.Out.URL.RawPath = p.path, ""
	}
	for _, f := range p.requestHeaders {
		gateway.ApplyHeaders(pr.Out.Header, f)
	}
}

// modifyResponse applies a Gateway API rule's response header filters.
func modifyResponse(resp *http.Response) error {
	if p, _ := resp.Request.Context().Value(planKey).(*plan); p != nil {
		for _, f := range p.responseHeaders {
			gateway.ApplyHeaders(resp.Header, f)
		}
	}
	return nil
}

// proxyError answers a request the endpoint did not: 502 when it could
// not be reached or broke off, 504 when it did not answer in time.
func (h *Handler) proxyError(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, context.Canceled) {
		// The client left; nobody reads the answer.
		return
	}
	code := http.StatusBadGateway
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		code = http.StatusGatewayTimeout
	}
	h.log.Debug("ingress backend failed", "host", r.Host, "path", r.URL.Path, "endpoint", r.Context().Value(targetKey), "err", err)
	http.Error(w, strconv.Itoa(code)+" "+http.StatusText(code), code)
}

// TLSConfig answers each TLS server name with the certificate the table
// gives it, and offers HTTP/2. A name no certificate covers fails the
// handshake, as there is nothing honest to present.
func (h *Handler) TLSConfig() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		NextProtos: []string{"h2", "http/1.1"},
		GetCertificate: func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
			gw := h.gateways.Load()
			var c *route.TLSCert
			var ok bool
			if own, dedicated := gw.For(originalDstOf(hello.Context())); dedicated {
				c, ok = own.Certificate(hello.ServerName)
			} else if c, ok = gw.Certificate(hello.ServerName); !ok {
				c, ok = h.table.Load().Certificate(hello.ServerName)
			}
			if !ok {
				return nil, errors.New("no certificate for " + strconv.Quote(hello.ServerName))
			}
			return c.Certificate, nil
		},
	}
}
