package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math"
	"math/big"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/websocket"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/orca-project/orca/internal/images"
)

// echoImage is testdata/echo: an HTTP server that answers with what it
// received, and echoes WebSocket messages.
const echoImage = "localhost/orca-test/echo:1"

// importEcho puts the echo image on every one of nodes.
func importEcho(t *testing.T, nodes []string) {
	t.Helper()
	tar, err := goImageTar("echo", echoImage)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		dir := nodeDir
		if n != nodeName {
			dir = extraNodeDir(n)
		}
		if _, err := images.Import(context.Background(), images.SocketPath(dir), tar); err != nil {
			t.Fatalf("import the echo server on %s: %v", n, err)
		}
	}
}

// echoAnswer is what the echo server says of a request.
type echoAnswer struct {
	Pod     string              `json:"pod"`
	Proto   string              `json:"proto"`
	Host    string              `json:"host"`
	Path    string              `json:"path"`
	Headers map[string][]string `json:"headers"`
}

func (a echoAnswer) header(name string) string {
	if v := a.Headers[http.CanonicalHeaderKey(name)]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// echoPod runs the echo server on node, labelled app=app.
func echoPod(ns, name, node, app string) *v1.Pod {
	grace := int64(1)
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": app}},
		Spec: v1.PodSpec{
			NodeName: node, TerminationGracePeriodSeconds: &grace,
			Tolerations: []v1.Toleration{{Key: extraNodeTaint.Key, Operator: v1.TolerationOpExists}},
			Containers: []v1.Container{{
				Name: "echo", Image: echoImage, ImagePullPolicy: v1.PullNever,
				Env:            []v1.EnvVar{{Name: "POD_NAME", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
				Ports:          []v1.ContainerPort{{Name: "http", ContainerPort: 8080}},
				ReadinessProbe: &v1.Probe{ProbeHandler: v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Path: "/ready", Port: intstr.FromString("http")}}, PeriodSeconds: 1},
			}},
		},
	}
}

// echoService is a Service on port 80 ("http") in front of app's pods.
func echoService(t *testing.T, ns, app string) {
	t.Helper()
	_, err := client.CoreV1().Services(ns).Create(context.Background(), &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: app, Namespace: ns},
		Spec: v1.ServiceSpec{Selector: map[string]string{"app": app},
			Ports: []v1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http")}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create service %s: %v", app, err)
	}
}

