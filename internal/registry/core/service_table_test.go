package core

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
)

func TestServiceColumns(t *testing.T) {
	checkTableColumns(t, serviceTable, []tableCol{
		{"Type", "string", 0}, {"Cluster-IP", "string", 0}, {"External-IP", "string", 0},
		{"Port(s)", "string", 0}, {"Age", "string", 0}, {"Selector", "string", 1},
	})
}

func TestServiceRow(t *testing.T) {
	lb := func(ingress ...corev1.LoadBalancerIngress) corev1.ServiceStatus {
		return corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: ingress}}
	}
	for _, tc := range []struct {
		name string
		svc  corev1.Service
		want map[string]any
	}{
		{
			name: "cluster IP",
			svc: corev1.Service{Spec: corev1.ServiceSpec{
				Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.96.0.10", ClusterIPs: []string{"10.96.0.10"},
				Ports:    []corev1.ServicePort{{Port: 53, Protocol: corev1.ProtocolUDP}, {Port: 53, Protocol: corev1.ProtocolTCP}},
				Selector: map[string]string{"k8s-app": "kube-dns"},
			}},
			want: map[string]any{"Type": "ClusterIP", "Cluster-IP": "10.96.0.10", "External-IP": "<none>", "Port(s)": "53/UDP,53/TCP", "Selector": "k8s-app=kube-dns"},
		},
		{
			name: "node port with external IPs",
			svc: corev1.Service{Spec: corev1.ServiceSpec{
				Type: corev1.ServiceTypeNodePort, ClusterIP: "10.96.1.1", ExternalIPs: []string{"1.1.1.1", "2.2.2.2"},
				Ports: []corev1.ServicePort{{Port: 80, NodePort: 30080, Protocol: corev1.ProtocolTCP}, {Port: 443, Protocol: corev1.ProtocolTCP}},
			}},
			want: map[string]any{"External-IP": "1.1.1.1,2.2.2.2", "Port(s)": "80:30080/TCP,443/TCP", "Selector": "<none>"},
		},
		{
			name: "pending load balancer",
			svc: corev1.Service{Spec: corev1.ServiceSpec{
				Type: corev1.ServiceTypeLoadBalancer, ClusterIP: "10.96.1.2",
				Ports: []corev1.ServicePort{{Port: 80, NodePort: 31000, Protocol: corev1.ProtocolTCP}},
			}},
			want: map[string]any{"External-IP": "<pending>", "Port(s)": "80:31000/TCP"},
		},
		{
			name: "provisioned load balancer is never clipped",
			svc: corev1.Service{
				Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer},
				Status: lb(
					corev1.LoadBalancerIngress{Hostname: "a-very-long-name.elb.example.com"},
					corev1.LoadBalancerIngress{IP: "203.0.113.9", Hostname: "ignored"},
					corev1.LoadBalancerIngress{IP: "203.0.113.9"},
				),
			},
			want: map[string]any{"External-IP": "203.0.113.9,a-very-long-name.elb.example.com", "Cluster-IP": "<none>", "Port(s)": "<none>"},
		},
		{
			name: "load balancer plus external IPs",
			svc: corev1.Service{
				Spec:   corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, ExternalIPs: []string{"9.9.9.9"}},
				Status: lb(corev1.LoadBalancerIngress{IP: "5.5.5.5"}),
			},
			want: map[string]any{"External-IP": "5.5.5.5,9.9.9.9"},
		},
		{
			name: "external name",
			svc:  corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "db.example.com"}},
			want: map[string]any{"Type": "ExternalName", "Cluster-IP": "<none>", "External-IP": "db.example.com"},
		},
		{
			name: "headless, dual stack list only",
			svc:  corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIPs: []string{"fd00::1", "10.0.0.1"}}},
			want: map[string]any{"Cluster-IP": "fd00::1"},
		},
		{
			name: "no type",
			svc:  corev1.Service{Spec: corev1.ServiceSpec{ClusterIP: "None"}},
			want: map[string]any{"Type": "", "Cluster-IP": "None", "External-IP": "<unknown>"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) { checkTableCells(t, serviceTable, &tc.svc, tc.want) })
	}
}

func TestServiceFields(t *testing.T) {
	got := serviceFields(&corev1.Service{Spec: corev1.ServiceSpec{ClusterIP: "10.0.0.1", Type: corev1.ServiceTypeNodePort}})
	want := fields.Set{"spec.clusterIP": "10.0.0.1", "spec.type": "NodePort"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v", got)
	}
}
