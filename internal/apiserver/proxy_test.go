package apiserver

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"

	"github.com/orca-project/orca/internal/auth/pki"
)

// echoBackend answers every request with its method, request URI and
// body, and /page with an HTML link for the proxy to rewrite.
func echoBackend(t *testing.T, tlsOn bool) (*httptest.Server, string) {
	t.Helper()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/page" {
			w.Header().Set("Content-Type", "text/html")
			_, _ = io.WriteString(w, `<a href="/rewriteme">test</a>`)
			return
		}
		b, _ := io.ReadAll(r.Body)
		_, _ = w.Write(append([]byte(r.Method+" "+r.URL.RequestURI()+" "), b...))
	})
	srv := httptest.NewUnstartedServer(h)
	if tlsOn {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv, srv.URL[strings.LastIndex(srv.URL, ":")+1:]
}

// rawClient sends requests with the API server's credentials and, unlike
// client-go's REST client, shows redirects instead of following them.
func rawClient(t *testing.T, cfg *rest.Config) *http.Client {
	t.Helper()
	tc, err := cfg.TransportConfig()
	if err != nil {
		t.Fatal(err)
	}
	rt, err := transport.New(tc)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Transport: rt, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// do sends one request and returns the answer's code, Location and body.
func do(t *testing.T, c *http.Client, method, u string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader("payload"))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Location"), string(b)
}

func (e *proxyEnv) createPodWithIP(t *testing.T, name, ip string, ports ...int32) {
	t.Helper()
	ctx := context.Background()
	c := corev1.Container{Name: "app", Image: "busybox"}
	for _, p := range ports {
		c.Ports = append(c.Ports, corev1.ContainerPort{ContainerPort: p})
	}
	p, err := e.client.CoreV1().Pods("default").Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "sidecar", Image: "busybox"}, c}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Status.PodIP = ip
	p.Status.PodIPs = []corev1.PodIP{{IP: ip}}
	if _, err := e.client.CoreV1().Pods("default").UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// pods/proxy passes any request to the pod's IP, at the port the name
// asks for or the first one a container declares, with the path after
// /proxy and the query, as upstream's PreStop spec reads its server pod;
// HTML links come back through the proxy.
func TestPodProxy(t *testing.T) {
	e := newProxyEnv(t)
	_, port := echoBackend(t, false)
	n, _ := strconv.Atoi(port)
	e.createPodWithIP(t, "server", "192.0.2.10", int32(n))
	ctx := context.Background()
	rc := e.client.CoreV1().RESTClient()
	got, err := rc.Get().Namespace("default").Resource("pods").Name("server").SubResource("proxy").Suffix("read").Param("x", "1").DoRaw(ctx)
	if err != nil || string(got) != "GET /read?x=1 " {
		t.Errorf("GET through the first declared port: %q, %v", got, err)
	}
	got, err = rc.Post().Namespace("default").Resource("pods").Name("server:" + port).SubResource("proxy").Suffix("write").Body([]byte(`{"Source":"prestop"}`)).DoRaw(ctx)
	if err != nil || string(got) != `POST /write {"Source":"prestop"}` {
		t.Errorf("POST with the port in the name: %q, %v", got, err)
	}
	c := rawClient(t, e.config)
	base := e.config.Host + "/api/v1/namespaces/default/pods/http:server:" + port + "/proxy"
	if code, _, body := do(t, c, "GET", base+"/page"); code != 200 || body != `<a href="/api/v1/namespaces/default/pods/http:server:`+port+`/proxy/rewriteme">test</a>` {
		t.Errorf("HTML link: %d %q", code, body)
	}
	// The bare .../proxy is redirected for GET and HEAD only, as the
	// conformance spec expects.
	for _, m := range []string{"GET", "HEAD"} {
		if code, loc, _ := do(t, c, m, base+"?method="+m); code != http.StatusMovedPermanently || loc != "/api/v1/namespaces/default/pods/http:server:"+port+"/proxy/?method="+m {
			t.Errorf("%s of the bare proxy: %d %q", m, code, loc)
		}
	}
	if code, _, body := do(t, c, "PUT", base+"?method=PUT"); code != 200 || body != "PUT /?method=PUT payload" {
		t.Errorf("PUT of the bare proxy: %d %q", code, body)
	}
	// A pod without an IP cannot be reached; a malformed name is refused.
	podsURL := e.config.Host + "/api/v1/namespaces/default/pods/"
	if code, _, body := do(t, c, "GET", podsURL+"web/proxy/"); code != 400 || !strings.Contains(body, "address not allowed") {
		t.Errorf("pod without an IP: %d %s", code, body)
	}
	if code, _, body := do(t, c, "GET", podsURL+"ftp:server:21/proxy/"); code != 400 || !strings.Contains(body, `invalid pod request \"ftp:server:21\"`) {
		t.Errorf("unknown scheme: %d %s", code, body)
	}
}

