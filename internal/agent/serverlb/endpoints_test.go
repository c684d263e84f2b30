package serverlb

import (
	"context"
	"slices"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

// ep is a ready endpoint at addr unless ready says otherwise.
func ep(addr string, ready ...bool) discoveryv1.Endpoint {
	e := discoveryv1.Endpoint{Addresses: []string{addr}}
	if len(ready) > 0 {
		e.Conditions.Ready = ptr.To(ready[0])
	}
	return e
}

func port(name string, p int32) discoveryv1.EndpointPort {
	return discoveryv1.EndpointPort{Name: ptr.To(name), Port: ptr.To(p)}
}

func slice(name string, ports []discoveryv1.EndpointPort, eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault,
			Labels: map[string]string{discoveryv1.LabelServiceName: kubernetesService}},
		AddressType: discoveryv1.AddressTypeIPv4, Ports: ports, Endpoints: eps,
	}
}

func TestEndpointServers(t *testing.T) {
	https := []discoveryv1.EndpointPort{port("https", 6443)}
	fqdn := slice("fqdn", https, ep("api.example.com"))
	fqdn.AddressType = discoveryv1.AddressTypeFQDN
	tests := []struct {
		name   string
		slices []*discoveryv1.EndpointSlice
		want   []string
	}{
		{"none", nil, nil},
		{"ready, and unknown readiness read as ready",
			[]*discoveryv1.EndpointSlice{slice("k", https, ep("192.0.2.2", true), ep("192.0.2.1"))}, []string{"192.0.2.1:6443", "192.0.2.2:6443"}},
		{"not ready left out",
			[]*discoveryv1.EndpointSlice{slice("k", https, ep("192.0.2.1"), ep("192.0.2.2", false))}, []string{"192.0.2.1:6443"}},
		{"the port named https among several",
			[]*discoveryv1.EndpointSlice{slice("k", []discoveryv1.EndpointPort{port("metrics", 9000), port("https", 6444)}, ep("192.0.2.1"))}, []string{"192.0.2.1:6444"}},
		{"the only port, whatever its name",
			[]*discoveryv1.EndpointSlice{slice("k", []discoveryv1.EndpointPort{port("", 8443)}, ep("192.0.2.1"))}, []string{"192.0.2.1:8443"}},
		{"several ports, none https: nothing",
			[]*discoveryv1.EndpointSlice{slice("k", []discoveryv1.EndpointPort{port("a", 1), port("b", 2)}, ep("192.0.2.1"))}, nil},
		{"loopback left out",
			[]*discoveryv1.EndpointSlice{slice("k", https, ep("127.0.0.1"), ep("192.0.2.1"))}, []string{"192.0.2.1:6443"}},
		{"FQDN slices left out", []*discoveryv1.EndpointSlice{fqdn}, nil},
		{"IPv6, across slices, deduplicated",
			[]*discoveryv1.EndpointSlice{slice("a", https, ep("fd00::1"), ep("192.0.2.1")), slice("b", https, ep("192.0.2.1"))},
			[]string{"192.0.2.1:6443", "[fd00::1]:6443"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := endpointServers(tt.slices); !slices.Equal(got, tt.want) {
				t.Errorf("endpointServers = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestEmptyEndpointsKeepServers(t *testing.T) {
	lb, _, _ := startLB(t, "192.0.2.1:6443")
	https := []discoveryv1.EndpointPort{port("https", 6443)}
	if !updateFrom(lb, []*discoveryv1.EndpointSlice{slice("k", https, ep("192.0.2.1"), ep("192.0.2.2"))}) {
		t.Fatal("a list of servers was not applied")
	}
	if updateFrom(lb, []*discoveryv1.EndpointSlice{slice("k", https, ep("192.0.2.1", false))}) {
		t.Fatal("an empty list was applied")
	}
	if got, want := lb.Servers(), []string{"192.0.2.1:6443", "192.0.2.2:6443"}; !slices.Equal(got, want) {
		t.Errorf("Servers() = %v, want %v kept", got, want)
	}
}

func TestWatchEndpoints(t *testing.T) {
	lb, _, _ := startLB(t, "192.0.2.1:6443")
	https := []discoveryv1.EndpointPort{port("https", 6443)}
	client := fake.NewClientset(slice("kubernetes", https, ep("192.0.2.1"), ep("192.0.2.2")))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		WatchEndpoints(ctx, client, lb)
		close(done)
	}()
	t.Cleanup(func() { cancel(); <-done })
	servers := func(want ...string) func() bool {
		return func() bool { return slices.Equal(lb.Servers(), want) }
	}
	eventually(t, "the listed servers", servers("192.0.2.1:6443", "192.0.2.2:6443"))

	// A server stops: the API servers drop it from the endpoints.
	api := client.DiscoveryV1().EndpointSlices(metav1.NamespaceDefault)
	if _, err := api.Update(ctx, slice("kubernetes", https, ep("192.0.2.2"), ep("192.0.2.3")), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the changed servers", servers("192.0.2.2:6443", "192.0.2.3:6443"))

	// Gone altogether (a transient state): the known list stays, and the
	// next list replaces it.
	if err := api.Delete(ctx, "kubernetes", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := api.Create(ctx, slice("kubernetes", https, ep("192.0.2.4")), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the recreated servers", servers("192.0.2.4:6443"))
}
