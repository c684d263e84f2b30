package server

import (
	"context"
	"io"
	"log/slog"
	"net"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/orca-project/orca/internal/agent"
)

func TestClusterDNSIP(t *testing.T) {
	for cidr, want := range map[string]string{"": "10.43.0.10", "10.43.0.0/16": "10.43.0.10", "10.96.0.0/12": "10.96.0.10"} {
		if got, err := ClusterDNSIP(cidr); err != nil || got != want {
			t.Errorf("ClusterDNSIP(%q) = %s, %v; want %s", cidr, got, err, want)
		}
	}
}

func TestDNSNodeIP(t *testing.T) {
	if got := dnsNodeIP(Options{Agent: &agent.Options{NodeIP: "192.168.5.5"}, AdvertiseAddress: "192.168.5.6"}); got != "192.168.5.5" {
		t.Errorf("with an agent: %s, want its node IP", got)
	}
	if got := dnsNodeIP(Options{AdvertiseAddress: "192.168.5.6"}); got != "192.168.5.6" {
		t.Errorf("advertised: %s, want the advertise address", got)
	}
	if got := net.ParseIP(dnsNodeIP(Options{AdvertiseAddress: "127.0.0.1"})); got != nil && got.IsLoopback() {
		t.Errorf("loopback advertise address: %s, want a reachable address", got)
	}
}

