package integration

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

// TestIngressPublished: the server creates the default IngressClass orca
// and the kube-system/orca-ingress LoadBalancer Service; a node labelled
// as serving the ingress becomes the Service's endpoint; an Ingress that
// names no class is given orca's, and its status takes the Service's
// addresses, which kubectl shows.
func TestIngressPublished(t *testing.T) {
	ctx := context.Background()
	// kubectl marks the default class by its name.
	out := mustKubectl(t, "", "get", "ingressclass", "orca", "--no-headers")
	if f := strings.Fields(out); len(f) < 3 || f[0] != "orca" || f[1] != "(default)" || f[2] != "orca.io/ingress-controller" {
		t.Fatalf("kubectl get ingressclass orca: %q", out)
	}
	cls, err := client.NetworkingV1().IngressClasses().Get(ctx, "orca", metav1.GetOptions{})
	if err != nil || cls.Annotations[networkingv1.AnnotationIsDefaultIngressClass] != "true" {
		t.Fatalf("IngressClass orca is not the default: %v %v", cls.Annotations, err)
	}

	var svc *corev1.Service
	eventually(t, 30*time.Second, func() error {
		svc, err = client.CoreV1().Services("kube-system").Get(ctx, "orca-ingress", metav1.GetOptions{})
		return err
	})
	if svc.Spec.Type != corev1.ServiceTypeLoadBalancer || svc.Spec.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyLocal ||
		len(svc.Spec.Ports) != 2 || svc.Spec.Ports[0].Port != 80 || svc.Spec.Ports[1].Port != 443 || len(svc.Spec.Selector) != 0 {
		t.Errorf("orca-ingress service spec: %+v", svc.Spec)
	}

	// A node whose agent serves the ingress (it sets the label) is the
	// endpoint, at its InternalIP.
	ingressNode(t, "ingress-node", "192.0.2.77")
	eventually(t, 30*time.Second, func() error {
		sl, err := client.DiscoveryV1().EndpointSlices("kube-system").List(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=orca-ingress"})
		if err != nil {
			return err
		}
		var nodes []string
		for _, s := range sl.Items {
			for _, e := range s.Endpoints {
				if e.NodeName != nil && e.Conditions.Ready != nil && *e.Conditions.Ready {
					nodes = append(nodes, *e.NodeName)
				}
			}
		}
		if !slices.Equal(nodes, []string{"ingress-node"}) {
			return fmt.Errorf("ready endpoints on %v, want ingress-node", nodes)
		}
		return nil
	})

	ns := admissionNamespace(t, "ingress")
	mustKubectl(t, `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: site
spec:
  rules:
  - host: site.example
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
`, "-n", ns, "apply", "-f", "-")
	ing, err := client.NetworkingV1().Ingresses(ns).Get(ctx, "site", metav1.GetOptions{})
	if err != nil || ing.Spec.IngressClassName == nil || *ing.Spec.IngressClassName != "orca" {
		t.Fatalf("an Ingress without a class: ingressClassName %v (%v), want orca", ing.Spec.IngressClassName, err)
	}
	eventually(t, 30*time.Second, func() error {
		svc, err := client.CoreV1().Services("kube-system").Get(ctx, "orca-ingress", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(svc.Status.LoadBalancer.Ingress) == 0 {
			return fmt.Errorf("orca-ingress has no load balancer address yet")
		}
		var want string
		for _, in := range svc.Status.LoadBalancer.Ingress {
			if in.IP == "192.0.2.77" {
				want = in.IP
			}
		}
		if want == "" {
			return fmt.Errorf("orca-ingress addresses %v lack the node's", svc.Status.LoadBalancer.Ingress)
		}
		out := mustKubectl(t, "", "-n", ns, "get", "ingress", "site", "--no-headers")
		if f := strings.Fields(out); len(f) < 4 || !strings.Contains(f[3], want) {
			return fmt.Errorf("kubectl get ingress: %q, want the address %s", out, want)
		}
		return nil
	})
	// The missing backend is reported on the Ingress.
	eventually(t, 30*time.Second, func() error {
		evs, err := client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=site"})
		if err != nil {
			return err
		}
		for _, e := range evs.Items {
			if e.Reason == "Routing" && e.Type == corev1.EventTypeWarning && strings.Contains(e.Message, "service "+ns+"/web not found") {
				return nil
			}
		}
		return fmt.Errorf("no Routing warning among %d events", len(evs.Items))
	})
}

// TestIngressIdentity: the ingress controller's identity reads what
// routing needs and writes nothing else.
func TestIngressIdentity(t *testing.T) {
	ctx := context.Background()
	ing := certClient(t, "system:orca:ingress")
	_, err := ing.NetworkingV1().Ingresses("").List(ctx, metav1.ListOptions{Limit: 1})
	allowed(t, "ingress lists ingresses", err)
	_, err = ing.CoreV1().Secrets("").List(ctx, metav1.ListOptions{Limit: 1, FieldSelector: "type=kubernetes.io/tls"})
	allowed(t, "ingress lists TLS secrets", err)
	_, err = ing.DiscoveryV1().EndpointSlices("").List(ctx, metav1.ListOptions{Limit: 1})
	allowed(t, "ingress lists endpoint slices", err)
	_, err = ing.CoreV1().Pods("").List(ctx, metav1.ListOptions{Limit: 1})
	forbidden(t, "ingress lists pods", err, `User "system:orca:ingress" cannot list resource "pods"`)
	_, err = ing.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{})
	forbidden(t, "ingress creates a config map", err, `cannot create resource "configmaps"`)
}

// ingressNode registers a Ready node with an InternalIP whose agent, by
// its label, serves the ingress, and deletes it after the test.
func ingressNode(t *testing.T, name, ip string) {
	t.Helper()
	ctx := context.Background()
	if _, err := client.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name,
		Labels: map[string]string{"node.orca.io/ingress": "true"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	// The node IPAM controller writes the node at the same moment.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		now := metav1.Now()
		node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}}
		node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: now, LastTransitionTime: now}}
		_, err = client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
