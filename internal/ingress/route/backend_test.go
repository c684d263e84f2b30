package route

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// backendWorld is a namespace with:
//   - web: port http 80 to the named target port "web-http", and port
//     metrics 9090 to 9100; the slices carry the resolved numbers.
//   - single: one unnamed port 80 to 8080.
//   - idle: a port and no endpoints at all.
//   - db: ExternalName db.example.org, port pg 5432.
func backendWorld() Input {
	ipv6 := slice([]string{"http=8080"}, endpoint("fd00::1"))
	ipv6.AddressType = discoveryv1.AddressTypeIPv6
	db := service("ns/db", corev1.ServicePort{Name: "pg", Port: 5432})
	db.Spec.Type, db.Spec.ExternalName = corev1.ServiceTypeExternalName, "db.example.org"
	return Input{
		Services: map[types.NamespacedName]*corev1.Service{
			nn("ns/web"): service("ns/web",
				corev1.ServicePort{Name: "http", Port: 80, TargetPort: intstr.FromString("web-http")},
				corev1.ServicePort{Name: "metrics", Port: 9090, TargetPort: intstr.FromInt32(9100)},
			),
			nn("ns/single"): service("ns/single", corev1.ServicePort{Port: 80, TargetPort: intstr.FromInt32(8080)}),
			nn("ns/idle"):   service("ns/idle", corev1.ServicePort{Name: "http", Port: 80}),
			nn("ns/db"):     db,
		},
		Endpoints: map[types.NamespacedName][]*discoveryv1.EndpointSlice{
			nn("ns/web"): {
				slice([]string{"http=8080", "metrics=9100"},
					endpoint("10.0.0.2"), // unset conditions: ready
					endpoint("10.0.0.1", "ready"),
					endpoint("10.0.0.3", "unready"),
					endpoint("10.0.0.4", "ready", "terminating"),
					endpoint("10.0.0.5", "terminating"),
					discoveryv1.Endpoint{}, // no address
					endpoint("not-an-ip"),
				),
				slice([]string{"http=8080"}, endpoint("10.0.0.1"), endpoint("10.0.0.10")),
				ipv6,
			},
			nn("ns/single"): {slice([]string{"=8080"}, endpoint("10.0.1.1"))},
		},
	}
}

// TestResolveService: a backend by port number or name, through the
// service port's name to the EndpointSlices' port, to ready IPv4
// endpoints.
func TestResolveService(t *testing.T) {
	in := backendWorld()
	webHTTP := []string{"10.0.0.1:8080", "10.0.0.2:8080", "10.0.0.10:8080"}
	for _, tc := range []struct {
		name, target string
		want         []string
		problem      string
	}{
		{"by number", "web:80", webHTTP, ""},
		{"by name", "web:http", webHTTP, ""},
		{"second port", "web:metrics", []string{"10.0.0.1:9100", "10.0.0.2:9100"}, ""},
		{"target port is no service port", "web:8080", nil, "service ns/web has no port 8080"},
		{"unknown name", "web:grpc", nil, "service ns/web has no port grpc"},
		{"unnamed port", "single:80", []string{"10.0.1.1:8080"}, ""},
		{"no endpoints is no problem", "idle:http", nil, ""},
		{"missing service", "gone:80", nil, "service ns/gone not found"},
		{"external name by name", "db:pg", []string{"db.example.org:5432"}, ""},
		{"external name by unlisted number", "db:6432", []string{"db.example.org:6432"}, ""},
		{"external name by unlisted name", "db:admin", nil, "service ns/db has no port admin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := backend(tc.target)
			got, problem := resolveService(&in, "ns", b.Service)
			if problem != tc.problem {
				t.Errorf("problem %q, want %q", problem, tc.problem)
			}
			if diff := cmp.Diff(tc.want, got.Endpoints); diff != "" {
				t.Errorf("endpoints (-want +got):\n%s", diff)
			}
			if got.Service != nn("ns/"+b.Service.Name) || got.Port != portLabel(b.Service.Port) {
				t.Errorf("backend %v port %q", got.Service, got.Port)
			}
		})
	}
}

// TestBrokenBackend: a path whose Service is missing is reported and
// still routed, to a backend with no endpoints the proxy answers with
// 503, rather than falling through to a rule its author did not mean.
func TestBrokenBackend(t *testing.T) {
	in := backendWorld()
	in.Class = class
	in.Ingresses = []*networkingv1.Ingress{ingress("ns/ing", 0, rules(rule("a.test",
		path("Prefix / -> web:http"),
		path("Prefix /old -> gone:80"),
		path("Prefix /metrics -> web:9999"),
	)))}
	tb, ps := Build(in)
	checkProblems(t, ps,
		`ns/ing: host "a.test", path "/old": service ns/gone not found`,
		`ns/ing: host "a.test", path "/metrics": service ns/web has no port 9999`,
	)
	for _, tc := range []struct {
		path string
		want Backend
	}{
		{"/old/x", Backend{Ingress: nn("ns/ing"), Service: nn("ns/gone"), Port: "80"}},
		{"/metrics", Backend{Ingress: nn("ns/ing"), Service: nn("ns/web"), Port: "9999"}},
		{"/", Backend{Ingress: nn("ns/ing"), Service: nn("ns/web"), Port: "http",
			Endpoints: []string{"10.0.0.1:8080", "10.0.0.2:8080", "10.0.0.10:8080"}}},
	} {
		m, ok := tb.Route("a.test", tc.path)
		if !ok {
			t.Fatalf("%s: not routed", tc.path)
		}
		if diff := cmp.Diff(&tc.want, m.Pick(0.5)); diff != "" {
			t.Errorf("%s: backend (-want +got):\n%s", tc.path, diff)
		}
	}
}