// services/proxy reaches a ready endpoint of the service that is a pod's
// address, by port name, by port number, or the service's only port,
// over http or https, with every method.
func TestServiceProxy(t *testing.T) {
	e := newProxyEnv(t)
	ctx := context.Background()
	_, httpPort := echoBackend(t, false)
	_, tlsPort := echoBackend(t, true)
	e.createPodWithIP(t, "backend", "192.0.2.10")
	e.createPodWithIP(t, "elsewhere", "192.0.2.11")

	svcs := e.client.CoreV1().Services("default")
	for _, svc := range []*corev1.Service{
		{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{
			{Name: "http", Port: 80, TargetPort: intstr.FromString("dest")},
			{Name: "tls", Port: 443, TargetPort: intstr.FromInt32(8443)},
		}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "single"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "unready"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}},
	} {
		if _, err := svcs.Create(ctx, svc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pod := func(name string) *corev1.ObjectReference {
		return &corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: name}
	}
	no := false
	// Only the last endpoint of each slice may be used: the others are
	// not ready, name no pod, or name a pod with another address.
	decoys := []discoveryv1.Endpoint{
		{Addresses: []string{"192.0.2.10"}, TargetRef: pod("backend"), Conditions: discoveryv1.EndpointConditions{Ready: &no}},
		{Addresses: []string{"192.0.2.10"}},
		{Addresses: []string{"192.0.2.10"}, TargetRef: pod("elsewhere")},
		{Addresses: []string{"192.0.2.10"}, TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: "other", Name: "backend"}},
	}
	good := discoveryv1.Endpoint{Addresses: []string{"192.0.2.10"}, TargetRef: pod("backend")}
	// The watch cache applies writes in order: once the last slice is
	// seen, all are.
	slices := []*discoveryv1.EndpointSlice{
		endpointSlice("web-tls", "web", []discoveryv1.Endpoint{good}, discoveryv1.EndpointPort{Name: ptrTo("tls"), Port: ptrTo(int32(atoi(tlsPort)))}),
		endpointSlice("single", "single", []discoveryv1.Endpoint{good}, discoveryv1.EndpointPort{Name: ptrTo(""), Port: ptrTo(int32(atoi(httpPort)))}),
		endpointSlice("unready", "unready", decoys, discoveryv1.EndpointPort{Name: ptrTo(""), Port: ptrTo(int32(atoi(httpPort)))}),
		endpointSlice("web-http", "web", append(decoys, good), discoveryv1.EndpointPort{Name: ptrTo("http"), Port: ptrTo(int32(atoi(httpPort)))}),
	}
	for _, sl := range slices {
		if _, err := e.client.DiscoveryV1().EndpointSlices("default").Create(ctx, sl, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	c := rawClient(t, e.config)
	svcURL := func(id string) string { return e.config.Host + "/api/v1/namespaces/default/services/" + id + "/proxy" }
	eventually(t, func() bool {
		code, _, _ := do(t, c, "GET", svcURL("web:http")+"/")
		return code == 200
	})
	for _, id := range []string{"web:http", "http:web:http", "web:80", "single", "single:80"} {
		// The endpoint is picked from a random offset: whichever decoy
		// comes first, the request still reaches the good one.
		for i := 0; i < 20; i++ {
			if code, _, body := do(t, c, "GET", svcURL(id)+"/a/b/?x=1"); code != 200 || body != "GET /a/b/?x=1 payload" {
				t.Fatalf("%s: %d %q", id, code, body)
			}
		}
	}
	if code, _, body := do(t, c, "GET", svcURL("https:web:tls")+"/secure"); code != 200 || body != "GET /secure payload" {
		t.Errorf("https: %d %q", code, body)
	}
	for _, m := range []string{"DELETE", "OPTIONS", "PATCH", "POST", "PUT"} {
		if code, _, body := do(t, c, m, svcURL("web:http")+"?method="+m); code != 200 || body != m+" /?method="+m+" payload" {
			t.Errorf("%s: %d %q", m, code, body)
		}
		if code, _, body := do(t, c, m, svcURL("web:http")+"/some/path/with/"+m); code != 200 || body != m+" /some/path/with/"+m+" payload" {
			t.Errorf("%s with a path: %d %q", m, code, body)
		}
	}
	if code, loc, _ := do(t, c, "GET", svcURL("web:http")+"?method=GET"); code != http.StatusMovedPermanently || loc != "/api/v1/namespaces/default/services/web:http/proxy/?method=GET" {
		t.Errorf("GET of the bare proxy: %d %q", code, loc)
	}
	if code, _, _ := do(t, c, "HEAD", svcURL("web:http")+"/"); code != 200 {
		t.Errorf("HEAD: %d", code)
	}
	if code, _, body := do(t, c, "GET", svcURL("web:http")+"/page"); code != 200 || body != `<a href="/api/v1/namespaces/default/services/web:http/proxy/rewriteme">test</a>` {
		t.Errorf("HTML link: %d %q", code, body)
	}

	errs := []struct {
		id   string
		code int
		msg  string
	}{
		{"web:81", 503, `no service port 81 found for service \"web\"`},
		{"unready", 503, `no endpoints available for service \"unready\"`},
		{"web:nope", 503, `no endpoints available for service \"web\"`},
		{"missing", 503, `no endpoints available for service \"missing\"`},
		{"missing:80", 404, `services \"missing\" not found`},
		{"ftp:web:80", 400, `invalid service request \"ftp:web:80\"`},
	}
	for _, want := range errs {
		if code, _, body := do(t, c, "GET", svcURL(want.id)+"/"); code != want.code || !strings.Contains(body, want.msg) {
			t.Errorf("%s: %d %s, want %d with %s", want.id, code, body, want.code, want.msg)
		}
	}
}

func endpointSlice(name, service string, eps []discoveryv1.Endpoint, port discoveryv1.EndpointPort) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: name, Labels: map[string]string{discoveryv1.LabelServiceName: service}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   eps,
		Ports:       []discoveryv1.EndpointPort{port},
	}
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// eventually waits for the watch caches to see what a test wrote.
func eventually(t *testing.T, ok func() bool) {
	t.Helper()
	for i := 0; i < 100; i++ {
		if ok() {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("condition not met in 5s")
}

// nodes/proxy reaches the node's kubelet over https with the API
// server's kubelet client certificate, at the kubelet's port whether or
// not the name gives it, and any other port of the node without it.
func TestNodeProxy(t *testing.T) {
	e := newProxyEnv(t)
	kubeletCert, err := pki.LoadOrIssue(t.TempDir(), "kubelet", e.ca, pki.LeafSpec{CommonName: "node-2", IPs: []net.IP{net.ParseIP("127.0.0.1")}, Server: true})
	if err != nil {
		t.Fatal(err)
	}
	kubelet := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, r.TLS.PeerCertificates[0].Subject.CommonName+" "+r.Method+" "+r.URL.RequestURI())
	}))
	kubelet.TLS = &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{kubeletCert.Cert.Raw}, PrivateKey: kubeletCert.Key}},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    e.caPool,
	}
	kubelet.StartTLS()
	defer kubelet.Close()
	kubeletPort := kubelet.URL[strings.LastIndex(kubelet.URL, ":")+1:]
	e.createNode(t, "node-2", int32(atoi(kubeletPort)))
	_, otherPort := echoBackend(t, false)

	c := rawClient(t, e.config)
	nodeURL := func(id string) string { return e.config.Host + "/api/v1/nodes/" + id + "/proxy" }
	cases := []struct {
		method, url string
		code        int
		body        string
	}{
		{"GET", nodeURL("node-2") + "/logs/", 200, "kube-apiserver-kubelet-client GET /logs/"},
		{"GET", nodeURL("node-2:"+kubeletPort) + "/logs/", 200, "kube-apiserver-kubelet-client GET /logs/"},
		{"POST", nodeURL("node-2") + "/pods?x=1", 200, "kube-apiserver-kubelet-client POST /pods?x=1"},
		{"GET", nodeURL("node-2:"+otherPort) + "/metrics", 200, "GET /metrics payload"},
		{"GET", nodeURL("nope") + "/", 404, `nodes \"nope\" not found`},
		{"GET", nodeURL("ftp:node-2:21") + "/", 400, `invalid node request \"ftp:node-2:21\"`},
	}
	for _, want := range cases {
		if code, _, body := do(t, c, want.method, want.url); code != want.code || !strings.Contains(body, want.body) {
			t.Errorf("%s %s: %d %q, want %d with %q", want.method, want.url, code, body, want.code, want.body)
		}
	}
}

