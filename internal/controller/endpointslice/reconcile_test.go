package endpointslice

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func service() *v1.Service {
	return &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "svc-uid", Labels: map[string]string{"team": "a"}},
		Spec: v1.ServiceSpec{ClusterIP: "10.96.0.10", Selector: map[string]string{"app": "web"},
			Ports: []v1.ServicePort{{Name: "http", Port: 80, Protocol: v1.ProtocolTCP, TargetPort: intstr.FromString("http")}}},
	}
}

func pod(i int, ready bool, containerPort int32) *v1.Pod {
	status := v1.ConditionFalse
	if ready {
		status = v1.ConditionTrue
	}
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%03d", i), Namespace: "ns", UID: types.UID(fmt.Sprintf("uid-%d", i))},
		Spec: v1.PodSpec{NodeName: "node-1", Containers: []v1.Container{{Name: "c", Ports: []v1.ContainerPort{
			{Name: "http", ContainerPort: containerPort, Protocol: v1.ProtocolTCP}}}}},
		Status: v1.PodStatus{Phase: v1.PodRunning, PodIP: fmt.Sprintf("10.1.%d.%d", i/250, i%250+1),
			Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: status}}},
	}
}

func pods(n int) []*v1.Pod {
	out := make([]*v1.Pod, n)
	for i := range out {
		out[i] = pod(i, true, 8080)
	}
	return out
}

func noZone(string) string { return "" }

func desiredFor(svc *v1.Service, ps []*v1.Pod) map[discoveryv1.AddressType]map[string]*Group {
	return map[discoveryv1.AddressType]map[string]*Group{
		discoveryv1.AddressTypeIPv4: DesiredEndpoints(svc, ps, discoveryv1.AddressTypeIPv4, noZone),
	}
}

// apply plays a plan against a set of stored slices, naming new ones as
// the server would.
func apply(t *testing.T, stored []*discoveryv1.EndpointSlice, p Plan) []*discoveryv1.EndpointSlice {
	t.Helper()
	byName := map[string]*discoveryv1.EndpointSlice{}
	for _, s := range stored {
		byName[s.Name] = s
	}
	for _, s := range p.Delete {
		if byName[s.Name] == nil {
			t.Fatalf("deleting unknown slice %s", s.Name)
		}
		delete(byName, s.Name)
	}
	for _, s := range p.Update {
		if byName[s.Name] == nil {
			t.Fatalf("updating unknown slice %s", s.Name)
		}
		byName[s.Name] = s
	}
	for i, s := range p.Create {
		s = s.DeepCopy()
		s.Name = fmt.Sprintf("%s%d-%d", s.GenerateName, len(stored), i)
		s.UID = types.UID(s.Name)
		byName[s.Name] = s
	}
	var out []*discoveryv1.EndpointSlice
	for _, s := range byName {
		if len(s.Endpoints) > MaxEndpointsPerSlice {
			t.Fatalf("slice %s has %d endpoints", s.Name, len(s.Endpoints))
		}
		out = append(out, s)
	}
	return out
}

func count(slices []*discoveryv1.EndpointSlice) int {
	n := 0
	for _, s := range slices {
		n += len(s.Endpoints)
	}
	return n
}

