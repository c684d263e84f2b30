package proxy

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orca-project/orca/internal/ingress/route"
)

// backend is a web server that names itself and echoes what it was sent.
func backend(t testing.TB, name string) (port int32) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") == "websocket" {
			// A minimal upgrade: answer 101, then echo the raw stream.
			hj, _ := w.(http.Hijacker)
			conn, rw, err := hj.Hijack()
			if err != nil {
				return
			}
			defer conn.Close()
			fmt.Fprint(rw, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
			rw.Flush()
			_, _ = io.Copy(conn, rw)
			return
		}
		fmt.Fprintf(w, "%s host=%s path=%s xff=%s proto=%s xhost=%s xport=%s", name, r.Host, r.URL.Path,
			r.Header.Get("X-Forwarded-For"), r.Header.Get("X-Forwarded-Proto"), r.Header.Get("X-Forwarded-Host"), r.Header.Get("X-Forwarded-Port"))
	}))
	t.Cleanup(srv.Close)
	_, p, _ := net.SplitHostPort(srv.Listener.Addr().String())
	n, _ := strconv.Atoi(p)
	return int32(n)
}

// service is a Service with one port, "http", and, given a target, a
// slice with one ready endpoint on 127.0.0.1 at that port.
func service(name string, target ...int32) svcSlice {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}}
	if len(target) == 0 {
		return svcSlice{svc: svc}
	}
	portName := "http"
	return svcSlice{svc: svc, sl: &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: name + "-x", Namespace: "default"},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: &portName, Port: &target[0]}},
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"127.0.0.1"}}},
	}}
}

func prefix() *networkingv1.PathType { p := networkingv1.PathTypePrefix; return &p }

func ingress(rules []networkingv1.IngressRule, tls []networkingv1.IngressTLS) *networkingv1.Ingress {
	class := "orca"
	return &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: networkingv1.IngressSpec{IngressClassName: &class, Rules: rules, TLS: tls}}
}

func rule(host, path, svc string) networkingv1.IngressRule {
	return networkingv1.IngressRule{Host: host, IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
		Paths: []networkingv1.HTTPIngressPath{{Path: path, PathType: prefix(), Backend: networkingv1.IngressBackend{
			Service: &networkingv1.IngressServiceBackend{Name: svc, Port: networkingv1.ServiceBackendPort{Name: "http"}}}}},
	}}}
}

// svcSlice is a Service and its EndpointSlice (nil for none).
type svcSlice struct {
	svc *corev1.Service
	sl  *discoveryv1.EndpointSlice
}

func table(t testing.TB, ings []*networkingv1.Ingress, secrets map[types.NamespacedName]*corev1.Secret, svcs ...svcSlice) *route.Table {
	t.Helper()
	in := route.Input{Class: "orca", Ingresses: ings, Services: map[types.NamespacedName]*corev1.Service{},
		Endpoints: map[types.NamespacedName][]*discoveryv1.EndpointSlice{}, Secrets: secrets}
	for _, s := range svcs {
		k := types.NamespacedName{Namespace: "default", Name: s.svc.Name}
		in.Services[k] = s.svc
		if s.sl != nil {
			in.Endpoints[k] = []*discoveryv1.EndpointSlice{s.sl}
		}
	}
	tb, problems := route.Build(in)
	if len(problems) > 0 {
		t.Fatalf("problems: %v", problems)
	}
	return tb
}

