package dns

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	mdns "github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

const soa = "cluster.local.\t30\tIN\tSOA\tns.dns.cluster.local. hostmaster.cluster.local. 7 7200 1800 86400 30"

func ptr[T any](v T) *T { return &v }

func svc(ns, name, ip string, ports ...corev1.ServicePort) *corev1.Service {
	s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: ip, Ports: ports}}
	if ip != corev1.ClusterIPNone {
		s.Spec.ClusterIPs = []string{ip}
	}
	return s
}

func slice(ns, svcName, name string, ports []discoveryv1.EndpointPort, eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
		Labels: map[string]string{discoveryv1.LabelServiceName: svcName}},
		AddressType: discoveryv1.AddressTypeIPv4, Ports: ports, Endpoints: eps}
}

func ep(ip, hostname string, isReady bool) discoveryv1.Endpoint {
	e := discoveryv1.Endpoint{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: ptr(isReady)}}
	if hostname != "" {
		e.Hostname = ptr(hostname)
	}
	return e
}

// fixture is a small cluster: a ClusterIP service with two named ports, a
// headless service of a StatefulSet (hostnames) with one not-ready pod, a
// headless service without hostnames, an empty headless service and an
// ExternalName service.
func fixture(t testing.TB) *Resolver {
	t.Helper()
	svcs := cache.NewIndexer(cache.MetaNamespaceKeyFunc, ServiceIndexers())
	slices := cache.NewIndexer(cache.MetaNamespaceKeyFunc, SliceIndexers())
	for _, s := range []*corev1.Service{
		svc("default", "kubernetes", "10.43.0.1", corev1.ServicePort{Name: "https", Protocol: corev1.ProtocolTCP, Port: 443}),
		svc("shop", "web", "10.43.7.8",
			corev1.ServicePort{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80},
			corev1.ServicePort{Name: "dns", Protocol: corev1.ProtocolUDP, Port: 53}),
		svc("shop", "db", corev1.ClusterIPNone, corev1.ServicePort{Name: "pg", Protocol: corev1.ProtocolTCP, Port: 5432}),
		svc("shop", "cache", corev1.ClusterIPNone),
		svc("shop", "empty", corev1.ClusterIPNone),
		{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "ext"}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "db.example.com"}},
	} {
		if err := svcs.Add(s); err != nil {
			t.Fatal(err)
		}
	}
	pg := []discoveryv1.EndpointPort{{Name: ptr("pg"), Protocol: ptr(corev1.ProtocolTCP), Port: ptr(int32(5432))}}
	for _, s := range []*discoveryv1.EndpointSlice{
		slice("shop", "web", "web-1", nil, ep("10.42.0.5", "", true)),
		slice("shop", "db", "db-1", pg, ep("10.42.0.11", "db-0", true), ep("10.42.0.12", "db-1", true), ep("10.42.0.13", "db-2", false)),
		slice("shop", "cache", "cache-1", nil, ep("10.42.0.21", "", true)),
	} {
		if err := slices.Add(s); err != nil {
			t.Fatal(err)
		}
	}
	return NewResolver("cluster.local", NewCache(svcs, slices), 7)
}

