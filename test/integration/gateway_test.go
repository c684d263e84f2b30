package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
)

func condStatus(conds []metav1.Condition, t string) string {
	for _, c := range conds {
		if c.Type == t {
			return string(c.Status) + "/" + c.Reason
		}
	}
	return "none"
}

// TestGatewayAPI: the server installs the Gateway API's standard CRDs and
// the GatewayClass orca, which its controller accepts; a Gateway of the
// class is accepted and, once the ingress has an address, programmed,
// with its listeners' status; an HTTPRoute attached to it is accepted,
// and its missing backend is reported; kubectl shows all of it.
func TestGatewayAPI(t *testing.T) {
	ctx := context.Background()
	gw := gwclient.NewForConfigOrDie(restCfg)
	eventually(t, time.Minute, func() error {
		c, err := gw.GatewayV1().GatewayClasses().Get(ctx, "orca", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if got := condStatus(c.Status.Conditions, "Accepted"); got != "True/Accepted" || len(c.Status.SupportedFeatures) == 0 {
			return fmt.Errorf("GatewayClass orca: Accepted %s, %d features", got, len(c.Status.SupportedFeatures))
		}
		return nil
	})
	for _, crd := range []string{"gateways", "httproutes", "referencegrants", "grpcroutes"} {
		out := mustKubectl(t, "", "get", "crd", crd+".gateway.networking.k8s.io", "-o", "jsonpath={.metadata.annotations.gateway\\.networking\\.k8s\\.io/bundle-version}")
		if !strings.HasPrefix(out, "v1.") {
			t.Errorf("CRD %s: bundle version %q", crd, out)
		}
	}

	// A node of the ingress, so that the Gateway gets an address.
	ingressNode(t, "gateway-node", "192.0.2.78")

	ns := admissionNamespace(t, "gateway")
	mustKubectl(t, `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: web
spec:
  gatewayClassName: orca
  listeners:
  - {name: http, protocol: HTTP, port: 80}
  - {name: elsewhere, protocol: HTTP, port: 8080}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: site
spec:
  parentRefs:
  - {name: web, sectionName: http}
  hostnames: [site.example]
  rules:
  - backendRefs:
    - {name: missing, port: 80}
`, "-n", ns, "apply", "-f", "-")
	eventually(t, time.Minute, func() error {
		g, err := gw.GatewayV1().Gateways(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if got := condStatus(g.Status.Conditions, "Programmed"); got != "True/Programmed" {
			return fmt.Errorf("Gateway Programmed %s (Accepted %s)", got, condStatus(g.Status.Conditions, "Accepted"))
		}
		if got := condStatus(g.Status.Conditions, "Accepted"); got != "True/ListenersNotValid" {
			return fmt.Errorf("Gateway Accepted %s", got)
		}
		if len(g.Status.Listeners) != 2 || g.Status.Listeners[0].AttachedRoutes != 1 ||
			condStatus(g.Status.Listeners[1].Conditions, "Accepted") != "False/PortUnavailable" {
			return fmt.Errorf("listeners %+v", g.Status.Listeners)
		}
		found := false
		for _, a := range g.Status.Addresses {
			found = found || a.Value == "192.0.2.78"
		}
		if !found {
			return fmt.Errorf("addresses %v lack the ingress node's", g.Status.Addresses)
		}
		return nil
	})
	eventually(t, time.Minute, func() error {
		r, err := gw.GatewayV1().HTTPRoutes(ns).Get(ctx, "site", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(r.Status.Parents) != 1 || r.Status.Parents[0].ControllerName != gwv1.GatewayController("orca.io/gateway-controller") ||
			condStatus(r.Status.Parents[0].Conditions, "Accepted") != "True/Accepted" ||
			condStatus(r.Status.Parents[0].Conditions, "ResolvedRefs") != "False/BackendNotFound" {
			return fmt.Errorf("route parents %+v", r.Status.Parents)
		}
		return nil
	})
	out := mustKubectl(t, "", "-n", ns, "get", "gateway", "web", "--no-headers")
	if f := strings.Fields(out); len(f) < 4 || f[1] != "orca" || f[3] != "True" {
		t.Errorf("kubectl get gateway: %q, want class orca and PROGRAMMED True", out)
	}

	// The Gateway's own address: its Service's cluster IP, first in its
	// status, leading to the ingress node on the listener's port alone.
	cs := client
	eventually(t, time.Minute, func() error {
		svc, err := cs.CoreV1().Services(ns).Get(ctx, "orca-gateway-web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 80 || svc.Spec.InternalTrafficPolicy == nil ||
			*svc.Spec.InternalTrafficPolicy != corev1.ServiceInternalTrafficPolicyLocal || svc.OwnerReferences[0].Kind != "Gateway" {
			return fmt.Errorf("gateway service %+v", svc.Spec)
		}
		sl, err := cs.DiscoveryV1().EndpointSlices(ns).Get(ctx, "orca-gateway-web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(sl.Endpoints) != 1 || sl.Endpoints[0].Addresses[0] != "192.0.2.78" || len(sl.Ports) != 1 || *sl.Ports[0].Port != 80 {
			return fmt.Errorf("gateway slice %+v %+v", sl.Endpoints, sl.Ports)
		}
		g, err := gw.GatewayV1().Gateways(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(g.Status.Addresses) < 2 || g.Status.Addresses[0].Value != svc.Spec.ClusterIP {
			return fmt.Errorf("addresses %v, want the cluster IP %s first", g.Status.Addresses, svc.Spec.ClusterIP)
		}
		return nil
	})
	// It goes with the Gateway.
	mustKubectl(t, "", "-n", ns, "delete", "gateway", "web")
	eventually(t, time.Minute, func() error {
		if _, err := cs.CoreV1().Services(ns).Get(ctx, "orca-gateway-web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("gateway service after the Gateway's deletion: %v", err)
		}
		return nil
	})
}
