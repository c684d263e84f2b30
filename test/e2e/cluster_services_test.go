package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// On a three-node cluster: a client pod reaches a service by its names and
// gets answers from replicas on every node; the NodePort answers on every
// node's address from the host; the LoadBalancer service gets the nodes'
// addresses and answers there; a StatefulSet's pods resolve each other
// by their stable names.
func TestServicesAcrossNodes(t *testing.T) {
	nodes := needNodes(t, 3)
	ns := namespace(t)
	for i, n := range nodes {
		p := webPod(ns, fmt.Sprintf("web-%d", i))
		p.Spec.NodeName = n
		createPod(t, p)
	}
	client0 := simplePod(ns, "client", "exec sleep 3600")
	client0.Spec.NodeName = nodes[1]
	createPod(t, client0)
	for i := range nodes {
		waitPod(t, ns, fmt.Sprintf("web-%d", i), 2*time.Minute, "Ready", ready)
	}
	waitPod(t, ns, "client", 2*time.Minute, "Running", running)
	createService(t, ns, "web", func(s *v1.Service) { s.Spec.Type = v1.ServiceTypeNodePort })

	for _, url := range []string{"http://web", "http://web." + ns + ".svc.cluster.local"} {
		var got map[string]int
		eventually(t, 30*time.Second, func() error {
			got = count(fetchFrom(t, ns, "client", url, 30))
			for i := range nodes {
				if got[fmt.Sprintf("web-%d", i)] == 0 {
					return fmt.Errorf("%s: answers %v, none from web-%d", url, got, i)
				}
			}
			if got["ERR"] > 0 {
				return fmt.Errorf("%s: %d failed requests (%v)", url, got["ERR"], got)
			}
			return nil
		})
	}

	svc, err := client.CoreV1().Services(ns).Get(context.Background(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	port := svc.Spec.Ports[0].NodePort
	for _, n := range nodes {
		node, err := client.CoreV1().Nodes().Get(context.Background(), n, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		addr := node.Status.Addresses[0].Address
		for _, a := range node.Status.Addresses {
			if a.Type == v1.NodeInternalIP {
				addr = a.Address
			}
		}
		eventually(t, 20*time.Second, func() error {
			body, err := httpGet(fmt.Sprintf("http://%s:%d/", addr, port))
			if err != nil || !strings.HasPrefix(body, "web-") {
				return fmt.Errorf("NodePort on %s (%s): %q %v", n, addr, body, err)
			}
			return nil
		})
	}

	// Port 80 of the nodes' addresses is the ingress's (the orca-ingress
	// LoadBalancer Service holds it); a Service of one's own takes another.
	lb := createService(t, ns, "web-lb", func(s *v1.Service) {
		s.Spec.Type = v1.ServiceTypeLoadBalancer
		s.Spec.Ports[0].Port = 8080
	})
	var ingress string
	eventually(t, 30*time.Second, func() error {
		s, err := client.CoreV1().Services(ns).Get(context.Background(), lb.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(s.Status.LoadBalancer.Ingress) == 0 {
			return fmt.Errorf("no load-balancer address yet")
		}
		ingress = s.Status.LoadBalancer.Ingress[0].IP
		return nil
	})
	eventually(t, 20*time.Second, func() error {
		body, err := httpGet("http://" + ingress + ":8080/")
		if err != nil || !strings.HasPrefix(body, "web-") {
			return fmt.Errorf("LoadBalancer %s: %q %v", ingress, body, err)
		}
		return nil
	})
}
