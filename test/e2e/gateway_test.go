package e2e

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
)

// TestGatewayAPIRoutes: a Gateway of the class orca and an HTTPRoute
// attached to it route real requests on every node: by path and header,
// split by weight between two Services, with a request header set on
// the way in and a response header on the way out, and a redirect; the
// route's status says it is accepted by Orca's controller.
func TestGatewayAPIRoutes(t *testing.T) {
	nodes := needNodes(t, 3)
	importEcho(t, nodes)
	ns := namespace(t)
	recipeDump(t, ns)
	ctx := context.Background()
	for i, app := range []string{"blue", "green"} {
		createPod(t, echoPod(ns, app+"-0", nodes[i+1], app))
		echoService(t, ns, app)
		waitReadyEndpoints(t, ns, app, 1)
	}
	kubectlOK(t, `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: web
spec:
  gatewayClassName: orca
  listeners:
  - {name: http, protocol: HTTP, port: 80, hostname: "*.gw.example"}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: site
spec:
  parentRefs: [{name: web}]
  hostnames: [shop.gw.example]
  rules:
  - matches: [{path: {type: PathPrefix, value: /}}]
    backendRefs:
    - {name: blue, port: 80, weight: 80}
    - {name: green, port: 80, weight: 20}
  - matches: [{path: {type: PathPrefix, value: /green}, headers: [{name: env, value: canary}]}]
    filters:
    - type: RequestHeaderModifier
      requestHeaderModifier: {set: [{name: x-route, value: canary}]}
    - type: ResponseHeaderModifier
      responseHeaderModifier: {add: [{name: x-served-by, value: orca}]}
    backendRefs: [{name: green, port: 80}]
  - matches: [{path: {type: Exact, value: /old}}]
    filters:
    - type: RequestRedirect
      requestRedirect: {path: {type: ReplaceFullPath, replaceFullPath: /new}, statusCode: 301}
`, "-n", ns, "apply", "-f", "-")

	cfg, err := clientcmd.BuildConfigFromFlags("", inst.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	gw := gwclient.NewForConfigOrDie(cfg)
	eventually(t, time.Minute, func() error {
		r, err := gw.GatewayV1().HTTPRoutes(ns).Get(ctx, "site", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(r.Status.Parents) != 1 || condStatusOf(r.Status.Parents[0].Conditions, "Accepted") != "True" {
			return fmt.Errorf("route parents %+v", r.Status.Parents)
		}
		return nil
	})

	ips := nodeIPs(t, nodes)
	for i, ip := range ips {
		c := ingressClient(ip, nil)
		eventually(t, 30*time.Second, func() error {
			code, a, err := ask(c, "http://shop.gw.example/green/x")
			if err != nil || code != 200 || a.Pod != "blue-0" && a.Pod != "green-0" {
				return fmt.Errorf("node %s: %d %q %v", nodes[i], code, a.Pod, err)
			}
			return nil
		})
		req, _ := http.NewRequest("GET", "http://shop.gw.example/green/x", nil)
		req.Header.Set("env", "canary")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var a echoAnswer
		_ = decodeJSON(resp, &a)
		if a.Pod != "green-0" || a.header("X-Route") != "canary" || resp.Header.Get("X-Served-By") != "orca" {
			t.Errorf("node %s: the canary rule: pod %q, x-route %q, x-served-by %q", nodes[i], a.Pod, a.header("X-Route"), resp.Header.Get("X-Served-By"))
		}
		resp, err = c.Get("http://shop.gw.example/old?q=1")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if loc := resp.Header.Get("Location"); resp.StatusCode != 301 || loc != "http://shop.gw.example/new?q=1" {
			t.Errorf("node %s: redirect %d to %q", nodes[i], resp.StatusCode, loc)
		}
		if code, _, err := ask(c, "http://other.example/"); err != nil || code != 404 {
			t.Errorf("node %s: a host no listener takes: %d %v, want 404", nodes[i], code, err)
		}
	}

	// The weights: 80/20 over 500 requests, within 4.5 standard
	// deviations.
	c := ingressClient(ips[0], nil)
	got := map[string]int{}
	for range 500 {
		if _, a, err := ask(c, "http://shop.gw.example/"); err == nil {
			got[a.Pod]++
		}
	}
	t.Logf("weighted split over 500 requests: %v", got)
	if got["green-0"] < 100-40 || got["green-0"] > 100+40 || got["blue-0"]+got["green-0"] != 500 {
		t.Errorf("weighted split %v, want about 400 blue and 100 green", got)
	}

	// A second Gateway routes the same host elsewhere. On the nodes'
	// addresses the older route keeps the host; on each Gateway's own
	// address (its Service's cluster IP) its own route serves. Age goes
	// by creation time, which has whole seconds, and ties go to the
	// first name in alphabetical order (other before web, shop-elsewhere
	// before site), as the specification asks: the second pair must be
	// created in a later second to be the younger.
	site, err := gw.GatewayV1().HTTPRoutes(ns).Get(ctx, "site", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(site.CreationTimestamp.Add(1100 * time.Millisecond)))
	kubectlOK(t, `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: other
spec:
  gatewayClassName: orca
  listeners:
  - {name: http, protocol: HTTP, port: 80, hostname: "*.gw.example"}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: shop-elsewhere
spec:
  parentRefs: [{name: other}]
  hostnames: [shop.gw.example]
  rules:
  - backendRefs: [{name: green, port: 80}]
`, "-n", ns, "apply", "-f", "-")
	own := func(name string) string {
		var addr string
		eventually(t, time.Minute, func() error {
			g, err := gw.GatewayV1().Gateways(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			svc, err := client.CoreV1().Services(ns).Get(ctx, "orca-gateway-"+name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if len(g.Status.Addresses) == 0 || g.Status.Addresses[0].Value != svc.Spec.ClusterIP {
				return fmt.Errorf("gateway %s addresses %v, want its cluster IP %s first", name, g.Status.Addresses, svc.Spec.ClusterIP)
			}
			addr = svc.Spec.ClusterIP
			return nil
		})
		return addr
	}
	served := func(addr string) map[string]int {
		c := ingressClient(addr, nil)
		got := map[string]int{}
		eventually(t, 30*time.Second, func() error {
			code, a, err := ask(c, "http://shop.gw.example/")
			if err != nil || code != 200 {
				return fmt.Errorf("%s: %d %v", addr, code, err)
			}
			got[a.Pod]++
			return nil
		})
		for range 29 {
			if _, a, err := ask(c, "http://shop.gw.example/"); err == nil {
				got[a.Pod]++
			}
		}
		return got
	}
	webAddr, otherAddr := own("web"), own("other")
	eventually(t, 30*time.Second, func() error {
		if got := served(otherAddr); got["green-0"] != 30 {
			return fmt.Errorf("the second Gateway's own address served %v, want green-0 only", got)
		}
		return nil
	})
	// The nodes' tables follow the second pair within moments; a wrong
	// answer that lasts fails.
	eventually(t, 20*time.Second, func() error {
		if got := served(webAddr); got["blue-0"] == 0 || got["blue-0"]+got["green-0"] != 30 {
			t.Logf("the first Gateway's own address served %v", got)
			return fmt.Errorf("the first Gateway's own address served %v, want its 80/20 split", got)
		}
		if got := served(ips[0]); got["blue-0"] == 0 {
			t.Logf("the node's address served %v", got)
			return fmt.Errorf("the node's address served %v, want the older route's split", got)
		}
		return nil
	})
}

func condStatusOf(conds []metav1.Condition, t string) string {
	for _, c := range conds {
		if c.Type == t {
			return string(c.Status)
		}
	}
	return ""
}
