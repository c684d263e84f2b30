package proxy

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestServicePorts(t *testing.T) {
	ptr := func(b bool) *bool { return &b }
	str := func(s string) *string { return &s }
	secs := int32(60)
	local := v1.ServiceInternalTrafficPolicyLocal
	close := v1.ServiceTrafficDistributionPreferClose
	svc := &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"},
		Spec: v1.ServiceSpec{
			Type: v1.ServiceTypeLoadBalancer, ClusterIP: "10.43.0.10",
			Ports:                 []v1.ServicePort{{Name: "http", Port: 80, NodePort: 30080, Protocol: v1.ProtocolTCP}},
			ExternalTrafficPolicy: v1.ServiceExternalTrafficPolicyLocal, HealthCheckNodePort: 31000,
			InternalTrafficPolicy: &local, TrafficDistribution: &close,
			SessionAffinity:       v1.ServiceAffinityClientIP,
			SessionAffinityConfig: &v1.SessionAffinityConfig{ClientIP: &v1.ClientIPConfig{TimeoutSeconds: &secs}},
			ExternalIPs:           []string{"192.0.2.1", "2001:db8::1"},
		},
		Status: v1.ServiceStatus{LoadBalancer: v1.LoadBalancerStatus{Ingress: []v1.LoadBalancerIngress{{IP: "192.0.2.10"}, {Hostname: "lb.example"}}}},
	}
	port, other := int32(8080), int32(9090)
	sl := &discoveryv1.EndpointSlice{
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: str("http"), Port: &port}},
		Endpoints: []discoveryv1.Endpoint{
			{Addresses: []string{"10.42.0.1"}, NodeName: str("n1")},
			{Addresses: []string{"10.42.1.1"}, NodeName: str("n2"), Conditions: discoveryv1.EndpointConditions{Ready: ptr(false), Serving: ptr(true), Terminating: ptr(true)}},
			{Addresses: []string{"10.42.1.2"}, NodeName: str("n2"), Hints: &discoveryv1.EndpointHints{ForNodes: []discoveryv1.ForNode{{Name: "n1"}}}},
		},
	}
	wrongPort := &discoveryv1.EndpointSlice{AddressType: discoveryv1.AddressTypeIPv4, Ports: []discoveryv1.EndpointPort{{Name: str("metrics"), Port: &other}},
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.42.9.9"}}}}
	got := ServicePorts(svc, []*discoveryv1.EndpointSlice{sl, sl, wrongPort}, "n1")
	if len(got) != 1 {
		t.Fatalf("%d service ports, want 1", len(got))
	}
	s := got[0]
	if s.Protocol != "tcp" || s.NodePort != 30080 || !s.ExternalLocal || !s.InternalLocal || !s.PreferClose ||
		s.HealthCheckNodePort != 31000 || s.AffinityTimeout != time.Minute ||
		len(s.ExternalIPs) != 1 || len(s.LoadBalancerIPs) != 1 || s.LoadBalancerIPs[0] != "192.0.2.10" {
		t.Errorf("service port: %+v", s)
	}
	want := []Endpoint{
		{IP: "10.42.0.1", Port: 8080, Local: true, Near: true, Ready: true, Serving: true},
		{IP: "10.42.1.1", Port: 8080, Serving: true, Terminating: true},
		{IP: "10.42.1.2", Port: 8080, Near: true, Ready: true, Serving: true},
	}
	if len(s.Endpoints) != len(want) {
		t.Fatalf("endpoints %+v, want %+v", s.Endpoints, want)
	}
	for i := range want {
		if s.Endpoints[i] != want[i] {
			t.Errorf("endpoint %d: %+v, want %+v", i, s.Endpoints[i], want[i])
		}
	}

	for _, skip := range []*v1.Service{
		{Spec: v1.ServiceSpec{ClusterIP: v1.ClusterIPNone, Ports: svc.Spec.Ports}},
		{Spec: v1.ServiceSpec{Type: v1.ServiceTypeExternalName, ExternalName: "x.example", Ports: svc.Spec.Ports}},
	} {
		if sp := ServicePorts(skip, nil, "n1"); len(sp) != 0 {
			t.Errorf("%+v programmed", skip.Spec)
		}
	}
	// The external policy does not apply to a ClusterIP-only service.
	svc.Spec.Type, svc.Spec.ExternalIPs = v1.ServiceTypeClusterIP, nil
	if sp := ServicePorts(svc, nil, "n1"); sp[0].ExternalLocal || sp[0].NodePort != 0 || len(sp[0].LoadBalancerIPs) != 0 {
		t.Errorf("ClusterIP service with external traits: %+v", sp[0])
	}
}
