package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// webPod serves its own name as index.html, and is ready while
// /tmp/www/ready exists.
func webPod(ns, name string) *v1.Pod {
	p := simplePod(ns, name, "mkdir -p /tmp/www; hostname > /tmp/www/index.html; touch /tmp/www/ready; exec httpd -f -p 8080 -h /tmp/www")
	p.Labels = map[string]string{"app": "web"}
	p.Spec.Containers[0].Ports = []v1.ContainerPort{{Name: "http", ContainerPort: 8080}}
	p.Spec.Containers[0].ReadinessProbe = &v1.Probe{
		ProbeHandler:  v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Path: "/ready", Port: intstr.FromInt32(8080)}},
		PeriodSeconds: 1, FailureThreshold: 1,
	}
	return p
}

func createService(t *testing.T, ns, name string, mod func(*v1.Service)) *v1.Service {
	t.Helper()
	svc := &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1.ServiceSpec{Selector: map[string]string{"app": "web"},
			Ports: []v1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http")}}},
	}
	if mod != nil {
		mod(svc)
	}
	out, err := client.CoreV1().Services(ns).Create(context.Background(), svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create service %s: %v", name, err)
	}
	return out
}

// fetchFrom runs n wgets of url in pod and returns the answers; a failed
// request answers "ERR".
func fetchFrom(t *testing.T, ns, pod, url string, n int) []string {
	t.Helper()
	// Not wget -T: busybox 1.35's wget crashes with it on a refused
	// connection.
	script := fmt.Sprintf("for i in $(seq %d); do timeout 2 wget -qO- %s || echo ERR; done", n, url)
	out := kubectlOK(t, "", "exec", pod, "-n", ns, "--", "sh", "-c", script)
	return strings.Fields(out)
}

func count(answers []string) map[string]int {
	m := map[string]int{}
	for _, a := range answers {
		m[a]++
	}
	return m
}

// webBackends starts two web pods and a client pod, and waits for them.
func webBackends(t *testing.T, ns string) {
	t.Helper()
	createPod(t, webPod(ns, "web-0"))
	createPod(t, webPod(ns, "web-1"))
	createPod(t, simplePod(ns, "client", "exec sleep 3600"))
	for _, name := range []string{"web-0", "web-1"} {
		waitPod(t, ns, name, time.Minute, "Ready", ready)
	}
	waitPod(t, ns, "client", time.Minute, "Running", running)
}

// waitReadyEndpoints waits until the service's slices list n ready
// endpoints.
func waitReadyEndpoints(t *testing.T, ns, svc string, n int) {
	t.Helper()
	eventually(t, 30*time.Second, func() error {
		l, err := client.DiscoveryV1().EndpointSlices(ns).List(context.Background(), metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + svc})
		if err != nil {
			return err
		}
		got := 0
		for _, sl := range l.Items {
			for _, e := range sl.Endpoints {
				if e.Conditions.Ready != nil && *e.Conditions.Ready {
					got++
				}
			}
		}
		if got != n {
			return fmt.Errorf("%d ready endpoints, want %d", got, n)
		}
		return nil
	})
}

// TestServiceClusterIPAndNodePort: a service's cluster IP and node port
// reach every ready replica, from a pod and from the host; a replica
// reaches itself through its service (hairpin); and a replica turning
// unready stops getting new connections at once.
func TestServiceClusterIPAndNodePort(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	svc := createService(t, ns, "web", func(s *v1.Service) { s.Spec.Type = v1.ServiceTypeNodePort })
	webBackends(t, ns)
	waitReadyEndpoints(t, ns, "web", 2)
	url := "http://" + svc.Spec.ClusterIP + "/"

	var answers map[string]int
	eventually(t, 10*time.Second, func() error {
		answers = count(fetchFrom(t, ns, "client", url, 20))
		if answers["web-0"]+answers["web-1"] != 20 || answers["web-0"] == 0 || answers["web-1"] == 0 {
			return fmt.Errorf("answers through the cluster IP: %v, want both replicas and no failure", answers)
		}
		return nil
	})

	// From the host: the cluster IP, and the node port on the node's
	// address (not on localhost, as upstream's nftables mode).
	body, err := httpGet(url)
	if err != nil || (body != "web-0" && body != "web-1") {
		t.Errorf("cluster IP from the host: %q, %v", body, err)
	}
	node, err := client.CoreV1().Nodes().Get(context.Background(), nodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	nodeIP := ""
	for _, a := range node.Status.Addresses {
		if a.Type == v1.NodeInternalIP {
			nodeIP = a.Address
		}
	}
	if ip := net.ParseIP(nodeIP); ip == nil || ip.IsLoopback() {
		t.Logf("node address %q: NodePort not checked (no NodePorts on localhost)", nodeIP)
	} else {
		np := "http://" + net.JoinHostPort(nodeIP, strconv.Itoa(int(svc.Spec.Ports[0].NodePort))) + "/"
		if body, err := httpGet(np); err != nil || (body != "web-0" && body != "web-1") {
			t.Errorf("node port %s from the host: %q, %v", np, body, err)
		}
		if a := count(fetchFrom(t, ns, "client", np, 4)); a["ERR"] > 0 {
			t.Errorf("node port %s from a pod: %v", np, a)
		}
	}

	// Hairpin: every request a replica sends to its own service succeeds,
	// the ones that come back to itself included.
	if a := count(fetchFrom(t, ns, "web-0", url, 20)); a["ERR"] > 0 || a["web-0"] == 0 {
		t.Errorf("web-0 through its own service: %v, want answers from itself and no failure", a)
	}

	// Unready: once its endpoint is marked not ready, web-1 gets no new
	// connection within 2 s.
	kubectlOK(t, "", "exec", "web-1", "-n", ns, "--", "rm", "/tmp/www/ready")
	waitReadyEndpoints(t, ns, "web", 1)
	deadline := time.Now().Add(2 * time.Second)
	for {
		a := count(fetchFrom(t, ns, "client", url, 10))
		if a["web-1"] == 0 && a["web-0"] == 10 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("2 s after web-1 turned unready: %v", a)
		}
	}
}

