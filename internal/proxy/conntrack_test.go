package proxy

import (
	"net/netip"
	"slices"
	"testing"
)

func TestStaleUDP(t *testing.T) {
	dns := ServicePort{Namespace: "kube-system", Name: "dns", PortName: "dns", Protocol: "udp", ClusterIP: "10.43.0.10", Port: 53,
		NodePort: 30053, LoadBalancerIPs: []string{"192.0.2.10"},
		Endpoints: []Endpoint{{IP: "10.42.1.5", Port: 5353, Ready: true, Serving: true}}}
	tcp := web(nil) // 10.43.0.10:80/tcp, endpoints on 8080
	empty := ServicePort{Namespace: "ns", Name: "syslog", Protocol: "udp", ClusterIP: "10.43.0.20", Port: 514}
	flow := func(dst, src string) Flow {
		return Flow{OrigDst: netip.MustParseAddrPort(dst), ReplySrc: netip.MustParseAddrPort(src)}
	}
	flows := []Flow{
		flow("10.43.0.10:53", "10.42.1.5:5353"),    // the live endpoint: kept
		flow("10.43.0.10:53", "10.42.2.9:5353"),    // an endpoint that went: stale
		flow("192.0.2.10:53", "10.42.2.9:5353"),    // the same through the load balancer IP
		flow("172.30.0.2:30053", "10.42.2.9:5353"), // and the node port
		flow("10.43.0.20:514", "10.43.0.20:514"),   // a service without endpoints: no DNAT, rejected anyway
		flow("10.43.0.10:80", "10.42.9.9:8080"),    // not a UDP service port: none of ours
		flow("8.8.8.8:53", "8.8.8.8:53"),           // not a service
	}
	got := StaleUDP([]ServicePort{dns, tcp, empty}, flows)
	want := []Flow{flows[1], flows[2], flows[3], flows[4]}
	if !slices.Equal(got, want) {
		t.Errorf("stale %v\nwant %v", got, want)
	}
	// The service without endpoints gets one: its un-DNATed entries go
	// so that the next datagram reaches it.
	empty.Endpoints = []Endpoint{{IP: "10.42.3.3", Port: 514, Ready: true, Serving: true}}
	if got := StaleUDP([]ServicePort{empty}, flows[4:5]); len(got) != 1 {
		t.Errorf("a service that got an endpoint: stale %v, want its un-DNATed entry", got)
	}
}