// The proxy subresources only reach global unicast addresses, as
// upstream's: loopback and link-local ones are the API server's own.
func TestProxyAddressChecks(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Ports: []corev1.ContainerPort{{ContainerPort: 8080}}}}}}
	podCases := []struct {
		ips    []string
		scheme string
		port   string
		want   string
	}{
		{[]string{"10.42.0.7"}, "", "", "//10.42.0.7:8080"},
		{[]string{"10.42.0.7", "fd00::7"}, "https", "443", "https://10.42.0.7:443"},
		{[]string{"fd00::7"}, "", "81", "//[fd00::7]:81"},
		{[]string{"127.0.0.1"}, "", "", "address not allowed"},
		{[]string{"169.254.169.254"}, "", "80", "address not allowed"},
		{nil, "", "", "address not allowed"},
	}
	for _, c := range podCases {
		p := pod.DeepCopy()
		for _, ip := range c.ips {
			p.Status.PodIPs = append(p.Status.PodIPs, corev1.PodIP{IP: ip})
		}
		loc, err := podLocation(p, c.scheme, c.port, proxyableIP)
		if got := locOrErr(loc, err); got != c.want {
			t.Errorf("pod %v %s:%s: got %s, want %s", c.ips, c.scheme, c.port, got, c.want)
		}
	}

	node := &corev1.Node{Status: corev1.NodeStatus{
		Addresses:       []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: "n1"}, {Type: corev1.NodeInternalIP, Address: "192.0.2.5"}},
		DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 10250}},
	}}
	nodeCases := []struct {
		scheme, port string
		want         string
		kubelet      bool
	}{
		{"", "", "https://192.0.2.5:10250", true},
		{"", "10250", "https://192.0.2.5:10250", true},
		{"http", "10250", "https://192.0.2.5:10250", true},
		{"", "4194", "//192.0.2.5:4194", false},
		{"https", "9100", "https://192.0.2.5:9100", false},
	}
	for _, c := range nodeCases {
		loc, kubelet, err := nodeLocation(node, c.scheme, c.port)
		if got := locOrErr(loc, err); got != c.want || kubelet != c.kubelet {
			t.Errorf("node %s:%s: got %s (kubelet %v), want %s (kubelet %v)", c.scheme, c.port, got, kubelet, c.want, c.kubelet)
		}
	}

	s := &Server{proxyable: proxyableIP}
	for host, want := range map[string]string{"192.0.2.5": "", "127.0.0.1": "address not allowed", "localhost": "address not allowed", "fe80::1": "address not allowed"} {
		err := s.checkProxyableHost(context.Background(), host)
		if got := locOrErr(nil, err); got != want {
			t.Errorf("host %s: got %q, want %q", host, got, want)
		}
	}
}

func locOrErr(loc *url.URL, err error) string {
	if err != nil {
		return err.Error()
	}
	if loc == nil {
		return ""
	}
	return loc.String()
}