// TestServiceWithoutEndpointsRefused: a service without endpoints refuses
// connections at once instead of letting them time out.
func TestServiceWithoutEndpointsRefused(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	svc := createService(t, ns, "nothing", func(s *v1.Service) { s.Spec.Selector = map[string]string{"app": "none"} })
	createPod(t, simplePod(ns, "client", "exec sleep 3600"))
	waitPod(t, ns, "client", time.Minute, "Running", running)
	addr := net.JoinHostPort(svc.Spec.ClusterIP, "80")
	eventually(t, 10*time.Second, func() error {
		start := time.Now()
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err == nil {
			c.Close()
			return fmt.Errorf("connected to %s", addr)
		}
		if took := time.Since(start); took > 500*time.Millisecond || !strings.Contains(err.Error(), "refused") {
			return fmt.Errorf("from the host after %v: %v, want refused at once", took, err)
		}
		return nil
	})
	// From a pod: wget fails well before its 5 s timeout.
	start := time.Now()
	res := runKubectl(t, nil, "", "exec", "client", "-n", ns, "--", "timeout", "5", "wget", "-qO-", "http://"+addr+"/")
	if took := time.Since(start); res.Code == 0 || took > 3*time.Second {
		t.Errorf("wget from a pod: exit %d after %v (%s), want a failure at once", res.Code, took, res.Stderr)
	}
	if !strings.Contains(res.Stderr, "refused") {
		t.Errorf("wget from a pod: %q, want connection refused", res.Stderr)
	}
}

// TestServiceSessionAffinity: with ClientIP affinity every request of a
// client goes to the same replica.
func TestServiceSessionAffinity(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	svc := createService(t, ns, "sticky", func(s *v1.Service) { s.Spec.SessionAffinity = v1.ServiceAffinityClientIP })
	webBackends(t, ns)
	waitReadyEndpoints(t, ns, "sticky", 2)
	eventually(t, 10*time.Second, func() error {
		a := count(fetchFrom(t, ns, "client", "http://"+svc.Spec.ClusterIP+"/", 20))
		if len(a) != 1 || a["ERR"] > 0 {
			return fmt.Errorf("answers with ClientIP affinity: %v, want one replica only", a)
		}
		return nil
	})
}

func httpGet(url string) (string, error) {
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return strings.TrimSpace(string(b)), err
}

// TestServiceLoadBalancerLocal: a LoadBalancer service with
// externalTrafficPolicy Local answers on its ingress IP (from a pod, which
// the rules short-circuit to every endpoint), and the proxy serves its
// health-check node port: 200 with the local endpoint count, 503 when none
// is ready.
func TestServiceLoadBalancerLocal(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	svc := createService(t, ns, "lb", func(s *v1.Service) {
		s.Spec.Type = v1.ServiceTypeLoadBalancer
		s.Spec.ExternalTrafficPolicy = v1.ServiceExternalTrafficPolicyLocal
		// A class of the test's own: no load-balancer controller of the
		// cluster writes this service's status.
		class := "e2e.orca.test/manual"
		s.Spec.LoadBalancerClass = &class
	})
	if svc.Spec.HealthCheckNodePort == 0 {
		t.Fatal("no healthCheckNodePort allocated")
	}
	const lbIP = "192.0.2.77"
	eventually(t, 10*time.Second, func() error {
		cur, err := client.CoreV1().Services(ns).Get(context.Background(), "lb", metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Status.LoadBalancer.Ingress = []v1.LoadBalancerIngress{{IP: lbIP}}
		_, err = client.CoreV1().Services(ns).UpdateStatus(context.Background(), cur, metav1.UpdateOptions{})
		return err
	})
	webBackends(t, ns)
	waitReadyEndpoints(t, ns, "lb", 2)

	eventually(t, 10*time.Second, func() error {
		a := count(fetchFrom(t, ns, "client", "http://"+lbIP+"/", 10))
		if a["web-0"]+a["web-1"] != 10 {
			return fmt.Errorf("answers through the load-balancer IP: %v", a)
		}
		return nil
	})

	hc := "http://127.0.0.1:" + strconv.Itoa(int(svc.Spec.HealthCheckNodePort)) + "/"
	check := func(wantCode, wantEndpoints int) func() error {
		return func() error {
			resp, err := http.Get(hc)
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			want := fmt.Sprintf("{\n\t\"service\": {\n\t\t\"namespace\": %q,\n\t\t\"name\": \"lb\"\n\t},\n\t\"localEndpoints\": %d,\n\t\"serviceProxyHealthy\": true\n}", ns, wantEndpoints)
			if resp.StatusCode != wantCode || string(b) != want || resp.Header.Get("Content-Type") != "application/json" {
				return fmt.Errorf("health check: %d %q, want %d %q", resp.StatusCode, b, wantCode, want)
			}
			return nil
		}
	}
	eventually(t, 10*time.Second, check(200, 2))
	for _, p := range []string{"web-0", "web-1"} {
		kubectlOK(t, "", "exec", p, "-n", ns, "--", "rm", "/tmp/www/ready")
	}
	eventually(t, 30*time.Second, check(503, 0))
}