func TestReconcileSplitsAt100(t *testing.T) {
	svc := service()
	plan := Reconcile(ServiceOwner(svc), nil, desiredFor(svc, pods(250)), MaxEndpointsPerSlice)
	if len(plan.Create) != 3 || len(plan.Update) != 0 || len(plan.Delete) != 0 {
		t.Fatalf("plan: %d create, %d update, %d delete; want 3 creations", len(plan.Create), len(plan.Update), len(plan.Delete))
	}
	s := plan.Create[0]
	if s.GenerateName != "web-" || s.AddressType != discoveryv1.AddressTypeIPv4 ||
		s.Labels[discoveryv1.LabelServiceName] != "web" || s.Labels[discoveryv1.LabelManagedBy] != ControllerName || s.Labels["team"] != "a" {
		t.Errorf("slice meta: %+v", s.ObjectMeta)
	}
	if len(s.OwnerReferences) != 1 || s.OwnerReferences[0].UID != "svc-uid" || s.OwnerReferences[0].Controller == nil || !*s.OwnerReferences[0].Controller {
		t.Errorf("owner references: %+v", s.OwnerReferences)
	}
	if len(s.Ports) != 1 || *s.Ports[0].Port != 8080 || *s.Ports[0].Name != "http" {
		t.Errorf("ports: %+v", s.Ports)
	}
	stored := apply(t, nil, plan)
	if count(stored) != 250 {
		t.Errorf("%d endpoints stored, want 250", count(stored))
	}
	if again := Reconcile(ServiceOwner(svc), stored, desiredFor(svc, pods(250)), MaxEndpointsPerSlice); !again.Empty() {
		t.Errorf("second pass not empty: %+v", again)
	}
}

func TestReconcileChurn(t *testing.T) {
	svc := service()
	stored := apply(t, nil, Reconcile(ServiceOwner(svc), nil, desiredFor(svc, pods(250)), MaxEndpointsPerSlice))

	tests := []struct {
		name                   string
		pods                   func() []*v1.Pod
		create, update, delete int
		endpoints              int
	}{
		{name: "a readiness change rewrites one slice in place",
			pods:   func() []*v1.Pod { ps := pods(250); ps[7] = pod(7, false, 8080); return ps },
			update: 1, endpoints: 250},
		{name: "a new pod goes into the slice with room",
			pods:   func() []*v1.Pod { return pods(251) },
			update: 1, endpoints: 251},
		{name: "a removed pod rewrites its slice only",
			pods:   func() []*v1.Pod { return pods(250)[1:] },
			update: 1, endpoints: 249},
		{name: "every pod of one slice gone: that slice is deleted",
			pods: func() []*v1.Pod {
				gone := map[string]bool{}
				for _, ep := range smallest(stored).Endpoints {
					gone[ep.TargetRef.Name] = true
				}
				var ps []*v1.Pod
				for _, p := range pods(250) {
					if !gone[p.Name] {
						ps = append(ps, p)
					}
				}
				return ps
			},
			delete: 1, endpoints: 200},
		{name: "a new port number moves every endpoint; deleted slices are reused",
			pods: func() []*v1.Pod {
				ps := make([]*v1.Pod, 250)
				for i := range ps {
					ps[i] = pod(i, true, 9090)
				}
				return ps
			},
			update: 3, endpoints: 250},
		{name: "no pods: one empty placeholder slice remains",
			pods:   func() []*v1.Pod { return nil },
			update: 1, delete: 2, endpoints: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := tt.pods()
			plan := Reconcile(ServiceOwner(svc), stored, desiredFor(svc, ps), MaxEndpointsPerSlice)
			if len(plan.Create) != tt.create || len(plan.Update) != tt.update || len(plan.Delete) != tt.delete {
				t.Fatalf("plan: %d create, %d update, %d delete; want %d, %d, %d",
					len(plan.Create), len(plan.Update), len(plan.Delete), tt.create, tt.update, tt.delete)
			}
			after := apply(t, stored, plan)
			if count(after) != tt.endpoints {
				t.Errorf("%d endpoints, want %d", count(after), tt.endpoints)
			}
			if again := Reconcile(ServiceOwner(svc), after, desiredFor(svc, ps), MaxEndpointsPerSlice); !again.Empty() {
				t.Errorf("not converged: %d create, %d update, %d delete", len(again.Create), len(again.Update), len(again.Delete))
			}
		})
	}
}

func smallest(slices []*discoveryv1.EndpointSlice) *discoveryv1.EndpointSlice {
	s := slices[0]
	for _, x := range slices {
		if len(x.Endpoints) < len(s.Endpoints) {
			s = x
		}
	}
	return s
}

