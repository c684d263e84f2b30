package core

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestEndpointsTable(t *testing.T) {
	checkTableColumns(t, endpointsTable, []tableCol{{"Endpoints", "string", 0}, {"Age", "string", 0}})
	addrs := func(ips ...string) []corev1.EndpointAddress {
		out := make([]corev1.EndpointAddress, len(ips))
		for i, ip := range ips {
			out[i].IP = ip
		}
		return out
	}
	for _, tc := range []struct {
		name string
		ep   corev1.Endpoints
		want string
	}{
		{name: "none", want: "<none>"},
		{
			name: "two ports",
			ep: corev1.Endpoints{Subsets: []corev1.EndpointSubset{{
				Addresses: addrs("10.0.0.1"), Ports: []corev1.EndpointPort{{Port: 80}, {Port: 443}},
			}}},
			want: "10.0.0.1:80,10.0.0.1:443",
		},
		{
			name: "headless without ports, ipv6",
			ep:   corev1.Endpoints{Subsets: []corev1.EndpointSubset{{Addresses: addrs("fd00::1", "10.0.0.2")}}},
			want: "fd00::1,10.0.0.2",
		},
		{
			name: "more than three",
			ep: corev1.Endpoints{Subsets: []corev1.EndpointSubset{
				{Addresses: addrs("10.0.0.1", "10.0.0.2", "10.0.0.3"), Ports: []corev1.EndpointPort{{Port: 8080}, {Port: 9090}}},
				{Addresses: addrs("10.0.1.1")},
			}},
			want: "10.0.0.1:8080,10.0.0.2:8080,10.0.0.3:8080 + 4 more...",
		},
		{
			name: "subset with ports but no addresses",
			ep:   corev1.Endpoints{Subsets: []corev1.EndpointSubset{{Ports: []corev1.EndpointPort{{Port: 80}}}}},
			want: "",
		},
	} {
		t.Run(tc.name, func(t *testing.T) { checkTableCells(t, endpointsTable, &tc.ep, map[string]any{"Endpoints": tc.want}) })
	}
}
