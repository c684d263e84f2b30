package server_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/client-go/transport/spdy"
	"k8s.io/client-go/util/exec"

	"github.com/orca-project/orca/internal/auth/delegating"
	"github.com/orca-project/orca/internal/auth/pki"
	"github.com/orca-project/orca/internal/kubelet/server"
	"github.com/orca-project/orca/internal/kubelet/server/streamtest"
)

type env struct {
	url    string
	client *http.Client
	rest   *rest.Config
	rt     *streamtest.Runtime
}

func newEnv(t *testing.T) *env {
	t.Helper()
	dir := t.TempDir()
	ca, err := pki.LoadOrCreateCA(dir, "ca", "test-ca")
	if err != nil {
		t.Fatal(err)
	}
	serving, err := pki.LoadOrIssue(dir, "kubelet", ca, pki.LeafSpec{CommonName: "node", IPs: []net.IP{net.ParseIP("127.0.0.1")}, Server: true})
	if err != nil {
		t.Fatal(err)
	}
	client, err := pki.LoadOrIssue(dir, "client", ca, pki.LeafSpec{CommonName: "kube-apiserver-kubelet-client", Organizations: []string{"system:masters"}})
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)

	rt := streamtest.NewRuntime()
	t.Cleanup(rt.Close)
	logPath := filepath.Join(dir, "0.log")
	if err := os.WriteFile(logPath, []byte("2016-10-06T00:17:09Z stdout F one\n2016-10-06T00:17:10Z stderr F two\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rt.Pods["ns/web"] = map[string]server.ContainerRef{"app": {ID: "c1", LogPath: logPath, Stdin: true}}
	rt.Alive = func(string) bool { return false }

	// Certificates only, and every caller allowed: the checks themselves
	// are auth_test.go's.
	allowAll := &fakeAuthz{allow: map[string]bool{"proxy": true, "healthz": true}}
	h := server.WithAuth(server.New(rt, nil), server.Auth{Authenticator: delegating.NewAuthenticator(nil), Authorizer: allowAll, NodeName: "node"})
	srv := httptest.NewUnstartedServer(h)
	srv.TLS = server.TLSConfig(pool, tls.Certificate{Certificate: [][]byte{serving.Cert.Raw}, PrivateKey: serving.Key, Leaf: serving.Cert})
	srv.StartTLS()
	t.Cleanup(srv.Close)

	clientCert := tls.Certificate{Certificate: [][]byte{client.Cert.Raw}, PrivateKey: client.Key}
	return &env{
		url:    srv.URL,
		client: &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{clientCert}}}},
		rest: &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{
			CertData: client.CertPEM, KeyData: client.KeyPEM, CAData: pkiPEM(t, dir),
		}},
		rt: rt,
	}
}

func pkiPEM(t *testing.T, dir string) []byte {
	b, err := os.ReadFile(filepath.Join(dir, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (e *env) get(t *testing.T, c *http.Client, path string) (int, string) {
	t.Helper()
	resp, err := c.Get(e.url + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestRequests(t *testing.T) {
	e := newEnv(t)
	pool := e.client.Transport.(*http.Transport).TLSClientConfig.RootCAs
	anonymous := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	cases := []struct {
		name     string
		client   *http.Client
		path     string
		code     int
		contains string
	}{
		{"no client certificate", anonymous, "/containerLogs/ns/web/app", http.StatusUnauthorized, "Unauthorized"},
		{"health needs credentials too", anonymous, "/healthz", http.StatusUnauthorized, "Unauthorized"},
		{"health", e.client, "/healthz", http.StatusOK, "ok"},
		{"unknown path", e.client, "/pods", http.StatusNotFound, ""},
		{"logs", e.client, "/containerLogs/ns/web/app", http.StatusOK, "one\ntwo\n"},
		{"logs with options", e.client, "/containerLogs/ns/web/app?tailLines=1&timestamps=true", http.StatusOK, "2016-10-06T00:17:10Z two\n"},
		{"logs of an unknown container", e.client, "/containerLogs/ns/web/db", http.StatusNotFound, "container db"},
		{"logs of an unknown pod", e.client, "/containerLogs/ns/nope/app", http.StatusNotFound, "not found"},
		{"previous logs without a previous instance", e.client, "/containerLogs/ns/web/app?previous=true", http.StatusNotFound, ""},
		{"bad tailLines", e.client, "/containerLogs/ns/web/app?tailLines=x", http.StatusBadRequest, "invalid tailLines"},
		{"exec without a command", e.client, "/exec/ns/web/app?output=1", http.StatusBadRequest, "you must specify at least 1 command"},
		{"exec without streams", e.client, "/exec/ns/web/app?command=ls", http.StatusBadRequest, "you must specify at least one of stdin, stdout, stderr"},
		{"exec without an upgrade", e.client, "/exec/ns/web/app?command=ls&output=1", http.StatusBadRequest, "Upgrade request required"},
		{"port-forward to an unknown pod", e.client, "/portForward/ns/nope", http.StatusNotFound, "not found"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, body := e.get(t, c.client, c.path)
			if code != c.code || !strings.Contains(body, c.contains) {
				t.Errorf("got %d %q, want %d containing %q", code, body, c.code, c.contains)
			}
		})
	}
}

func TestExecOverSPDY(t *testing.T) {
	e := newEnv(t)
	run := func(cmd []string, stdin string) (string, string, error) {
		q := url.Values{"command": cmd, "output": {"1"}, "error": {"1"}}
		if stdin != "" {
			q.Set("input", "1")
		}
		u, _ := url.Parse(e.url + "/exec/ns/web/app?" + q.Encode())
		ex, err := remotecommand.NewSPDYExecutor(e.rest, "POST", u)
		if err != nil {
			t.Fatal(err)
		}
		var out, errOut bytes.Buffer
		opts := remotecommand.StreamOptions{Stdout: &out, Stderr: &errOut}
		if stdin != "" {
			opts.Stdin = strings.NewReader(stdin)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err = ex.StreamWithContext(ctx, opts)
		return out.String(), errOut.String(), err
	}
	if out, _, err := run([]string{"echo", "hello", "world"}, ""); err != nil || out != "hello world\n" {
		t.Errorf("echo: %q, %v", out, err)
	}
	if out, _, err := run([]string{"cat"}, "piped in"); err != nil || out != "piped in" {
		t.Errorf("cat: %q, %v", out, err)
	}
	if _, errOut, err := run([]string{"stderr", "oops"}, ""); err != nil || errOut != "oops\n" {
		t.Errorf("stderr: %q, %v", errOut, err)
	}
	_, _, err := run([]string{"exit", "3"}, "")
	var exitErr exec.CodeExitError
	if !errors.As(err, &exitErr) || exitErr.Code != 3 {
		t.Errorf("exit 3: got %v", err)
	}
}

func TestPortForwardOverSPDY(t *testing.T) {
	e := newEnv(t)
	echo := streamtest.EchoServer(t)
	e.rt.Ports[8080] = echo
	transport, upgrader, err := spdy.RoundTripperFor(e.rest)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(e.url + "/portForward/ns/web")
	dialer := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, "POST", u)
	local := streamtest.Forward(t, dialer, 8080)
	if got := streamtest.RoundTrip(t, local, "ping"); got != "ping" {
		t.Errorf("got %q through the forwarded port", got)
	}
}