// TestKubeDNSReconcile: the service, Endpoints and slice are created, an
// edit of the service's ports is undone, and the endpoint turns ready with
// the DNS server.
func TestKubeDNSReconcile(t *testing.T) {
	ctx := context.Background()
	client := fake.NewSimpleClientset()
	ready := false
	k := &kubeDNS{client: client, clusterIP: "10.43.0.10", nodeIP: "192.168.5.5", port: 10053, ready: func() bool { return ready },
		log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if err := k.reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	svc, err := client.CoreV1().Services("kube-system").Get(ctx, "kube-dns", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if svc.Spec.ClusterIP != "10.43.0.10" || svc.Spec.Selector != nil || len(svc.Spec.Ports) != 2 ||
		svc.Spec.Ports[0].Port != 53 || svc.Spec.Ports[0].Protocol != corev1.ProtocolUDP || svc.Spec.Ports[0].TargetPort != intstr.FromInt32(10053) ||
		svc.Spec.Ports[1].Port != 53 || svc.Spec.Ports[1].Protocol != corev1.ProtocolTCP {
		t.Errorf("service spec: %+v", svc.Spec)
	}
	ep, err := client.CoreV1().Endpoints("kube-system").Get(ctx, "kube-dns", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ep.Subsets) != 1 || len(ep.Subsets[0].Addresses) != 0 || len(ep.Subsets[0].NotReadyAddresses) != 1 {
		t.Errorf("before the DNS caches sync the endpoint is not ready: %+v", ep.Subsets)
	}

	svc.Spec.Ports = svc.Spec.Ports[:1]
	if _, err := client.CoreV1().Services("kube-system").Update(ctx, svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	ready = true
	if err := k.reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if svc, _ = client.CoreV1().Services("kube-system").Get(ctx, "kube-dns", metav1.GetOptions{}); len(svc.Spec.Ports) != 2 {
		t.Errorf("edited ports not restored: %+v", svc.Spec.Ports)
	}
	ep, _ = client.CoreV1().Endpoints("kube-system").Get(ctx, "kube-dns", metav1.GetOptions{})
	if len(ep.Subsets) != 1 || len(ep.Subsets[0].Addresses) != 1 || ep.Subsets[0].Addresses[0].IP != "192.168.5.5" || ep.Subsets[0].Ports[0].Port != 10053 {
		t.Errorf("ready endpoint: %+v", ep.Subsets)
	}
	s, err := client.DiscoveryV1().EndpointSlices("kube-system").Get(ctx, "kube-dns", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Endpoints) != 1 || !*s.Endpoints[0].Conditions.Ready || s.Endpoints[0].Addresses[0] != "192.168.5.5" || *s.Ports[0].Port != 10053 {
		t.Errorf("slice: %+v %+v", s.Endpoints, s.Ports)
	}

	// Pods cannot reach the host's loopback: no endpoints rather than
	// wrong ones.
	k2 := *k
	k2.client, k2.nodeIP = fake.NewSimpleClientset(), "127.0.0.1"
	if err := k2.reconcile(ctx); err == nil {
		t.Error("loopback node address: no error")
	}
	if _, err := k2.client.CoreV1().Endpoints("kube-system").Get(ctx, "kube-dns", metav1.GetOptions{}); err == nil {
		t.Error("loopback node address: endpoints written")
	}
}

func TestMergeDNSEndpoints(t *testing.T) {
	a, b, c := dnsEndpoint{ip: "10.0.0.1", ready: true}, dnsEndpoint{ip: "10.0.0.2", ready: true}, dnsEndpoint{ip: "10.0.0.3"}
	for _, tc := range []struct {
		name string
		cur  []dnsEndpoint
		self dnsEndpoint
		live map[string]bool
		want []dnsEndpoint
	}{
		{"first server", nil, b, nil, []dnsEndpoint{b}},
		{"joins the others, in address order", []dnsEndpoint{c, a}, b, nil, []dnsEndpoint{a, b, c}},
		{"its own entry is replaced", []dnsEndpoint{{ip: "10.0.0.2"}, a}, b, nil, []dnsEndpoint{a, b}},
		{"a server gone from the kubernetes endpoints is dropped", []dnsEndpoint{a, c}, b, map[string]bool{"10.0.0.1": true, "10.0.0.2": true}, []dnsEndpoint{a, b}},
		{"itself is kept even when not yet among them", []dnsEndpoint{a}, b, map[string]bool{"10.0.0.1": true}, []dnsEndpoint{a, b}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := mergeDNSEndpoints(tc.cur, tc.self, tc.live); !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestKubeDNSSeveralServers: two servers share the kube-dns endpoints,
// and one that leaves the kubernetes endpoints leaves these too.
func TestKubeDNSSeveralServers(t *testing.T) {
	ctx := context.Background()
	client := fake.NewSimpleClientset(&corev1.Endpoints{
		ObjectMeta: metav1.ObjectMeta{Name: "kubernetes", Namespace: "default"},
		Subsets:    []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: "192.168.5.5"}, {IP: "192.168.5.6"}}}},
	})
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ready := func() bool { return true }
	one := &kubeDNS{client: client, clusterIP: "10.43.0.10", nodeIP: "192.168.5.5", port: 10053, ready: ready, log: log}
	two := &kubeDNS{client: client, clusterIP: "10.43.0.10", nodeIP: "192.168.5.6", port: 10053, ready: ready, log: log}
	for _, k := range []*kubeDNS{one, two, one} {
		if err := k.reconcile(ctx); err != nil {
			t.Fatal(err)
		}
	}
	addrs := func() (eps, slice []string) {
		ep, err := client.CoreV1().Endpoints("kube-system").Get(ctx, "kube-dns", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, ss := range ep.Subsets {
			for _, a := range ss.Addresses {
				eps = append(eps, a.IP)
			}
		}
		sl, err := client.DiscoveryV1().EndpointSlices("kube-system").Get(ctx, "kube-dns", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range sl.Endpoints {
			slice = append(slice, e.Addresses...)
		}
		return eps, slice
	}
	both := []string{"192.168.5.5", "192.168.5.6"}
	if eps, slice := addrs(); !slices.Equal(eps, both) || !slices.Equal(slice, both) {
		t.Errorf("two servers: endpoints %v, slice %v; want %v", eps, slice, both)
	}
	if _, err := client.CoreV1().Endpoints("default").Update(ctx, &corev1.Endpoints{
		ObjectMeta: metav1.ObjectMeta{Name: "kubernetes", Namespace: "default"},
		Subsets:    []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: "192.168.5.5"}}}},
	}, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := one.reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if eps, slice := addrs(); !slices.Equal(eps, both[:1]) || !slices.Equal(slice, both[:1]) {
		t.Errorf("one server gone: endpoints %v, slice %v; want %v", eps, slice, both[:1])
	}
}
