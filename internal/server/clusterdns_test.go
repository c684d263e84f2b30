package server

import (
	"context"
	"io"
	"log/slog"
	"net"
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
