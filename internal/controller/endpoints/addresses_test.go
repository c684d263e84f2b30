package endpoints

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

type podOpt func(*v1.Pod)

func pod(name, ip string, ready bool, opts ...podOpt) *v1.Pod {
	status := v1.ConditionFalse
	if ready {
		status = v1.ConditionTrue
	}
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name)},
		Spec: v1.PodSpec{NodeName: "node-1", Containers: []v1.Container{{Name: "c", Ports: []v1.ContainerPort{
			{Name: "http", ContainerPort: 8080, Protocol: v1.ProtocolTCP}}}}},
		Status: v1.PodStatus{Phase: v1.PodRunning, PodIP: ip,
			Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: status}}},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

func withPort(n int32) podOpt {
	return func(p *v1.Pod) { p.Spec.Containers[0].Ports[0].ContainerPort = n }
}

func service(mod func(*v1.Service)) *v1.Service {
	s := &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"},
		Spec: v1.ServiceSpec{ClusterIP: "10.96.0.10", Selector: map[string]string{"app": "web"},
			Ports: []v1.ServicePort{{Name: "http", Port: 80, Protocol: v1.ProtocolTCP, TargetPort: intstr.FromInt32(8080)}}},
	}
	if mod != nil {
		mod(s)
	}
	return s
}

func addr(p *v1.Pod, ip string) v1.EndpointAddress {
	node := p.Spec.NodeName
	return v1.EndpointAddress{IP: ip, NodeName: &node, TargetRef: &v1.ObjectReference{Kind: "Pod", Namespace: "ns", Name: p.Name, UID: p.UID}}
}

func port(n int32) []v1.EndpointPort {
	return []v1.EndpointPort{{Name: "http", Port: n, Protocol: v1.ProtocolTCP}}
}

