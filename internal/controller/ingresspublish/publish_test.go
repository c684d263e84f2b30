package ingresspublish

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/orca-project/orca/internal/ingress"
	"github.com/orca-project/orca/internal/ingress/gateway"
	"github.com/orca-project/orca/internal/testutil"
)

func node(name, ip string, serving, ready bool) *v1.Node {
	n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
	if serving {
		n.Labels[ingress.NodeLabel] = "true"
	}
	if ip != "" {
		n.Status.Addresses = []v1.NodeAddress{{Type: v1.NodeHostName, Address: name}, {Type: v1.NodeInternalIP, Address: ip}}
	}
	st := v1.ConditionFalse
	if ready {
		st = v1.ConditionTrue
	}
	n.Status.Conditions = []v1.NodeCondition{{Type: v1.NodeReady, Status: st}}
	return n
}

func TestEndpoints(t *testing.T) {
	for _, tc := range []struct {
		name  string
		nodes []*v1.Node
		want  []string // node=ip/ready
	}{
		{"none serving", []*v1.Node{node("a", "10.0.0.1", false, true)}, nil},
		{"by node name", []*v1.Node{node("b", "10.0.0.2", true, true), node("a", "10.0.0.9", true, true)}, []string{"a=10.0.0.9/true", "b=10.0.0.2/true"}},
		{"a NotReady node is not ready", []*v1.Node{node("a", "10.0.0.1", true, false)}, []string{"a=10.0.0.1/false"}},
		{"no InternalIP, no endpoint", []*v1.Node{node("a", "", true, true)}, nil},
		{"label false", []*v1.Node{func() *v1.Node {
			n := node("a", "10.0.0.1", true, true)
			n.Labels[ingress.NodeLabel] = "false"
			return n
		}()}, nil},
	} {
		var got []string
		for _, e := range Endpoints(tc.nodes) {
			got = append(got, fmt.Sprintf("%s=%s/%v", *e.NodeName, e.Addresses[0], *e.Conditions.Ready))
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestSlices(t *testing.T) {
	svc := Service()
	svc.UID = "u1"
	if s := Slices(svc, nil); len(s) != 1 || s[0].Name != "orca-ingress-0" || len(s[0].Endpoints) != 0 {
		t.Fatalf("no endpoints: want one empty slice, got %d", len(s))
	}
	var nodes []*v1.Node
	for i := range 250 {
		nodes = append(nodes, node(fmt.Sprintf("n%03d", i), fmt.Sprintf("10.0.%d.%d", i/200, i%200+1), true, true))
	}
	s := Slices(svc, Endpoints(nodes))
	if len(s) != 3 || len(s[0].Endpoints) != 100 || len(s[2].Endpoints) != 50 || s[2].Name != "orca-ingress-2" {
		t.Fatalf("250 endpoints: %d slices", len(s))
	}
	sl := s[0]
	if sl.Labels[discoveryv1.LabelServiceName] != "orca-ingress" || sl.Labels[discoveryv1.LabelManagedBy] != ManagedBy ||
		sl.OwnerReferences[0].UID != "u1" || len(sl.Ports) != 2 || *sl.Ports[0].Name != "http" || *sl.Ports[1].Port != 443 {
		t.Errorf("slice metadata or ports: %+v %+v", sl.ObjectMeta, sl.Ports)
	}
}

func TestStatus(t *testing.T) {
	svc := Service()
	svc.Status.LoadBalancer.Ingress = []v1.LoadBalancerIngress{{IP: "10.0.0.1"}, {Hostname: "lb.example"}, {}}
	got := Status(svc)
	if len(got.Ingress) != 2 || got.Ingress[0].IP != "10.0.0.1" || got.Ingress[1].Hostname != "lb.example" {
		t.Errorf("status %+v", got)
	}
	if len(Status(nil).Ingress) != 0 {
		t.Error("no service, no addresses")
	}
}

// TestController: the Service is created, its slice follows the serving
// nodes, Ingresses of the class take the Service's addresses, and a
// problem is reported once as an event.
func TestController(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	class := ingress.ClassName
	prefix := networkingv1.PathTypePrefix
	ing := func(name string, cls *string, svc string) *networkingv1.Ingress {
		return &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Spec: networkingv1.IngressSpec{
			IngressClassName: cls,
			Rules: []networkingv1.IngressRule{{Host: name + ".example", IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
				Paths: []networkingv1.HTTPIngressPath{{Path: "/", PathType: &prefix, Backend: networkingv1.IngressBackend{
					Service: &networkingv1.IngressServiceBackend{Name: svc, Port: networkingv1.ServiceBackendPort{Number: 80}}}}}}}}},
		}}
	}
	other := "nginx"
	client := fake.NewSimpleClientset(
		node("n1", "10.0.0.1", true, true), node("n2", "10.0.0.2", false, true),
		ing("mine", &class, "missing"), ing("theirs", &other, "web"),
	)
	f := informers.NewSharedInformerFactory(client, 0)
	c, err := New(client, nil, f, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	f.Start(ctx.Done())
	go func() { _ = c.Run(ctx, 1) }()

	svcs := client.CoreV1().Services(ingress.ServiceNamespace)
	testutil.Eventually(t, 10*time.Second, "the orca-ingress Service created", func() bool {
		_, err := svcs.Get(ctx, ingress.ServiceName, metav1.GetOptions{})
		return err == nil
	})
	sliceNodes := func() []string {
		sl, err := client.DiscoveryV1().EndpointSlices(ingress.ServiceNamespace).Get(ctx, SliceName(0), metav1.GetOptions{})
		if err != nil {
			return []string{err.Error()}
		}
		var out []string
		for _, e := range sl.Endpoints {
			out = append(out, *e.NodeName)
		}
		return out
	}
	testutil.Eventually(t, 10*time.Second, "the serving node in the slice", func() bool { return slices.Equal(sliceNodes(), []string{"n1"}) })

	// The second node starts serving: the slice follows.
	n2, _ := client.CoreV1().Nodes().Get(ctx, "n2", metav1.GetOptions{})
	n2.Labels[ingress.NodeLabel] = "true"
	if _, err := client.CoreV1().Nodes().Update(ctx, n2, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, "both nodes in the slice", func() bool { return slices.Equal(sliceNodes(), []string{"n1", "n2"}) })

	// The Service gets addresses: the Ingress of the class takes them,
	// the other class's does not.
	svc, _ := svcs.Get(ctx, ingress.ServiceName, metav1.GetOptions{})
	svc.Status.LoadBalancer.Ingress = []v1.LoadBalancerIngress{{IP: "10.0.0.1"}, {IP: "10.0.0.2"}}
	if _, err := svcs.UpdateStatus(ctx, svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	status := func(name string) []string {
		i, err := client.NetworkingV1().Ingresses("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return []string{err.Error()}
		}
		var out []string
		for _, in := range i.Status.LoadBalancer.Ingress {
			out = append(out, in.IP)
		}
		return out
	}
	testutil.Eventually(t, 10*time.Second, "the Service's addresses in the Ingress's status", func() bool {
		return slices.Equal(status("mine"), []string{"10.0.0.1", "10.0.0.2"})
	})
	if got := status("theirs"); len(got) != 0 {
		t.Errorf("another class's Ingress got a status: %v", got)
	}

	// The missing Service of "mine" is one Warning event, however many
	// syncs see it.
	warnings := func() []string {
		evs, _ := client.CoreV1().Events("default").List(ctx, metav1.ListOptions{})
		var out []string
		for _, e := range evs.Items {
			if e.Type == v1.EventTypeWarning && e.InvolvedObject.Name == "mine" {
				out = append(out, e.Reason+": "+e.Message)
			}
		}
		return out
	}
	testutil.Eventually(t, 10*time.Second, "a warning on the Ingress", func() bool { return len(warnings()) > 0 })
	c.queue.Add(syncKey)
	time.Sleep(200 * time.Millisecond)
	if w := warnings(); len(w) != 1 || w[0] != `Routing: host "mine.example", path "/": service default/missing not found` {
		t.Errorf("warnings %q", w)
	}
}

func TestGatewayService(t *testing.T) {
	gw := &gwv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "web", UID: "u1"},
		Spec: gwv1.GatewaySpec{GatewayClassName: "orca", Listeners: []gwv1.Listener{
			{Name: "tls", Protocol: gwv1.HTTPSProtocolType, Port: 443},
			{Name: "a", Protocol: gwv1.HTTPProtocolType, Port: 80},
			{Name: "b", Protocol: gwv1.HTTPProtocolType, Port: 80, Hostname: ptr.To(gwv1.Hostname("b.example"))},
			{Name: "odd", Protocol: gwv1.HTTPProtocolType, Port: 8080},
		}}}
	svc := GatewayService(gw)
	if svc.Name != "orca-gateway-web" || svc.Namespace != "infra" || svc.Labels[gateway.NameLabel] != "web" {
		t.Errorf("service %s/%s labels %v", svc.Namespace, svc.Name, svc.Labels)
	}
	var ports []string
	for _, p := range svc.Spec.Ports {
		ports = append(ports, fmt.Sprintf("%s:%d->%s", p.Name, p.Port, p.TargetPort.String()))
	}
	if !slices.Equal(ports, []string{"http:80->80", "https:443->443"}) {
		t.Errorf("ports %v", ports)
	}
	// The node the client is on serves it, so the address dialled is seen.
	if svc.Spec.Type != v1.ServiceTypeClusterIP || *svc.Spec.InternalTrafficPolicy != v1.ServiceInternalTrafficPolicyLocal {
		t.Errorf("type %s, internal traffic policy %v", svc.Spec.Type, *svc.Spec.InternalTrafficPolicy)
	}
	if o := svc.OwnerReferences; len(o) != 1 || o[0].Kind != "Gateway" || o[0].UID != "u1" || o[0].APIVersion != "gateway.networking.k8s.io/v1" {
		t.Errorf("owner %v", o)
	}
	svc.UID = "s1"
	sl := GatewaySlice(svc, Endpoints([]*v1.Node{node("a", "10.0.0.1", true, true), node("b", "10.0.0.2", false, true)}))
	if sl.Name != svc.Name || sl.Labels[discoveryv1.LabelServiceName] != svc.Name || len(sl.Endpoints) != 1 || len(sl.Ports) != 2 ||
		*sl.Ports[1].Port != 443 || sl.OwnerReferences[0].UID != "s1" {
		t.Errorf("slice %+v", sl)
	}
	// No listener on an ingress port: no Service.
	gw.Spec.Listeners = gw.Spec.Listeners[3:]
	if GatewayService(gw) != nil {
		t.Error("a Service for a Gateway without an ingress port")
	}
}