func TestReconcilePlaceholder(t *testing.T) {
	svc := service()
	plan := Reconcile(ServiceOwner(svc), nil, desiredFor(svc, nil), MaxEndpointsPerSlice)
	if len(plan.Create) != 1 || len(plan.Create[0].Endpoints) != 0 || len(plan.Create[0].Ports) != 0 {
		t.Fatalf("want one empty placeholder, got %+v", plan)
	}
	stored := apply(t, nil, plan)
	if again := Reconcile(ServiceOwner(svc), stored, desiredFor(svc, nil), MaxEndpointsPerSlice); !again.Empty() {
		t.Errorf("placeholder rewritten: %+v", again)
	}
	// The first pod turns the placeholder into its slice.
	plan = Reconcile(ServiceOwner(svc), stored, desiredFor(svc, pods(1)), MaxEndpointsPerSlice)
	if len(plan.Update) != 1 || len(plan.Create)+len(plan.Delete) != 0 || len(plan.Update[0].Endpoints) != 1 {
		t.Errorf("first pod: %+v", plan)
	}
}

func TestReconcileDeletesForeignSlices(t *testing.T) {
	svc := service()
	stored := apply(t, nil, Reconcile(ServiceOwner(svc), nil, desiredFor(svc, pods(3)), MaxEndpointsPerSlice))
	// The service was recreated under the same name: a new UID.
	svc2 := service()
	svc2.UID = "svc-uid-2"
	// Its slices are left to the garbage collector, never rewritten.
	plan := Reconcile(ServiceOwner(svc2), stored, desiredFor(svc2, pods(3)), MaxEndpointsPerSlice)
	if len(plan.Create) != 1 || plan.Create[0].OwnerReferences[0].UID != "svc-uid-2" || len(plan.Delete) != 1 || len(plan.Update) != 0 {
		t.Errorf("plan: %d create, %d update, %d delete; want the old slice deleted and a new one created", len(plan.Create), len(plan.Update), len(plan.Delete))
	}
}

func TestDesiredEndpoints(t *testing.T) {
	svc := service()
	now := metav1.Now()
	terminating := pod(1, true, 8080)
	terminating.DeletionTimestamp = &now
	host := pod(2, true, 9090)
	host.Spec.Hostname, host.Spec.Subdomain = "h", "web"
	finished := pod(3, true, 8080)
	finished.Status.Phase = v1.PodSucceeded
	groups := DesiredEndpoints(svc, []*v1.Pod{pod(0, false, 8080), terminating, host, finished}, discoveryv1.AddressTypeIPv4,
		func(n string) string { return map[string]string{"node-1": "zone-a"}[n] })
	if len(groups) != 2 {
		t.Fatalf("%d port groups, want 2 (8080 and 9090)", len(groups))
	}
	var g8080, g9090 *Group
	for _, g := range groups {
		switch *g.Ports[0].Port {
		case 8080:
			g8080 = g
		case 9090:
			g9090 = g
		}
	}
	if g8080 == nil || g9090 == nil || len(g8080.Endpoints) != 2 || len(g9090.Endpoints) != 1 {
		t.Fatalf("groups: %+v", groups)
	}
	for _, ep := range g8080.Endpoints {
		c := ep.Conditions
		switch ep.TargetRef.Name {
		case "p000":
			if *c.Ready || *c.Serving || *c.Terminating {
				t.Errorf("unready pod: %+v", c)
			}
		case "p001":
			if *c.Ready || !*c.Serving || !*c.Terminating {
				t.Errorf("terminating ready pod: ready=%v serving=%v terminating=%v", *c.Ready, *c.Serving, *c.Terminating)
			}
		}
		if ep.Zone == nil || *ep.Zone != "zone-a" || ep.NodeName == nil || *ep.NodeName != "node-1" {
			t.Errorf("zone/node: %v %v", ep.Zone, ep.NodeName)
		}
	}
	for _, ep := range g9090.Endpoints {
		if ep.Hostname == nil || *ep.Hostname != "h" || !*ep.Conditions.Ready {
			t.Errorf("host pod endpoint: %+v", ep)
		}
	}
}