func TestResolve(t *testing.T) {
	r := fixture(t)
	for _, tc := range []struct {
		name  string
		qtype uint16
		rcode int
		// answer, authority and additional sections, one record a line
		answer, ns, extra []string
		forward           bool
	}{
		{name: "kubernetes.default.svc.cluster.local.", qtype: mdns.TypeA,
			answer: []string{"kubernetes.default.svc.cluster.local.\t30\tIN\tA\t10.43.0.1"}},
		{name: "Web.Shop.svc.cluster.local.", qtype: mdns.TypeA,
			answer: []string{"Web.Shop.svc.cluster.local.\t30\tIN\tA\t10.43.7.8"}},
		{name: "web.shop.svc.cluster.local.", qtype: mdns.TypeAAAA, ns: []string{soa}},
		{name: "web.shop.svc.cluster.local.", qtype: mdns.TypeTXT, ns: []string{soa}},
		{name: "nope.shop.svc.cluster.local.", qtype: mdns.TypeA, rcode: mdns.RcodeNameError, ns: []string{soa}},
		{name: "web.nons.svc.cluster.local.", qtype: mdns.TypeA, rcode: mdns.RcodeNameError, ns: []string{soa}},
		{name: "shop.svc.cluster.local.", qtype: mdns.TypeA, ns: []string{soa}},
		{name: "nons.svc.cluster.local.", qtype: mdns.TypeA, rcode: mdns.RcodeNameError, ns: []string{soa}},
		{name: "svc.cluster.local.", qtype: mdns.TypeA, ns: []string{soa}},
		{name: "cluster.local.", qtype: mdns.TypeSOA, answer: []string{soa}},
		{name: "foo.cluster.local.", qtype: mdns.TypeA, rcode: mdns.RcodeNameError, ns: []string{soa}},
		{name: "_http._tcp.web.shop.svc.cluster.local.", qtype: mdns.TypeSRV,
			answer: []string{"_http._tcp.web.shop.svc.cluster.local.\t30\tIN\tSRV\t0 100 80 web.shop.svc.cluster.local."},
			extra:  []string{"web.shop.svc.cluster.local.\t30\tIN\tA\t10.43.7.8"}},
		{name: "_dns._udp.web.shop.svc.cluster.local.", qtype: mdns.TypeSRV,
			answer: []string{"_dns._udp.web.shop.svc.cluster.local.\t30\tIN\tSRV\t0 100 53 web.shop.svc.cluster.local."},
			extra:  []string{"web.shop.svc.cluster.local.\t30\tIN\tA\t10.43.7.8"}},
		{name: "_dns._tcp.web.shop.svc.cluster.local.", qtype: mdns.TypeSRV, rcode: mdns.RcodeNameError, ns: []string{soa}},
		{name: "web.shop.svc.cluster.local.", qtype: mdns.TypeSRV,
			answer: []string{
				"web.shop.svc.cluster.local.\t30\tIN\tSRV\t0 50 80 web.shop.svc.cluster.local.",
				"web.shop.svc.cluster.local.\t30\tIN\tSRV\t0 50 53 web.shop.svc.cluster.local.",
			},
			extra: []string{"web.shop.svc.cluster.local.\t30\tIN\tA\t10.43.7.8"}},
		// Headless: the ready endpoints, not the not-ready db-2.
		{name: "db.shop.svc.cluster.local.", qtype: mdns.TypeA, answer: []string{
			"db.shop.svc.cluster.local.\t30\tIN\tA\t10.42.0.11",
			"db.shop.svc.cluster.local.\t30\tIN\tA\t10.42.0.12",
		}},
		{name: "db-1.db.shop.svc.cluster.local.", qtype: mdns.TypeA,
			answer: []string{"db-1.db.shop.svc.cluster.local.\t30\tIN\tA\t10.42.0.12"}},
		{name: "db-2.db.shop.svc.cluster.local.", qtype: mdns.TypeA, rcode: mdns.RcodeNameError, ns: []string{soa}},
		{name: "_pg._tcp.db.shop.svc.cluster.local.", qtype: mdns.TypeSRV,
			answer: []string{
				"_pg._tcp.db.shop.svc.cluster.local.\t30\tIN\tSRV\t0 50 5432 db-0.db.shop.svc.cluster.local.",
				"_pg._tcp.db.shop.svc.cluster.local.\t30\tIN\tSRV\t0 50 5432 db-1.db.shop.svc.cluster.local.",
			},
			extra: []string{
				"db-0.db.shop.svc.cluster.local.\t30\tIN\tA\t10.42.0.11",
				"db-1.db.shop.svc.cluster.local.\t30\tIN\tA\t10.42.0.12",
			}},
		// Endpoints without a hostname are named by their address.
		{name: "10-42-0-21.cache.shop.svc.cluster.local.", qtype: mdns.TypeA,
			answer: []string{"10-42-0-21.cache.shop.svc.cluster.local.\t30\tIN\tA\t10.42.0.21"}},
		{name: "empty.shop.svc.cluster.local.", qtype: mdns.TypeA, rcode: mdns.RcodeNameError, ns: []string{soa}},
		{name: "ext.shop.svc.cluster.local.", qtype: mdns.TypeA,
			answer: []string{"ext.shop.svc.cluster.local.\t30\tIN\tCNAME\tdb.example.com."}},
		{name: "10-42-3-4.shop.pod.cluster.local.", qtype: mdns.TypeA,
			answer: []string{"10-42-3-4.shop.pod.cluster.local.\t30\tIN\tA\t10.42.3.4"}},
		{name: "10-42-3-4.shop.pod.cluster.local.", qtype: mdns.TypeAAAA, ns: []string{soa}},
		{name: "not-an-ip.shop.pod.cluster.local.", qtype: mdns.TypeA, rcode: mdns.RcodeNameError, ns: []string{soa}},
		{name: "8.7.43.10.in-addr.arpa.", qtype: mdns.TypePTR,
			answer: []string{"8.7.43.10.in-addr.arpa.\t30\tIN\tPTR\tweb.shop.svc.cluster.local."}},
		{name: "11.0.42.10.in-addr.arpa.", qtype: mdns.TypePTR,
			answer: []string{"11.0.42.10.in-addr.arpa.\t30\tIN\tPTR\tdb-0.db.shop.svc.cluster.local."}},
		{name: "1.1.168.192.in-addr.arpa.", qtype: mdns.TypePTR, forward: true},
		{name: "example.com.", qtype: mdns.TypeA, forward: true},
	} {
		t.Run(fmt.Sprintf("%s %s", tc.name, mdns.TypeToString[tc.qtype]), func(t *testing.T) {
			got := r.Resolve(mdns.Question{Name: tc.name, Qtype: tc.qtype, Qclass: mdns.ClassINET})
			if got.Forward != tc.forward {
				t.Fatalf("forward = %v, want %v", got.Forward, tc.forward)
			}
			if got.Rcode != tc.rcode {
				t.Errorf("rcode = %s, want %s", mdns.RcodeToString[got.Rcode], mdns.RcodeToString[tc.rcode])
			}
			for _, sec := range []struct {
				what string
				got  []mdns.RR
				want []string
			}{{"answer", got.Answer, tc.answer}, {"authority", got.Ns, tc.ns}, {"additional", got.Extra, tc.extra}} {
				if g, w := lines(sec.got), strings.Join(sec.want, "\n"); g != w {
					t.Errorf("%s section:\n%s\nwant:\n%s", sec.what, g, w)
				}
			}
		})
	}
}