func TestSubsets(t *testing.T) {
	a, b, c := pod("a", "10.0.0.1", true), pod("b", "10.0.0.2", true), pod("c", "10.0.0.3", false)
	named := func(s *v1.Service) { s.Spec.Ports[0].TargetPort = intstr.FromString("http") }
	p9090 := pod("d", "10.0.0.4", true, withPort(9090))
	now := metav1.Now()
	host := pod("h", "10.0.0.5", true, func(p *v1.Pod) { p.Spec.Hostname, p.Spec.Subdomain = "h0", "web" })
	otherSub := pod("o", "10.0.0.6", true, func(p *v1.Pod) { p.Spec.Hostname, p.Spec.Subdomain = "o0", "other" })
	hostAddr := addr(host, "10.0.0.5")
	hostAddr.Hostname = "h0"
	tests := []struct {
		name         string
		svc          *v1.Service
		pods         []*v1.Pod
		want         []v1.EndpointSubset
		ready, unrdy int
	}{
		{
			name: "ready and not ready addresses share a subset",
			svc:  service(nil), pods: []*v1.Pod{c, b, a},
			want: []v1.EndpointSubset{{
				Addresses:         []v1.EndpointAddress{addr(a, "10.0.0.1"), addr(b, "10.0.0.2")},
				NotReadyAddresses: []v1.EndpointAddress{addr(c, "10.0.0.3")},
				Ports:             port(8080),
			}},
			ready: 2, unrdy: 1,
		},
		{
			name: "publishNotReadyAddresses makes every address ready",
			svc:  service(func(s *v1.Service) { s.Spec.PublishNotReadyAddresses = true }), pods: []*v1.Pod{a, c},
			want:  []v1.EndpointSubset{{Addresses: []v1.EndpointAddress{addr(a, "10.0.0.1"), addr(c, "10.0.0.3")}, Ports: port(8080)}},
			ready: 2,
		},
		{
			name: "pods without IP, finished or being deleted are left out",
			svc:  service(nil),
			pods: []*v1.Pod{a,
				pod("noip", "", true),
				pod("done", "10.0.0.9", false, func(p *v1.Pod) { p.Status.Phase = v1.PodSucceeded }),
				pod("failed", "10.0.0.8", false, func(p *v1.Pod) { p.Status.Phase = v1.PodFailed }),
				pod("gone", "10.0.0.7", true, func(p *v1.Pod) { p.DeletionTimestamp = &now }),
			},
			want:  []v1.EndpointSubset{{Addresses: []v1.EndpointAddress{addr(a, "10.0.0.1")}, Ports: port(8080)}},
			ready: 1,
		},
		{
			name: "a named target port with different numbers gives one subset per number",
			svc:  service(named), pods: []*v1.Pod{a, p9090},
			want: []v1.EndpointSubset{
				{Addresses: []v1.EndpointAddress{addr(a, "10.0.0.1")}, Ports: port(8080)},
				{Addresses: []v1.EndpointAddress{addr(p9090, "10.0.0.4")}, Ports: port(9090)},
			},
			ready: 2,
		},
		{
			name: "a pod without the named port is left out",
			svc:  service(func(s *v1.Service) { s.Spec.Ports[0].TargetPort = intstr.FromString("metrics") }), pods: []*v1.Pod{a},
			want: []v1.EndpointSubset{},
		},
		{
			name: "hostname only for pods whose subdomain is the service",
			svc:  service(func(s *v1.Service) { s.Spec.ClusterIP = v1.ClusterIPNone }), pods: []*v1.Pod{host, otherSub},
			want:  []v1.EndpointSubset{{Addresses: []v1.EndpointAddress{hostAddr, addr(otherSub, "10.0.0.6")}, Ports: port(8080)}},
			ready: 2,
		},
		{
			name: "headless service without ports still lists addresses",
			svc:  service(func(s *v1.Service) { s.Spec.ClusterIP, s.Spec.Ports = v1.ClusterIPNone, nil }), pods: []*v1.Pod{a},
			want:  []v1.EndpointSubset{{Addresses: []v1.EndpointAddress{addr(a, "10.0.0.1")}}},
			ready: 1,
		},
		{
			name: "a service with a cluster IP and no ports has no endpoints",
			svc:  service(func(s *v1.Service) { s.Spec.Ports = nil }), pods: []*v1.Pod{a},
			want: []v1.EndpointSubset{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ready, notReady := Subsets(tt.svc, tt.pods)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("subsets (-want +got):\n%s", diff)
			}
			if ready != tt.ready || notReady != tt.unrdy {
				t.Errorf("counts = %d ready, %d not ready; want %d, %d", ready, notReady, tt.ready, tt.unrdy)
			}
		})
	}
}

