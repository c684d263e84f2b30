package endpointslicemirroring

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orca-project/orca/internal/controller/endpointslice"
)

func TestShouldMirror(t *testing.T) {
	tests := []struct {
		name string
		ep   *v1.Endpoints
		want bool
	}{
		{"plain", &v1.Endpoints{}, true},
		{"skip-mirror", &v1.Endpoints{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{discoveryv1.LabelSkipMirror: "true"}}}, false},
		{"skip-mirror false", &v1.Endpoints{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{discoveryv1.LabelSkipMirror: "false"}}}, true},
		{"leader lock", &v1.Endpoints{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{leaderAnnotation: "{}"}}}, false},
	}
	for _, tt := range tests {
		if got := ShouldMirror(tt.ep); got != tt.want {
			t.Errorf("%s: ShouldMirror = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestOwner(t *testing.T) {
	ep := &v1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns", UID: "ep-uid",
		Labels: map[string]string{"team": "a", discoveryv1.LabelManagedBy: "someone"},
		Annotations: map[string]string{"note": "x", v1.EndpointsLastChangeTriggerTime: "t",
			v1.LastAppliedConfigAnnotation: "{}"}}}
	o := Owner(ep)
	if o.Labels["team"] != "a" || o.Labels[discoveryv1.LabelServiceName] != "db" || o.Labels[discoveryv1.LabelManagedBy] != ControllerName {
		t.Errorf("labels = %v", o.Labels)
	}
	if len(o.Annotations) != 1 || o.Annotations["note"] != "x" {
		t.Errorf("annotations = %v, want only note", o.Annotations)
	}
	if o.Ref.Kind != "Endpoints" || o.Ref.UID != "ep-uid" || o.Placeholder {
		t.Errorf("owner = %+v", o)
	}
}

func TestDesiredAndReconcile(t *testing.T) {
	node := "n1"
	ep := &v1.Endpoints{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns", UID: "ep-uid"},
		Subsets: []v1.EndpointSubset{
			{
				Addresses:         []v1.EndpointAddress{{IP: "192.0.2.1", Hostname: "h1", NodeName: &node}, {IP: "2001:db8::1"}},
				NotReadyAddresses: []v1.EndpointAddress{{IP: "192.0.2.2"}, {IP: "not-an-ip"}},
				Ports:             []v1.EndpointPort{{Name: "sql", Port: 5432, Protocol: v1.ProtocolTCP}},
			},
			{
				Addresses: []v1.EndpointAddress{{IP: "192.0.2.9"}},
				Ports:     []v1.EndpointPort{{Name: "sql", Port: 5433, Protocol: v1.ProtocolTCP}},
			},
		},
	}
	desired, truncated := Desired(ep)
	if truncated {
		t.Errorf("truncated a small object")
	}
	if len(desired[discoveryv1.AddressTypeIPv4]) != 2 || len(desired[discoveryv1.AddressTypeIPv6]) != 1 {
		t.Fatalf("groups: %d IPv4, %d IPv6; want 2 and 1", len(desired[discoveryv1.AddressTypeIPv4]), len(desired[discoveryv1.AddressTypeIPv6]))
	}
	plan := endpointslice.Reconcile(Owner(ep), nil, desired, MaxEndpointsPerSubset)
	if len(plan.Create) != 3 {
		t.Fatalf("%d slices to create, want 3", len(plan.Create))
	}
	got := map[string]string{}
	for _, s := range plan.Create {
		for _, e := range s.Endpoints {
			h := ""
			if e.Hostname != nil {
				h = *e.Hostname
			}
			got[e.Addresses[0]] = fmt.Sprintf("%s port=%d ready=%v host=%s", s.AddressType, *s.Ports[0].Port, *e.Conditions.Ready, h)
		}
	}
	want := map[string]string{
		"192.0.2.1":   "IPv4 port=5432 ready=true host=h1",
		"192.0.2.2":   "IPv4 port=5432 ready=false host=",
		"2001:db8::1": "IPv6 port=5432 ready=true host=",
		"192.0.2.9":   "IPv4 port=5433 ready=true host=",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("mirrored endpoints:\n got %v\nwant %v", got, want)
	}

	// Every address gone: the slices go, with no placeholder left.
	var stored []*discoveryv1.EndpointSlice
	for i, s := range plan.Create {
		s.Name = fmt.Sprintf("db-%d", i)
		stored = append(stored, s)
	}
	plan = endpointslice.Reconcile(Owner(ep), stored, map[discoveryv1.AddressType]map[string]*endpointslice.Group{}, MaxEndpointsPerSubset)
	if len(plan.Delete) != 3 || len(plan.Create)+len(plan.Update) != 0 {
		t.Errorf("emptied endpoints: %d create, %d update, %d delete", len(plan.Create), len(plan.Update), len(plan.Delete))
	}
}

func TestDesiredTruncatesLargeSubsets(t *testing.T) {
	var addrs []v1.EndpointAddress
	for i := range MaxEndpointsPerSubset + 5 {
		addrs = append(addrs, v1.EndpointAddress{IP: fmt.Sprintf("10.%d.%d.%d", i/65536, i/256%256, i%256)})
	}
	ep := &v1.Endpoints{Subsets: []v1.EndpointSubset{{Addresses: addrs, Ports: []v1.EndpointPort{{Port: 80}}}}}
	desired, truncated := Desired(ep)
	n := 0
	for _, g := range desired[discoveryv1.AddressTypeIPv4] {
		n += len(g.Endpoints)
	}
	if !truncated || n != MaxEndpointsPerSubset {
		t.Errorf("truncated=%v with %d endpoints, want true with %d", truncated, n, MaxEndpointsPerSubset)
	}
}