func lines(rrs []mdns.RR) string {
	s := make([]string, len(rrs))
	for i, rr := range rrs {
		s[i] = rr.String()
	}
	return strings.Join(s, "\n")
}

// serve runs h on a UDP and a TCP socket of 127.0.0.1 and returns the
// address.
func serve(t testing.TB, h mdns.Handler) string {
	t.Helper()
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := tcp.Addr().String()
	udp, err := net.ListenPacket("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []*mdns.Server{{Listener: tcp, Handler: h}, {PacketConn: udp, Handler: h}} {
		go func() { _ = s.ActivateAndServe() }()
		t.Cleanup(func() { _ = s.Shutdown() })
	}
	time.Sleep(20 * time.Millisecond)
	return addr
}

func query(t *testing.T, addr, proto, name string, qtype uint16) *mdns.Msg {
	t.Helper()
	c := &mdns.Client{Net: proto, Timeout: 3 * time.Second}
	m := new(mdns.Msg).SetQuestion(name, qtype)
	resp, _, err := c.Exchange(m, addr)
	if err != nil {
		t.Fatalf("%s %s over %s: %v", name, mdns.TypeToString[qtype], proto, err)
	}
	return resp
}

func TestServeOutsideTheClusterDomain(t *testing.T) {
	upstream := serve(t, mdns.HandlerFunc(func(w mdns.ResponseWriter, r *mdns.Msg) {
		m := new(mdns.Msg).SetReply(r)
		rr, _ := mdns.NewRR(r.Question[0].Name + " 60 IN A 192.0.2.7")
		m.Answer = []mdns.RR{rr}
		_ = w.WriteMsg(m)
	}))
	without, err := NewHandler(fixture(t), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	with, err := NewHandler(fixture(t), []string{upstream}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		h      *Handler
		rcode  int
		answer string
	}{
		{"without upstreams", without, mdns.RcodeServerFailure, ""},
		// The answer's TTL of 60 capped to the cache's 30 s, as CoreDNS's
		// `cache 30` relays it.
		{"with an upstream", with, mdns.RcodeSuccess, "example.org.\t30\tIN\tA\t192.0.2.7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := serve(t, tc.h)
			for _, proto := range []string{"udp", "tcp"} {
				resp := query(t, addr, proto, "example.org.", mdns.TypeA)
				if resp.Rcode != tc.rcode || lines(resp.Answer) != tc.answer {
					t.Errorf("over %s: %s %q, want %s %q", proto, mdns.RcodeToString[resp.Rcode], lines(resp.Answer), mdns.RcodeToString[tc.rcode], tc.answer)
				}
			}
			// Cluster names never go upstream.
			if resp := query(t, addr, "udp", "web.shop.svc.cluster.local.", mdns.TypeA); lines(resp.Answer) != "web.shop.svc.cluster.local.\t30\tIN\tA\t10.43.7.8" || !resp.Authoritative {
				t.Errorf("cluster name: %v", resp)
			}
		})
	}
}

func TestServeTruncatesLargeAnswersOverUDP(t *testing.T) {
	svcs := cache.NewIndexer(cache.MetaNamespaceKeyFunc, ServiceIndexers())
	slices := cache.NewIndexer(cache.MetaNamespaceKeyFunc, SliceIndexers())
	_ = svcs.Add(svc("big", "many", corev1.ClusterIPNone))
	var eps []discoveryv1.Endpoint
	for i := 0; i < 100; i++ {
		eps = append(eps, ep(fmt.Sprintf("10.42.1.%d", i+1), "", true))
	}
	_ = slices.Add(slice("big", "many", "many-1", nil, eps...))
	h, err := NewHandler(NewResolver("cluster.local", NewCache(svcs, slices), 1), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	addr := serve(t, h)
	udp := query(t, addr, "udp", "many.big.svc.cluster.local.", mdns.TypeA)
	if !udp.Truncated || len(udp.Answer) >= 100 {
		t.Errorf("over UDP: truncated=%v with %d answers, want TC and fewer than 100", udp.Truncated, len(udp.Answer))
	}
	tcp := query(t, addr, "tcp", "many.big.svc.cluster.local.", mdns.TypeA)
	if tcp.Truncated || len(tcp.Answer) != 100 {
		t.Errorf("over TCP: truncated=%v with %d answers, want all 100", tcp.Truncated, len(tcp.Answer))
	}
}
