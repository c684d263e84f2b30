package servicelb

import (
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orca-project/orca/internal/nodekind"
)

func tcp(ports ...int32) []Port {
	out := make([]Port, len(ports))
	for i, p := range ports {
		out[i] = Port{Port: p, Protocol: "TCP"}
	}
	return out
}

func mustPool(t *testing.T, spec string) *Pool {
	t.Helper()
	p, err := ParsePool(spec)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestAssign(t *testing.T) {
	nodes := []string{"192.168.1.10", "192.168.1.11"}
	for _, tc := range []struct {
		name  string
		reqs  []Request
		nodes []string
		pool  string
		want  map[string]Assignment
	}{
		{
			name:  "node mode: every service gets every node",
			reqs:  []Request{{Key: "a/web", Order: 1, Ports: tcp(80)}, {Key: "a/api", Order: 2, Ports: tcp(8080)}},
			nodes: nodes,
			want: map[string]Assignment{
				"a/web": {IPs: nodes},
				"a/api": {IPs: nodes},
			},
		},
		{
			name:  "node mode: the later of two services on one port gets an error",
			reqs:  []Request{{Key: "b/late", Order: 2, Ports: tcp(443, 80)}, {Key: "a/early", Order: 1, Ports: tcp(80)}},
			nodes: nodes,
			want: map[string]Assignment{
				"a/early": {IPs: nodes},
				"b/late":  {Error: "port 80/TCP on 192.168.1.10 is used by service a/early"},
			},
		},
		{
			name:  "node mode: the same port over another protocol is no conflict",
			reqs:  []Request{{Key: "a/dns-udp", Order: 1, Ports: []Port{{53, "UDP"}}}, {Key: "a/dns-tcp", Order: 2, Ports: tcp(53)}},
			nodes: nodes[:1],
			want: map[string]Assignment{
				"a/dns-udp": {IPs: nodes[:1]},
				"a/dns-tcp": {IPs: nodes[:1]},
			},
		},
		{
			name: "node mode: no ready nodes",
			reqs: []Request{{Key: "a/web", Ports: tcp(80)}},
			want: map[string]Assignment{"a/web": {Error: "no Ready nodes with an InternalIP to serve the load balancer"}},
		},
		{
			name: "pool: one address each, the lowest free, same ports allowed",
			reqs: []Request{{Key: "a/one", Order: 1, Ports: tcp(80)}, {Key: "a/two", Order: 2, Ports: tcp(80)}},
			pool: "10.50.0.0/30",
			want: map[string]Assignment{
				"a/one": {IPs: []string{"10.50.0.1"}},
				"a/two": {IPs: []string{"10.50.0.2"}},
			},
		},
		{
			name: "pool: a service keeps its address, newcomers get what is left",
			reqs: []Request{{Key: "a/new", Order: 1}, {Key: "a/old", Order: 2, Current: []string{"10.50.0.5"}}},
			pool: "10.50.0.5-10.50.0.6",
			want: map[string]Assignment{
				"a/old": {IPs: []string{"10.50.0.5"}},
				"a/new": {IPs: []string{"10.50.0.6"}},
			},
		},
		{
			name: "pool: an address outside a changed pool is replaced",
			reqs: []Request{{Key: "a/web", Current: []string{"10.9.9.9"}}},
			pool: "10.50.0.7-10.50.0.7",
			want: map[string]Assignment{"a/web": {IPs: []string{"10.50.0.7"}}},
		},
		{
			name: "pool: exhausted",
			reqs: []Request{{Key: "a/one", Order: 1}, {Key: "a/two", Order: 2}},
			pool: "10.50.0.7-10.50.0.7",
			want: map[string]Assignment{
				"a/one": {IPs: []string{"10.50.0.7"}},
				"a/two": {Error: "no addresses left in the load balancer pool 10.50.0.7-10.50.0.7"},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var pool *Pool
			if tc.pool != "" {
				pool = mustPool(t, tc.pool)
			}
			if got := Assign(tc.reqs, tc.nodes, pool); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %v\nwant %v", got, tc.want)
			}
		})
	}
}

func TestParsePool(t *testing.T) {
	for _, tc := range []struct {
		spec, first, last string
		bad               bool
	}{
		{spec: "10.50.0.0/24", first: "10.50.0.1", last: "10.50.0.254"},
		{spec: "10.50.0.8/31", first: "10.50.0.8", last: "10.50.0.9"},
		{spec: "10.50.0.9/32", first: "10.50.0.9", last: "10.50.0.9"},
		{spec: "10.50.0.10-10.50.0.20", first: "10.50.0.10", last: "10.50.0.20"},
		{spec: "10.50.0.20-10.50.0.10", bad: true},
		{spec: "banana", bad: true},
	} {
		p, err := ParsePool(tc.spec)
		if tc.bad {
			if err == nil {
				t.Errorf("%s: no error", tc.spec)
			}
			continue
		}
		if err != nil || p.first.String() != tc.first || p.last.String() != tc.last {
			t.Errorf("%s: %v %v, want %s-%s", tc.spec, p, err, tc.first, tc.last)
			continue
		}
	}
}

func TestNodeIPs(t *testing.T) {
	node := func(name, ip string, ready v1.ConditionStatus, labels map[string]string) *v1.Node {
		return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Status: v1.NodeStatus{
			Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: ready}},
			Addresses:  []v1.NodeAddress{{Type: v1.NodeHostName, Address: name}, {Type: v1.NodeInternalIP, Address: ip}}}}
	}
	got := NodeIPs([]*v1.Node{
		node("b", "192.168.1.11", v1.ConditionTrue, nil),
		node("a", "192.168.1.10", v1.ConditionTrue, nil),
		node("down", "192.168.1.12", v1.ConditionUnknown, nil),
		node("excluded", "192.168.1.13", v1.ConditionTrue, map[string]string{excludeLabel: ""}),
		node("sim-0", "100.64.0.1", v1.ConditionTrue, map[string]string{nodekind.SimulatedLabel: "true"}),
	})
	if want := []string{"192.168.1.10", "192.168.1.11"}; !reflect.DeepEqual(got, want) {
		t.Errorf("NodeIPs = %v, want %v", got, want)
	}
}

func TestWants(t *testing.T) {
	other := "example.com/lb"
	for _, tc := range []struct {
		svc  v1.ServiceSpec
		want bool
	}{
		{v1.ServiceSpec{Type: v1.ServiceTypeLoadBalancer}, true},
		{v1.ServiceSpec{Type: v1.ServiceTypeLoadBalancer, LoadBalancerClass: &other}, false},
		{v1.ServiceSpec{Type: v1.ServiceTypeNodePort}, false},
	} {
		if got := Wants(&v1.Service{Spec: tc.svc}); got != tc.want {
			t.Errorf("Wants(%+v) = %v", tc.svc, got)
		}
	}
}