// nodeIPs are the InternalIPs of nodes, in order.
func nodeIPs(t *testing.T, nodes []string) []string {
	t.Helper()
	var out []string
	for _, n := range nodes {
		node, err := client.CoreV1().Nodes().Get(context.Background(), n, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range node.Status.Addresses {
			if a.Type == v1.NodeInternalIP {
				out = append(out, a.Address)
			}
		}
	}
	return out
}

// ingressClient sends requests to one address whatever their URL's host,
// as a client resolving the Ingress's host names to a node would.
func ingressClient(addr string, roots *x509.CertPool) *http.Client {
	dial := func(ctx context.Context, network, a string) (net.Conn, error) {
		_, port, _ := net.SplitHostPort(a)
		var d net.Dialer
		return d.DialContext(ctx, network, net.JoinHostPort(addr, port))
	}
	return &http.Client{
		Timeout: 10 * time.Second,
		Transport: &http.Transport{
			DialContext: dial, ForceAttemptHTTP2: true,
			TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// ask sends GET url through c and reads the echo server's answer; code
// is the status, and answer is empty for an answer that is not one.
func ask(c *http.Client, url string) (code int, a echoAnswer, err error) {
	resp, err := c.Get(url)
	if err != nil {
		return 0, a, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, a, err
	}
	if json.Unmarshal(body, &a) != nil {
		a = echoAnswer{}
	}
	a.Proto = resp.Proto
	return resp.StatusCode, a, nil
}

// selfSigned is a certificate and key for host, and a pool trusting it.
func selfSigned(t *testing.T, host string) (certPEM, keyPEM []byte, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: host}, DNSNames: []string{host},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), pool
}

const siteIngress = `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: site
spec:
  defaultBackend:
    service: {name: fallback, port: {number: 80}}
  tls:
  - hosts: [secure.example]
    secretName: secure-tls
  rules:
  - host: web.example
    http:
      paths:
      - {path: /app, pathType: Prefix, backend: {service: {name: app, port: {name: http}}}}
      - {path: /exact, pathType: Exact, backend: {service: {name: exact, port: {number: 80}}}}
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {name: http}}}}
  - host: "*.wild.example"
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: wild, port: {number: 80}}}}
  - host: secure.example
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: secure, port: {number: 80}}}}
  - host: empty.example
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: nobody, port: {number: 80}}}}
`

// TestIngress: the built-in ingress on three nodes routes by host
// (exact and wildcard) and path (Prefix and Exact, then the default
// backend) straight to ready pods on every node, says who asked in the
// X-Forwarded-* headers, serves TLS by SNI with HTTP/2, carries
// WebSockets, answers 503 for a Service without endpoints, follows an
// edit of the Ingress within a second or so without breaking a request
// in flight, and publishes the nodes' addresses in the status.
func TestIngress(t *testing.T) {
	nodes := needNodes(t, 3)
	needOutside(t)
	importEcho(t, nodes)
	ns := namespace(t)
	recipeDump(t, ns)
	ctx := context.Background()
	for i, n := range nodes {
		createPod(t, echoPod(ns, fmt.Sprintf("web-%d", i), n, "web"))
	}
	for i, app := range []string{"app", "exact", "wild", "fallback", "secure"} {
		createPod(t, echoPod(ns, app+"-0", nodes[i%len(nodes)], app))
	}
	for _, app := range []string{"web", "app", "exact", "wild", "fallback", "secure", "nobody"} {
		echoService(t, ns, app)
	}
	certPEM, keyPEM, roots := selfSigned(t, "secure.example")
	if _, err := client.CoreV1().Secrets(ns).Create(ctx, &v1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "secure-tls"}, Type: v1.SecretTypeTLS,
		Data: map[string][]byte{v1.TLSCertKey: certPEM, v1.TLSPrivateKeyKey: keyPEM},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, app := range []string{"web", "app", "exact", "wild", "fallback", "secure"} {
		want := 1
		if app == "web" {
			want = 3
		}
		waitReadyEndpoints(t, ns, app, want)
	}
	kubectlOK(t, siteIngress, "-n", ns, "apply", "-f", "-")

	ips := nodeIPs(t, nodes)
	// The default class took the Ingress, and the status names every
	// node's address (kubectl's ADDRESS column shows the first of them).
	eventually(t, time.Minute, func() error {
		ing, err := client.NetworkingV1().Ingresses(ns).Get(ctx, "site", metav1.GetOptions{})
		if err != nil {
			return err
		}
		have := map[string]bool{}
		for _, in := range ing.Status.LoadBalancer.Ingress {
			have[in.IP] = true
		}
		for _, ip := range ips {
			if !have[ip] {
				return fmt.Errorf("status %v lacks node address %s", ing.Status.LoadBalancer.Ingress, ip)
			}
		}
		return nil
	})
	out := kubectlOK(t, "", "-n", ns, "get", "ingress", "site", "--no-headers")
	if f := strings.Fields(out); len(f) < 5 || f[1] != "orca" || !strings.Contains(out, ips[0]) {
		t.Errorf("kubectl get ingress: %q, want class orca and the addresses", out)
	}

	cases := []struct{ url, wantPod string }{
		{"http://web.example/app/x", "app-0"},
		{"http://web.example/app", "app-0"},
		{"http://web.example/application", "web-"}, // Prefix is by path element
		{"http://web.example/exact", "exact-0"},
		{"http://web.example/exact/", "web-"}, // Exact is exact
		{"http://WEB.example/", "web-"},
		{"http://a.wild.example/", "wild-0"},
		{"http://a.b.wild.example/", "fallback-0"}, // a wildcard covers one label
		{"http://unknown.example/", "fallback-0"},
	}
	for i, ip := range ips {
		c := ingressClient(ip, roots)
		// The node's ingress has read the Ingress once a request for it
		// is answered by its backend.
		eventually(t, 30*time.Second, func() error {
			code, a, err := ask(c, "http://web.example/app/")
			if err != nil || code != 200 || a.Pod != "app-0" {
				return fmt.Errorf("node %s: %d %q %v", nodes[i], code, a.Pod, err)
			}
			return nil
		})
		for _, tc := range cases {
			code, a, err := ask(c, tc.url)
			if err != nil || code != 200 || !strings.HasPrefix(a.Pod, tc.wantPod) {
				t.Errorf("node %s: GET %s: %d from %q (%v), want 200 from %s", nodes[i], tc.url, code, a.Pod, err, tc.wantPod)
			}
		}
		// The client's address and the request as it arrived, from a
		// machine outside the cluster: a node's own requests to node
		// addresses go through its service proxy, masqueraded.
		body, err := outsideGet("http://"+ip+"/", "web.example")
		if err != nil {
			t.Fatal(err)
		}
		var a echoAnswer
		if err := json.Unmarshal([]byte(body), &a); err != nil {
			t.Fatalf("node %s: %q", nodes[i], body)
		}
		if a.Host != "web.example" || a.header("X-Forwarded-For") != outsideIP || a.header("X-Real-Ip") != outsideIP ||
			a.header("X-Forwarded-Proto") != "http" || a.header("X-Forwarded-Host") != "web.example" || a.header("X-Forwarded-Port") != "80" {
			t.Errorf("node %s: the backend saw host %q and headers %v; want the client's host and %s as X-Forwarded-For", nodes[i], a.Host, a.Headers, outsideIP)
		}
		if code, _, err := ask(c, "http://empty.example/"); err != nil || code != http.StatusServiceUnavailable {
			t.Errorf("node %s: a Service without endpoints: %d %v, want 503", nodes[i], code, err)
		}
	}

	// Every web pod, one per node, serves through any one node.
	c := ingressClient(ips[1], roots)
	seen := map[string]bool{}
	for range 60 {
		if _, a, err := ask(c, "http://web.example/"); err == nil {
			seen[a.Pod] = true
		}
	}
	if len(seen) != 3 {
		t.Errorf("through %s, web answered from %v; want its three pods", nodes[1], seen)
	}

	t.Run("TLS", func(t *testing.T) {
		for i, ip := range ips {
			code, a, err := ask(ingressClient(ip, roots), "https://secure.example/")
			if err != nil || code != 200 || a.Pod != "secure-0" {
				t.Fatalf("node %s: https://secure.example/: %d %q %v", nodes[i], code, a.Pod, err)
			}
			if a.Proto != "HTTP/2.0" || a.header("X-Forwarded-Proto") != "https" || a.header("X-Forwarded-Port") != "443" {
				t.Errorf("node %s: protocol %s, X-Forwarded-Proto %q, X-Forwarded-Port %q; want HTTP/2.0, https, 443", nodes[i], a.Proto, a.header("X-Forwarded-Proto"), a.header("X-Forwarded-Port"))
			}
		}
		// A name without a certificate fails the handshake rather than
		// presenting someone else's.
		if _, _, err := ask(ingressClient(ips[0], roots), "https://web.example/"); err == nil {
			t.Error("https://web.example/ (no certificate for it) succeeded")
		}
	})

	t.Run("WebSocket", func(t *testing.T) {
		cfg, err := websocket.NewConfig("ws://web.example/ws", "http://web.example/")
		if err != nil {
			t.Fatal(err)
		}
		conn, err := net.DialTimeout("tcp", net.JoinHostPort(ips[2], "80"), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		ws, err := websocket.NewClient(cfg, conn)
		if err != nil {
			t.Fatalf("WebSocket handshake through the ingress: %v", err)
		}
		defer ws.Close()
		_ = ws.SetDeadline(time.Now().Add(10 * time.Second))
		for _, msg := range []string{"hello", "again"} {
			if err := websocket.Message.Send(ws, msg); err != nil {
				t.Fatal(err)
			}
			var got string
			if err := websocket.Message.Receive(ws, &got); err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(got, "web-") || !strings.HasSuffix(got, ": "+msg) {
				t.Errorf("echo of %q: %q", msg, got)
			}
		}
	})

	t.Run("changes", func(t *testing.T) {
		c := ingressClient(ips[0], roots)
		// A slow request starts before the change and must finish.
		slow := make(chan error, 1)
		go func() {
			code, a, err := ask(c, "http://web.example/app/slow?sleep=3s")
			if err == nil && (code != 200 || a.Pod != "app-0") {
				err = fmt.Errorf("%d from %q", code, a.Pod)
			}
			slow <- err
		}()
		time.Sleep(500 * time.Millisecond)
		start := time.Now()
		kubectlOK(t, "", "-n", ns, "patch", "ingress", "site", "--type=json", "-p",
			`[{"op":"replace","path":"/spec/rules/0/http/paths/0/backend/service/name","value":"exact"}]`)
		eventually(t, 10*time.Second, func() error {
			if _, a, err := ask(c, "http://web.example/app/"); err != nil || a.Pod != "exact-0" {
				return fmt.Errorf("/app/ answered by %q (%v)", a.Pod, err)
			}
			return nil
		})
		t.Logf("routing followed the patch in %v", time.Since(start).Round(10*time.Millisecond))
		if err := <-slow; err != nil {
			t.Errorf("the request in flight during the change: %v", err)
		}
	})

	t.Run("warnings", func(t *testing.T) {
		kubectlOK(t, `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: broken
spec:
  rules:
  - host: broken.example
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: missing, port: {number: 80}}}}
`, "-n", ns, "apply", "-f", "-")
		eventually(t, 30*time.Second, func() error {
			out := kubectlOK(t, "", "-n", ns, "describe", "ingress", "broken")
			if !strings.Contains(out, "Routing") || !strings.Contains(out, "service "+ns+"/missing not found") {
				return fmt.Errorf("no Routing warning in:\n%s", out)
			}
			return nil
		})
	})
}

// The ingress canary recipe: path split first (only /canary/ reaches
// v2), then a weighted canary whose share over 1,000 requests must lie
// within a bound that a correct 10% split leaves less than once in a
// hundred thousand runs, then promotion.
func TestRecipeIngressCanary(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	recipeDump(t, ns)
	r := readRecipe(t, "ingress-canary.md")
	applyRecipe(t, r, ns, "Deployment/web-v1", "Service/web-v1", "Deployment/web-v2", "Service/web-v2", "Ingress/web")
	c := ingressClient(bridgeIP, nil)
	versions := func(path string, n int) map[string]int {
		got := map[string]int{}
		for range n {
			resp, err := c.Get("http://" + bridgeIP + path)
			if err != nil {
				got["ERR"]++
				continue
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if f := strings.Fields(string(body)); resp.StatusCode == 200 && len(f) > 0 {
				got[f[0]]++
			} else {
				got[fmt.Sprint(resp.StatusCode)]++
			}
		}
		return got
	}
	eventually(t, 30*time.Second, func() error {
		if got := versions("/canary/", 5); got["v2"] != 5 {
			return fmt.Errorf("/canary/: %v", got)
		}
		return nil
	})
	if got := versions("/", 100); got["v1"] != 100 {
		t.Errorf("/ by path split: %v, want only v1", got)
	}

	applyRecipe(t, r, ns, "Ingress/web-canary")
	eventually(t, 30*time.Second, func() error {
		if got := versions("/", 50); got["v2"] == 0 {
			return fmt.Errorf("no canary answer yet: %v", got)
		}
		return nil
	})
	const n, p = 1000, 0.10
	got := versions("/", n)
	if got["v1"]+got["v2"] != n {
		t.Fatalf("answers %v: want %d from v1 or v2", got, n)
	}
	// 4.5 standard deviations of the binomial count either side.
	sd := math.Sqrt(n * p * (1 - p))
	lo, hi := int(n*p-4.5*sd), int(math.Ceil(n*p+4.5*sd))
	t.Logf("weighted canary answered %d of %d (bounds %d..%d for a 10%% weight)", got["v2"], n, lo, hi)
	if got["v2"] < lo || got["v2"] > hi {
		t.Errorf("canary answered %d of %d: outside %d..%d for a 10%% weight", got["v2"], n, lo, hi)
	}
	if w := versions("/canary/", 20); w["v2"] != 20 {
		t.Errorf("/canary/ with the weighted canary: %v, want only v2", w)
	}

	// Promotion, as the recipe writes it.
	patch := r.command(t, "kubectl patch ingress web")
	arg := patchArg.FindStringSubmatch(patch)
	if arg == nil {
		t.Fatalf("no patch in %q", patch)
	}
	kubectlOK(t, "", "-n", ns, "patch", "ingress", "web", "--type=json", "-p", arg[1])
	runRecipeCommand(t, ns, r.command(t, "kubectl delete ingress web-canary"))
	runRecipeCommand(t, ns, r.command(t, "kubectl delete deployment web-v1"))
	eventually(t, 30*time.Second, func() error {
		if got := versions("/", 50); got["v2"] != 50 {
			return fmt.Errorf("after promotion: %v, want only v2", got)
		}
		return nil
	})
}

// decodeJSON reads resp's body as JSON into v and closes it.
func decodeJSON(resp *http.Response, v any) error {
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(v)
}
