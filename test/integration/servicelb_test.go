package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// lbNode creates a Ready node with an InternalIP, labelled with the test's
// namespace, and deletes it when the test ends.
func lbNode(t *testing.T, ns, name, ip string) {
	t.Helper()
	ctx := context.Background()
	n, err := client.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name,
		Labels: map[string]string{"orca-test": ns}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	// A merge patch, as a kubelet reports status: the node IPAM controller
	// writes the spec meanwhile.
	now := metav1.Now().UTC().Format(time.RFC3339)
	patch := fmt.Sprintf(`{"status":{"conditions":[{"type":"Ready","status":"True","reason":"KubeletReady","lastHeartbeatTime":%q,"lastTransitionTime":%q}],`+
		`"addresses":[{"type":"InternalIP","address":%q},{"type":"Hostname","address":%q}]}}`, now, now, ip, name)
	if _, err := client.CoreV1().Nodes().Patch(ctx, n.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}, "status"); err != nil {
		t.Fatal(err)
	}
}

func lbService(name string, port int32, mutate ...func(*corev1.Service)) *corev1.Service {
	s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.ServiceSpec{
		Type: corev1.ServiceTypeLoadBalancer, Selector: map[string]string{"app": name},
		Ports: []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: port}}}}
	for _, m := range mutate {
		m(s)
	}
	return s
}

// ingressIPs waits until pred holds for the service's ingress addresses.
func ingressIPs(t *testing.T, ns, name string, what string, pred func([]corev1.LoadBalancerIngress) bool) []corev1.LoadBalancerIngress {
	t.Helper()
	var last []corev1.LoadBalancerIngress
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		s, err := client.CoreV1().Services(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		last = s.Status.LoadBalancer.Ingress
		if pred(last) {
			return last
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("service %s/%s: %s; ingress is %+v", ns, name, what, last)
	return nil
}

func hasIPs(in []corev1.LoadBalancerIngress, ips ...string) bool {
	have := map[string]bool{}
	for _, i := range in {
		if i.IPMode == nil || *i.IPMode != corev1.LoadBalancerIPModeVIP {
			return false
		}
		have[i.IP] = true
	}
	for _, ip := range ips {
		if !have[ip] {
			return false
		}
	}
	return true
}

// TestServiceLBNodeAddresses: without a pool a LoadBalancer service gets
// the Ready nodes' InternalIPs; a second service on the same port gets an
// event and no address; changing the type releases the addresses, and a
// service of another loadBalancerClass is left alone.
func TestServiceLBNodeAddresses(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, client, "servicelb")
	lbNode(t, ns, ns+"-a", "198.51.100.21")
	lbNode(t, ns, ns+"-b", "198.51.100.22")
	svcs := client.CoreV1().Services(ns)

	// Ports no other test uses: in node mode every LoadBalancer service in
	// the cluster shares the node addresses.
	if _, err := svcs.Create(ctx, lbService("first", 17801), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ingressIPs(t, ns, "first", "want both node addresses", func(in []corev1.LoadBalancerIngress) bool {
		return hasIPs(in, "198.51.100.21", "198.51.100.22")
	})

	time.Sleep(1100 * time.Millisecond) // a later creation timestamp
	if _, err := svcs.Create(ctx, lbService("second", 17801), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, func() error {
		evs, err := client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, e := range evs.Items {
			if e.InvolvedObject.Name == "second" && e.Reason == "SyncLoadBalancerFailed" && e.Type == corev1.EventTypeWarning &&
				strings.Contains(e.Message, "port 17801/TCP") && strings.Contains(e.Message, ns+"/first") {
				return nil
			}
		}
		return fmt.Errorf("no SyncLoadBalancerFailed event on the second service")
	})
	if s, _ := svcs.Get(ctx, "second", metav1.GetOptions{}); len(s.Status.LoadBalancer.Ingress) != 0 {
		t.Errorf("conflicting service got addresses %+v", s.Status.LoadBalancer.Ingress)
	}
	evs, err := client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ensured := false
	for _, e := range evs.Items {
		ensured = ensured || (e.InvolvedObject.Name == "first" && e.Reason == "EnsuredLoadBalancer")
	}
	if !ensured {
		t.Errorf("no EnsuredLoadBalancer event on the first service")
	}

	// The first one stops being a LoadBalancer: its addresses go, and the
	// port is free for the second.
	first, err := svcs.Get(ctx, "first", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	first.Spec.Type = corev1.ServiceTypeClusterIP
	for i := range first.Spec.Ports {
		first.Spec.Ports[i].NodePort = 0
	}
	first.Spec.ExternalTrafficPolicy = ""
	first.Spec.AllocateLoadBalancerNodePorts = nil
	if _, err := svcs.Update(ctx, first, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	ingressIPs(t, ns, "first", "want no addresses after the type change", func(in []corev1.LoadBalancerIngress) bool { return len(in) == 0 })
	ingressIPs(t, ns, "second", "want the node addresses once the port is free", func(in []corev1.LoadBalancerIngress) bool {
		return hasIPs(in, "198.51.100.21", "198.51.100.22")
	})

	other := "example.com/other-lb"
	if _, err := svcs.Create(ctx, lbService("other", 17802, func(s *corev1.Service) { s.Spec.LoadBalancerClass = &other }), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := svcs.Create(ctx, lbService("third", 17803), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Once a later service has been handled, the other class's has been
	// passed over.
	ingressIPs(t, ns, "third", "want the node addresses", func(in []corev1.LoadBalancerIngress) bool {
		return hasIPs(in, "198.51.100.21")
	})
	if s, _ := svcs.Get(ctx, "other", metav1.GetOptions{}); len(s.Status.LoadBalancer.Ingress) != 0 {
		t.Errorf("service of another load balancer class got addresses %+v", s.Status.LoadBalancer.Ingress)
	}

	// A node that goes away leaves the addresses.
	if err := client.CoreV1().Nodes().Delete(ctx, ns+"-b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	ingressIPs(t, ns, "third", "want the deleted node's address gone", func(in []corev1.LoadBalancerIngress) bool {
		return hasIPs(in, "198.51.100.21") && !hasIPs(in, "198.51.100.22")
	})
}