func get(t *testing.T, c *http.Client, url, host string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Host = host
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s (Host %s): %v", url, host, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestRouting: requests go by host and path to the backends' endpoints,
// with the client's Host and X-Forwarded headers; no rule is a 404, a
// backend without endpoints a 503; a new table applies to the next
// request.
func TestRouting(t *testing.T) {
	api, web, empty := service("api", backend(t, "api")), service("web", backend(t, "web")), service("empty")
	h := New(nil)
	h.Set(table(t, []*networkingv1.Ingress{ingress([]networkingv1.IngressRule{
		rule("shop.example", "/api", "api"), rule("shop.example", "/", "web"), rule("down.example", "/", "empty"),
	}, nil)}, nil, api, web, empty))
	front := httptest.NewServer(h)
	defer front.Close()
	_, frontPort, _ := net.SplitHostPort(front.Listener.Addr().String())

	for _, tc := range []struct {
		host, path string
		code       int
		want       string
	}{
		{"shop.example", "/api/v1/items", 200, "api host=shop.example path=/api/v1/items"},
		{"shop.example:8080", "/apixyz", 200, "web host=shop.example:8080 path=/apixyz"},
		{"SHOP.example", "/", 200, "web "},
		{"other.example", "/", 404, "404 page not found"},
		{"down.example", "/", 503, "no ready endpoint for default/empty:http"},
	} {
		code, body := get(t, front.Client(), front.URL+tc.path, tc.host)
		if code != tc.code || !strings.Contains(body, tc.want) {
			t.Errorf("%s%s: %d %q, want %d containing %q", tc.host, tc.path, code, body, tc.code, tc.want)
		}
	}
	_, body := get(t, front.Client(), front.URL+"/", "shop.example")
	for _, want := range []string{"xff=127.0.0.1", "proto=http", "xhost=shop.example", "xport=" + frontPort} {
		if !strings.Contains(body, want) {
			t.Errorf("forwarded headers: %q lacks %q", body, want)
		}
	}

	// A new table: the next request follows it.
	h.Set(table(t, []*networkingv1.Ingress{ingress([]networkingv1.IngressRule{rule("shop.example", "/", "api")}, nil)}, nil, api))
	if _, body := get(t, front.Client(), front.URL+"/", "shop.example"); !strings.HasPrefix(body, "api ") {
		t.Errorf("after the change: %q, want the api backend", body)
	}
}

// TestUnreachableEndpoint: an endpoint that refuses connections is a 502.
func TestUnreachableEndpoint(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, p, _ := net.SplitHostPort(l.Addr().String())
	l.Close()
	n, _ := strconv.Atoi(p)
	h := New(nil)
	h.Set(table(t, []*networkingv1.Ingress{ingress([]networkingv1.IngressRule{rule("", "/", "gone")}, nil)}, nil, service("gone", int32(n))))
	front := httptest.NewServer(h)
	defer front.Close()
	if code, _ := get(t, front.Client(), front.URL+"/", "x"); code != http.StatusBadGateway {
		t.Errorf("unreachable endpoint: %d, want 502", code)
	}
}

// TestWebSocket: an Upgrade goes through, and the stream after it.
func TestWebSocket(t *testing.T) {
	h := New(nil)
	h.Set(table(t, []*networkingv1.Ingress{ingress([]networkingv1.IngressRule{rule("", "/", "ws")}, nil)}, nil, service("ws", backend(t, "ws"))))
	front := httptest.NewServer(h)
	defer front.Close()
	conn, err := net.Dial("tcp", front.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprint(conn, "GET /chat HTTP/1.1\r\nHost: chat.example\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %s", resp.Status)
	}
	fmt.Fprint(conn, "ping")
	buf := make([]byte, 4)
	if _, err := io.ReadFull(br, buf); err != nil || string(buf) != "ping" {
		t.Errorf("after the upgrade: %q, %v", buf, err)
	}
}

// TestTLS: each server name gets its Ingress's certificate, the client
// speaks HTTP/2, and a name no certificate covers fails the handshake.
func TestTLS(t *testing.T) {
	certPEM, keyPEM, pool := selfSigned(t, "secure.example")
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "secure-tls", Namespace: "default"}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{corev1.TLSCertKey: certPEM, corev1.TLSPrivateKeyKey: keyPEM}}
	web := service("web", backend(t, "web"))
	h := New(nil)
	h.Set(table(t, []*networkingv1.Ingress{ingress([]networkingv1.IngressRule{rule("secure.example", "/", "web")},
		[]networkingv1.IngressTLS{{Hosts: []string{"secure.example"}, SecretName: "secure-tls"}})},
		map[types.NamespacedName]*corev1.Secret{{Namespace: "default", Name: "secure-tls"}: secret}, web))
	front := httptest.NewUnstartedServer(h)
	front.TLS = h.TLSConfig()
	front.EnableHTTP2 = true
	front.StartTLS()
	defer front.Close()

	c := &http.Client{Transport: &http.Transport{ForceAttemptHTTP2: true, TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "secure.example"}}}
	req, _ := http.NewRequest(http.MethodGet, front.URL+"/", nil)
	req.Host = "secure.example"
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.ProtoMajor != 2 || !strings.Contains(string(body), "web host=secure.example") || !strings.Contains(string(body), "proto=https") {
		t.Errorf("over TLS: %s %q", resp.Proto, body)
	}
	bad := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "unknown.example"}}}
	if _, err := bad.Get(front.URL + "/"); err == nil {
		t.Errorf("a name without a certificate was served")
	}
}

func selfSigned(t *testing.T, host string) (certPEM, keyPEM []byte, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: host}, DNSNames: []string{host},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), pool
}

// TestStreaming: an answer of unknown length (a stream, a long poll)
// reaches the client as the backend writes it, not when it ends.
func TestStreaming(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "first\n")
		w.(http.Flusher).Flush()
		<-release
		fmt.Fprint(w, "second\n")
	}))
	defer srv.Close()
	defer close(release)
	_, p, _ := net.SplitHostPort(srv.Listener.Addr().String())
	n, _ := strconv.Atoi(p)
	h := New(nil)
	h.Set(table(t, []*networkingv1.Ingress{ingress([]networkingv1.IngressRule{rule("stream.example", "/", "s")}, nil)}, nil, service("s", int32(n))))
	front := httptest.NewServer(h)
	defer front.Close()
	req, _ := http.NewRequest(http.MethodGet, front.URL+"/", nil)
	req.Host = "stream.example"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	line := make(chan string, 1)
	go func() {
		buf := make([]byte, 6)
		_, _ = io.ReadFull(resp.Body, buf)
		line <- string(buf)
	}()
	select {
	case got := <-line:
		if got != "first\n" {
			t.Errorf("first part %q", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the first part of a stream did not arrive before the stream ended")
	}
}
