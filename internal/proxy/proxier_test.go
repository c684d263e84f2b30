package proxy

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/knftables"
)

// countingNFT counts the transactions run.
type countingNFT struct {
	*knftables.Fake
	runs atomic.Int32
}

func (c *countingNFT) Run(ctx context.Context, tx *knftables.Transaction) error {
	c.runs.Add(1)
	return c.Fake.Run(ctx, tx)
}

func slice(ns, svc string, ips ...string) *discoveryv1.EndpointSlice {
	port, name := int32(8080), "http"
	sl := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: ns, Name: svc + "-abc", Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: &name, Port: &port}},
	}
	for _, ip := range ips {
		sl.Endpoints = append(sl.Endpoints, discoveryv1.Endpoint{Addresses: []string{ip}})
	}
	return sl
}

func service(ns, name, ip string) *v1.Service {
	return &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       v1.ServiceSpec{ClusterIP: ip, Ports: []v1.ServicePort{{Name: "http", Port: 80, Protocol: v1.ProtocolTCP}}},
	}
}

func TestRunProgramsAndCoalesces(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := fake.NewSimpleClientset(service("ns", "web", "10.43.0.10"), slice("ns", "web", "10.42.0.5"))
	nft := &countingNFT{Fake: knftables.NewFake(Family, Table)}
	reg := prometheus.NewRegistry()
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Options{Client: client, NodeName: "n1", ClusterCIDR: "10.42.0.0/16", NFT: nft, Metrics: reg, MinSyncPeriod: 300 * time.Millisecond})
	}()
	// element returns the verdict for the cluster IP, or "".
	element := func(m string) string {
		nft.Fake.RLock()
		defer nft.Fake.RUnlock()
		if nft.Table == nil || nft.Table.Maps[m] == nil {
			return ""
		}
		if e := nft.Table.Maps[m].FindElement("10.43.0.10", "tcp", "80"); e != nil {
			return e.Value[0]
		}
		return ""
	}
	waitFor := func(what string, f func() bool) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); !f(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
		}
	}
	waitFor("the service in service-ips", func() bool { return element(serviceIPsMap) != "" })

	// A burst of changes: one transaction (or two, if the burst straddles
	// a sync), not one per change.
	runs := nft.runs.Load()
	for i := 0; i < 10; i++ {
		sl := slice("ns", "web", fmt.Sprintf("10.42.0.%d", 10+i))
		if _, err := client.DiscoveryV1().EndpointSlices("ns").Update(ctx, sl, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor("the last endpoint", func() bool {
		nft.Fake.RLock()
		defer nft.Fake.RUnlock()
		return nft.Table.Chains["endpoint-"+endpointBase(&ServicePort{Namespace: "ns", Name: "web", Protocol: "tcp", PortName: "http"}, Endpoint{IP: "10.42.0.19", Port: 8080})] != nil
	})
	time.Sleep(400 * time.Millisecond)
	if n := nft.runs.Load() - runs; n > 2 {
		t.Errorf("%d transactions for a burst of 10 changes", n)
	}

	// Endpoints gone: rejected at once.
	if err := client.DiscoveryV1().EndpointSlices("ns").Delete(ctx, "web-abc", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor("the reject verdict", func() bool { return element(noEndpointServices) == "goto reject-chain" && element(serviceIPsMap) == "" })

	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, mf := range mfs {
		seen[mf.GetName()] = true
	}
	for _, name := range []string{"kubeproxy_sync_proxy_rules_duration_seconds", "kubeproxy_sync_proxy_rules_last_timestamp_seconds", "kubeproxy_sync_proxy_rules_services", "kubeproxy_sync_proxy_rules_endpoints"} {
		if !seen[name] {
			t.Errorf("metric %s missing", name)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestHealthChecksCountReadyLocalEndpoints(t *testing.T) {
	svcs := []ServicePort{
		{Namespace: "ns", Name: "web", PortName: "http", HealthCheckNodePort: 31000, Endpoints: []Endpoint{
			{IP: "a", Local: true, Ready: true}, {IP: "b", Local: true, Serving: true, Terminating: true}, {IP: "c", Ready: true},
		}},
		// A second port of the same service shares the health check.
		{Namespace: "ns", Name: "web", PortName: "https", HealthCheckNodePort: 31000, Endpoints: []Endpoint{{IP: "a", Local: true, Ready: true}}},
		{Namespace: "ns", Name: "api", HealthCheckNodePort: 31001, Endpoints: []Endpoint{{IP: "c", Ready: true}}},
		{Namespace: "ns", Name: "plain", Endpoints: []Endpoint{{IP: "d", Local: true, Ready: true}}},
	}
	got := healthChecks(svcs)
	if len(got) != 2 || got[31000].LocalEndpoints != 1 || got[31000].Name != "web" || got[31001].LocalEndpoints != 0 {
		t.Errorf("health checks: %+v", got)
	}
}