// A Service that already bears a Gateway's Service name but is not
// marked as the Gateway's is refused with the reason and left as it was;
// the Gateway's own one is brought back to what it should be.
func TestEnsureGatewayServiceLeavesStrangers(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	stranger := &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "orca-gateway-web", Labels: map[string]string{"app": "mine"}},
		Spec: v1.ServiceSpec{Ports: []v1.ServicePort{{Name: "db", Port: 5432}}}}
	client := fake.NewClientset(stranger)
	f := informers.NewSharedInformerFactory(client, 0)
	svcs := f.Core().V1().Services()
	c := &Controller{client: client, services: svcs.Lister()}
	svcs.Informer()
	f.Start(ctx.Done())
	f.WaitForCacheSync(ctx.Done())
	defer f.Shutdown()
	defer cancel()

	gw := &gwv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "web", UID: "u1"},
		Spec: gwv1.GatewaySpec{GatewayClassName: "orca", Listeners: []gwv1.Listener{{Name: "http", Protocol: gwv1.HTTPProtocolType, Port: 80}}}}
	if _, err := c.ensureGatewayService(ctx, GatewayService(gw)); err == nil || !strings.Contains(err.Error(), "is not Gateway web's") {
		t.Fatalf("a stranger's Service: err %v", err)
	}
	got, err := client.CoreV1().Services("infra").Get(ctx, "orca-gateway-web", metav1.GetOptions{})
	if err != nil || got.Labels["app"] != "mine" || len(got.OwnerReferences) != 0 || got.Spec.Ports[0].Port != 5432 {
		t.Errorf("the stranger's Service changed: %+v %v", got, err)
	}

	// The Gateway's own Service, edited by hand, is put back.
	mine := GatewayService(gw)
	mine.Namespace, mine.Name = "infra", gateway.ServiceName("other")
	mine.Labels[gateway.NameLabel] = "other"
	mine.Spec.Ports[0].Port = 8080
	if _, err := client.CoreV1().Services("infra").Create(ctx, mine, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, "the edited Service in the cache", func() bool {
		_, err := svcs.Lister().Services("infra").Get(mine.Name)
		return err == nil
	})
	other := gw.DeepCopy()
	other.Name = "other"
	svc, err := c.ensureGatewayService(ctx, GatewayService(other))
	if err != nil || svc.Spec.Ports[0].Port != 80 {
		t.Errorf("the Gateway's own Service: %v, ports %v", err, svc)
	}
}