func TestRepackSubsets(t *testing.T) {
	a := v1.EndpointAddress{IP: "10.0.0.1"}
	b := v1.EndpointAddress{IP: "10.0.0.2"}
	p80 := v1.EndpointPort{Name: "http", Port: 80, Protocol: v1.ProtocolTCP}
	p443 := v1.EndpointPort{Name: "https", Port: 443, Protocol: v1.ProtocolTCP}
	tests := []struct {
		name string
		in   []v1.EndpointSubset
		want []v1.EndpointSubset
	}{
		{
			name: "addresses offering the same ports merge",
			in: []v1.EndpointSubset{
				{Addresses: []v1.EndpointAddress{b}, Ports: []v1.EndpointPort{p80}},
				{Addresses: []v1.EndpointAddress{a}, Ports: []v1.EndpointPort{p80}},
				{Addresses: []v1.EndpointAddress{a}, Ports: []v1.EndpointPort{p443}},
				{Addresses: []v1.EndpointAddress{b}, Ports: []v1.EndpointPort{p443}},
			},
			want: []v1.EndpointSubset{{Addresses: []v1.EndpointAddress{a, b}, Ports: []v1.EndpointPort{p80, p443}}},
		},
		{
			name: "different port sets stay apart",
			in: []v1.EndpointSubset{
				{Addresses: []v1.EndpointAddress{a}, Ports: []v1.EndpointPort{p80}},
				{Addresses: []v1.EndpointAddress{b}, Ports: []v1.EndpointPort{p443}},
			},
			want: []v1.EndpointSubset{
				{Addresses: []v1.EndpointAddress{a}, Ports: []v1.EndpointPort{p80}},
				{Addresses: []v1.EndpointAddress{b}, Ports: []v1.EndpointPort{p443}},
			},
		},
		{
			name: "ready wins over not ready for the same address and port",
			in: []v1.EndpointSubset{
				{NotReadyAddresses: []v1.EndpointAddress{a}, Ports: []v1.EndpointPort{p80}},
				{Addresses: []v1.EndpointAddress{a}, Ports: []v1.EndpointPort{p80}},
			},
			want: []v1.EndpointSubset{{Addresses: []v1.EndpointAddress{a}, Ports: []v1.EndpointPort{p80}}},
		},
		{
			name: "the same IP from two pods is two addresses",
			in: []v1.EndpointSubset{
				{Addresses: []v1.EndpointAddress{{IP: "10.0.0.1", TargetRef: &v1.ObjectReference{UID: "2"}}}, Ports: []v1.EndpointPort{p80}},
				{Addresses: []v1.EndpointAddress{{IP: "10.0.0.1", TargetRef: &v1.ObjectReference{UID: "1"}}}, Ports: []v1.EndpointPort{p80}},
			},
			want: []v1.EndpointSubset{{Addresses: []v1.EndpointAddress{
				{IP: "10.0.0.1", TargetRef: &v1.ObjectReference{UID: "1"}},
				{IP: "10.0.0.1", TargetRef: &v1.ObjectReference{UID: "2"}},
			}, Ports: []v1.EndpointPort{p80}}},
		},
		{
			name: "nothing in, nothing out",
			want: []v1.EndpointSubset{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, RepackSubsets(tt.in)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func addrs(prefix string, n int) []v1.EndpointAddress {
	out := make([]v1.EndpointAddress, n)
	for i := range out {
		out[i] = v1.EndpointAddress{IP: prefix + string(rune('a'+i%26))}
	}
	return out
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		name          string
		in            []v1.EndpointSubset
		truncated     bool
		ready, unrdys []int // per subset, after
	}{
		{name: "at capacity nothing is cut",
			in:    []v1.EndpointSubset{{Addresses: addrs("r", 600), NotReadyAddresses: addrs("n", 400)}},
			ready: []int{600}, unrdys: []int{400}},
		{name: "not-ready addresses go first",
			in:        []v1.EndpointSubset{{Addresses: addrs("r", 900), NotReadyAddresses: addrs("n", 300)}},
			truncated: true, ready: []int{900}, unrdys: []int{100}},
		{name: "too many ready: proportional shares, no not-ready",
			in: []v1.EndpointSubset{
				{Addresses: addrs("a", 1500), NotReadyAddresses: addrs("n", 10)},
				{Addresses: addrs("b", 500)},
			},
			truncated: true, ready: []int{750, 250}, unrdys: []int{0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Truncate(tt.in); got != tt.truncated {
				t.Fatalf("Truncate = %v, want %v", got, tt.truncated)
			}
			for i, s := range tt.in {
				if len(s.Addresses) != tt.ready[i] || len(s.NotReadyAddresses) != tt.unrdys[i] {
					t.Errorf("subset %d: %d ready, %d not ready; want %d, %d", i, len(s.Addresses), len(s.NotReadyAddresses), tt.ready[i], tt.unrdys[i])
				}
			}
		})
	}
}

func TestDesired(t *testing.T) {
	svc := service(func(s *v1.Service) { s.Labels = map[string]string{"team": "a", v1.IsHeadlessService: ""} })
	subsets := []v1.EndpointSubset{{Addresses: []v1.EndpointAddress{{IP: "10.0.0.1"}}, Ports: port(8080)}}
	trigger := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

	created := Desired(svc, subsets, nil, trigger)
	if created == nil || created.Name != "web" || created.Labels["team"] != "a" {
		t.Fatalf("new endpoints = %+v", created)
	}
	if got := created.Annotations[v1.EndpointsLastChangeTriggerTime]; got != "2026-01-02T03:04:05Z" {
		t.Errorf("trigger annotation = %q", got)
	}
	if _, ok := created.Labels[v1.IsHeadlessService]; ok {
		t.Errorf("service with a cluster IP labelled headless")
	}
	if Desired(svc, subsets, created, trigger.Add(time.Minute)) != nil {
		t.Errorf("unchanged endpoints rewritten for a new trigger time alone")
	}
	moved := []v1.EndpointSubset{{NotReadyAddresses: []v1.EndpointAddress{{IP: "10.0.0.1"}}, Ports: port(8080)}}
	if next := Desired(svc, moved, created, time.Time{}); next == nil {
		t.Errorf("readiness change not written")
	} else if _, ok := next.Annotations[v1.EndpointsLastChangeTriggerTime]; ok {
		t.Errorf("stale trigger annotation kept")
	}

	headless := Desired(service(func(s *v1.Service) { s.Spec.ClusterIP = v1.ClusterIPNone }), subsets, nil, trigger)
	if _, ok := headless.Labels[v1.IsHeadlessService]; !ok {
		t.Errorf("headless service's endpoints lack %s", v1.IsHeadlessService)
	}

	big := []v1.EndpointSubset{{Addresses: addrs("r", 1200), Ports: port(8080)}}
	over := Desired(svc, big, nil, trigger)
	if over.Annotations[v1.EndpointsOverCapacity] != OverCapacityTruncated || len(over.Subsets[0].Addresses) != MaxCapacity {
		t.Errorf("over capacity: annotation %q, %d addresses", over.Annotations[v1.EndpointsOverCapacity], len(over.Subsets[0].Addresses))
	}
	if Desired(svc, big, over, trigger) != nil {
		t.Errorf("truncated endpoints rewritten though nothing changed")
	}
}

func TestTriggerTimeTracker(t *testing.T) {
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	svc := service(func(s *v1.Service) { s.CreationTimestamp = metav1.NewTime(created) })
	at := func(p *v1.Pod, ts time.Time) *v1.Pod {
		p.Status.Conditions[0].LastTransitionTime = metav1.NewTime(ts)
		return p
	}
	tr := NewTriggerTimeTracker()
	sync := func(pods ...*v1.Pod) time.Time {
		got, seen := tr.Compute(svc, pods)
		tr.Commit(seen)
		return got
	}
	t1 := created.Add(time.Minute)
	if got := sync(at(pod("a", "10.0.0.1", true), t1)); !got.Equal(created) {
		t.Errorf("first sync = %v, want the service's creation", got)
	}
	if got := sync(at(pod("a", "10.0.0.1", true), t1)); !got.IsZero() {
		t.Errorf("nothing changed, got %v", got)
	}
	t2, t3 := t1.Add(time.Minute), t1.Add(2*time.Minute)
	changed := []*v1.Pod{at(pod("a", "10.0.0.1", false), t3), at(pod("b", "10.0.0.2", true), t2)}
	// A sync whose write failed is not committed: its retry reports the
	// same trigger time.
	if got, _ := tr.Compute(svc, changed); !got.Equal(t2) {
		t.Errorf("two changes = %v, want the earliest %v", got, t2)
	}
	if got := sync(changed...); !got.Equal(t2) {
		t.Errorf("retry after a failed write = %v, want %v", got, t2)
	}
	if got := sync(changed...); !got.IsZero() {
		t.Errorf("after commit = %v, want zero", got)
	}
}
