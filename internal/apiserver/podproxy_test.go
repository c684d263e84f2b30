package apiserver

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/websocket"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/client-go/transport/spdy"
	"k8s.io/client-go/util/exec"

	"github.com/orca-project/orca/internal/auth/pki"
	kubeletserver "github.com/orca-project/orca/internal/kubelet/server"
	"github.com/orca-project/orca/internal/kubelet/server/streamtest"
)

// proxyEnv is an API server on a real etcd with one node whose kubelet
// endpoint is the kubelet's streaming server over a fake runtime.
type proxyEnv struct {
	config  *rest.Config
	client  kubernetes.Interface
	rt      *streamtest.Runtime
	logPath string
	alive   atomic.Bool
	// ca issued the kubelet's serving certificate and the API server's
	// kubelet client certificate; caPool holds it.
	ca     *pki.Pair
	caPool *x509.CertPool
}

func newProxyEnv(t *testing.T) *proxyEnv {
	t.Helper()
	dir := t.TempDir()
	ca, err := pki.LoadOrCreateCA(dir, "ca", "test-ca")
	if err != nil {
		t.Fatal(err)
	}
	kubeletCert, err := pki.LoadOrIssue(dir, "kubelet", ca, pki.LeafSpec{CommonName: "node-1", IPs: []net.IP{net.ParseIP("127.0.0.1")}, Server: true})
	if err != nil {
		t.Fatal(err)
	}
	clientCert, err := pki.LoadOrIssue(dir, "kubelet-client", ca, pki.LeafSpec{CommonName: "kube-apiserver-kubelet-client", Organizations: []string{"system:masters"}})
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)

	env := &proxyEnv{rt: streamtest.NewRuntime(), logPath: filepath.Join(dir, "app.log"), ca: ca, caPool: pool}
	env.alive.Store(true)
	env.rt.Alive = func(string) bool { return env.alive.Load() }
	env.rt.AttachOutput = "attached\n"
	env.rt.Pods["default/web"] = map[string]kubeletserver.ContainerRef{"app": {ID: "c-app", LogPath: env.logPath, Stdin: true}}
	kubelet := httptest.NewUnstartedServer(kubeletserver.New(env.rt, slog.Default()))
	kubelet.TLS = kubeletserver.TLSConfig(pool, tls.Certificate{Certificate: [][]byte{kubeletCert.Cert.Raw}, PrivateKey: kubeletCert.Key})
	kubelet.StartTLS()
	t.Cleanup(func() {
		kubelet.Close()
		env.rt.Close()
	})

	// Every backend here listens on loopback. Nodes are reached there,
	// which the proxy subresources refuse outside tests; pods and
	// endpoints get TEST-NET addresses instead (EndpointSlices may not
	// hold loopback ones), which the server's client of pods dials on
	// loopback.
	srv := startTestServer(t, Config{
		KubeletClientTLS: &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{clientCert.Cert.Raw}, PrivateKey: clientCert.Key}}, RootCAs: pool},
	}, func(s *Server) {
		s.proxyable = func(net.IP) bool { return true }
		dial := s.podTransport.DialContext
		s.podTransport.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			_, port, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, err
			}
			return dial(ctx, network, net.JoinHostPort("127.0.0.1", port))
		}
	})
	env.config = srv.config
	env.client = srv.client
	kubeletPort, _ := strconv.Atoi(kubelet.URL[strings.LastIndex(kubelet.URL, ":")+1:])
	env.createNode(t, "node-1", int32(kubeletPort))
	one := []corev1.Container{{Name: "app", Image: "busybox"}}
	env.createPod(t, "web", "node-1", one, []corev1.ContainerStatus{{Name: "app", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}})
	env.createPod(t, "unscheduled", "", one, nil)
	env.createPod(t, "two", "node-1", []corev1.Container{{Name: "a", Image: "busybox"}, {Name: "b", Image: "busybox"}}, nil)
	env.createPod(t, "waiting", "node-1", one, []corev1.ContainerStatus{{Name: "app", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}})
	return env
}

func (e *proxyEnv) createNode(t *testing.T, name string, port int32) {
	t.Helper()
	ctx := context.Background()
	n, err := e.client.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: "localhost"}, {Type: corev1.NodeInternalIP, Address: "127.0.0.1"}}
	n.Status.DaemonEndpoints.KubeletEndpoint.Port = port
	if _, err := e.client.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func (e *proxyEnv) createPod(t *testing.T, name, node string, containers []corev1.Container, statuses []corev1.ContainerStatus) {
	t.Helper()
	ctx := context.Background()
	p, err := e.client.CoreV1().Pods("default").Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.PodSpec{NodeName: node, Containers: containers},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if statuses == nil {
		return
	}
	p.Status.ContainerStatuses = statuses
	if _, err := e.client.CoreV1().Pods("default").UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func (e *proxyEnv) execURL(pod string, opts *corev1.PodExecOptions) *url.URL {
	return e.client.CoreV1().RESTClient().Post().Namespace("default").Resource("pods").Name(pod).SubResource("exec").VersionedParams(opts, scheme.ParameterCodec).URL()
}

func TestPodSubresourceErrors(t *testing.T) {
	e := newProxyEnv(t)
	ctx := context.Background()
	execOpts := &corev1.PodExecOptions{Command: []string{"ls"}, Stdout: true}
	cases := []struct {
		name string
		do   func() error
		code int32
		msg  string
	}{
		{"unscheduled pod", func() error {
			return e.client.CoreV1().RESTClient().Post().AbsPath(e.execURL("unscheduled", execOpts).Path).VersionedParams(execOpts, scheme.ParameterCodec).Do(ctx).Error()
		}, 400, "pod unscheduled does not have a host assigned"},
		{"unknown container", func() error {
			o := *execOpts
			o.Container = "db"
			return e.client.CoreV1().RESTClient().Post().AbsPath(e.execURL("web", &o).Path).VersionedParams(&o, scheme.ParameterCodec).Do(ctx).Error()
		}, 400, "container db is not valid for pod web"},
		{"several containers and none named", func() error {
			return e.client.CoreV1().RESTClient().Post().AbsPath(e.execURL("two", execOpts).Path).VersionedParams(execOpts, scheme.ParameterCodec).Do(ctx).Error()
		}, 400, "a container name must be specified for pod two, choose one of: [a b]"},
		{"exec without a command", func() error {
			o := &corev1.PodExecOptions{Stdout: true}
			return e.client.CoreV1().RESTClient().Post().AbsPath(e.execURL("web", o).Path).VersionedParams(o, scheme.ParameterCodec).Do(ctx).Error()
		}, 400, "you must specify at least 1 command"},
		{"exec without streams", func() error {
			o := &corev1.PodExecOptions{Command: []string{"ls"}}
			return e.client.CoreV1().RESTClient().Post().AbsPath(e.execURL("web", o).Path).VersionedParams(o, scheme.ParameterCodec).Do(ctx).Error()
		}, 400, "you must specify at least one of stdin, stdout, stderr"},
		{"exec without an upgrade", func() error {
			return e.client.CoreV1().RESTClient().Post().AbsPath(e.execURL("web", execOpts).Path).VersionedParams(execOpts, scheme.ParameterCodec).Do(ctx).Error()
		}, 400, "Upgrade request required"},
		{"logs of a waiting container", func() error {
			return e.client.CoreV1().Pods("default").GetLogs("waiting", &corev1.PodLogOptions{}).Do(ctx).Error()
		}, 400, `container "app" in pod "waiting" is waiting to start: ContainerCreating`},
		{"logs with a negative tail", func() error {
			n := int64(-1)
			return e.client.CoreV1().Pods("default").GetLogs("web", &corev1.PodLogOptions{TailLines: &n}).Do(ctx).Error()
		}, 422, "must be greater than or equal to 0"},
		{"logs of a missing pod", func() error {
			return e.client.CoreV1().Pods("default").GetLogs("nope", &corev1.PodLogOptions{}).Do(ctx).Error()
		}, 404, `pods "nope" not found`},
		{"logs of a pod the kubelet does not know", func() error {
			return e.client.CoreV1().Pods("default").GetLogs("two", &corev1.PodLogOptions{Container: "a"}).Do(ctx).Error()
		}, 404, "not found"},
		{"log is read-only", func() error {
			return e.client.CoreV1().RESTClient().Post().Namespace("default").Resource("pods").Name("web").SubResource("log").Do(ctx).Error()
		}, 405, ""},
		{"exec on another resource", func() error {
			return e.client.CoreV1().RESTClient().Post().Namespace("default").Resource("configmaps").Name("x").SubResource("exec").Do(ctx).Error()
		}, 404, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.do()
			var se *apierrors.StatusError
			if !errors.As(err, &se) {
				t.Fatalf("got %v, want a Status error", err)
			}
			if se.Status().Code != c.code || !strings.Contains(se.Status().Message, c.msg) {
				t.Errorf("got %d %q, want %d containing %q", se.Status().Code, se.Status().Message, c.code, c.msg)
			}
		})
	}

	// Logs of a pod not yet on a node are empty, as upstream's.
	b, err := e.client.CoreV1().Pods("default").GetLogs("unscheduled", &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil || len(b) != 0 {
		t.Errorf("logs of an unscheduled pod: %q, %v", b, err)
	}
}

func TestPodSubresourceDiscovery(t *testing.T) {
	e := newProxyEnv(t)
	list, err := e.client.Discovery().ServerResourcesForGroupVersion("v1")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"pods/attach": "PodAttachOptions", "pods/exec": "PodExecOptions", "pods/log": "Pod", "pods/portforward": "PodPortForwardOptions", "pods/proxy": "PodProxyOptions", "services/proxy": "ServiceProxyOptions", "nodes/proxy": "NodeProxyOptions"}
	for _, r := range list.APIResources {
		if kind, ok := want[r.Name]; ok {
			if r.Kind != kind {
				t.Errorf("%s has kind %s, want %s", r.Name, r.Kind, kind)
			}
			delete(want, r.Name)
		}
	}
	if len(want) > 0 {
		t.Errorf("discovery lacks %v", want)
	}
}

// executors are kubectl's two ways to reach exec and attach.
func (e *proxyEnv) executors(t *testing.T, u *url.URL) map[string]remotecommand.Executor {
	t.Helper()
	ws, err := remotecommand.NewWebSocketExecutor(e.config, "GET", u.String())
	if err != nil {
		t.Fatal(err)
	}
	sp, err := remotecommand.NewSPDYExecutor(e.config, "POST", u)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]remotecommand.Executor{"websocket": ws, "spdy": sp}
}

func TestExecThroughAPIServer(t *testing.T) {
	e := newProxyEnv(t)
	cases := []struct {
		name     string
		cmd      []string
		stdin    string
		tty      bool
		stdout   string
		stderr   string
		exitCode int
	}{
		{name: "output", cmd: []string{"echo", "hello", "world"}, stdout: "hello world\n"},
		{name: "stdin", cmd: []string{"cat"}, stdin: "from the client", stdout: "from the client"},
		{name: "stderr", cmd: []string{"stderr", "oops"}, stderr: "oops\n"},
		{name: "exit code", cmd: []string{"exit", "7"}, exitCode: 7},
		{name: "tty", cmd: []string{"cat"}, stdin: "typed", tty: true, stdout: "typed"},
	}
	for _, c := range cases {
		u := e.execURL("web", &corev1.PodExecOptions{Command: c.cmd, Stdin: c.stdin != "", Stdout: true, Stderr: !c.tty, TTY: c.tty})
		for name, ex := range e.executors(t, u) {
			t.Run(c.name+" over "+name, func(t *testing.T) {
				var out, errOut bytes.Buffer
				opts := remotecommand.StreamOptions{Stdout: &out, Tty: c.tty}
				if !c.tty {
					opts.Stderr = &errOut
				}
				if c.stdin != "" {
					opts.Stdin = strings.NewReader(c.stdin)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				err := ex.StreamWithContext(ctx, opts)
				if c.exitCode != 0 {
					var exitErr exec.CodeExitError
					if !errors.As(err, &exitErr) || exitErr.Code != c.exitCode {
						t.Fatalf("got %v, want exit code %d", err, c.exitCode)
					}
				} else if err != nil {
					t.Fatal(err)
				}
				if out.String() != c.stdout || errOut.String() != c.stderr {
					t.Errorf("stdout %q stderr %q, want %q and %q", out.String(), errOut.String(), c.stdout, c.stderr)
				}
			})
		}
	}
}

func TestAttachThroughAPIServer(t *testing.T) {
	e := newProxyEnv(t)
	u := e.client.CoreV1().RESTClient().Post().Namespace("default").Resource("pods").Name("web").SubResource("attach").
		VersionedParams(&corev1.PodAttachOptions{Stdin: true, Stdout: true}, scheme.ParameterCodec).URL()
	for name, ex := range e.executors(t, u) {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if err := ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: strings.NewReader("input"), Stdout: &out}); err != nil {
				t.Fatal(err)
			}
			if out.String() != "attached\ninput" {
				t.Errorf("got %q", out.String())
			}
		})
	}
}

func TestPortForwardThroughAPIServer(t *testing.T) {
	e := newProxyEnv(t)
	e.rt.Ports[8080] = streamtest.EchoServer(t)
	u := e.client.CoreV1().RESTClient().Post().Namespace("default").Resource("pods").Name("web").SubResource("portforward").URL()

	tunnel, err := portforward.NewSPDYOverWebsocketDialer(u, e.config)
	if err != nil {
		t.Fatal(err)
	}
	transport, upgrader, err := spdy.RoundTripperFor(e.config)
	if err != nil {
		t.Fatal(err)
	}
	direct := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, "POST", u)
	t.Run("websocket tunnel", func(t *testing.T) {
		local := streamtest.Forward(t, tunnel, 8080)
		for i := 0; i < 2; i++ {
			if got := streamtest.RoundTrip(t, local, "ping "+strconv.Itoa(i)); got != "ping "+strconv.Itoa(i) {
				t.Errorf("got %q", got)
			}
		}
	})
	t.Run("spdy", func(t *testing.T) {
		local := streamtest.Forward(t, direct, 8080)
		if got := streamtest.RoundTrip(t, local, "pong"); got != "pong" {
			t.Errorf("got %q", got)
		}
	})
}

func TestFollowLogsThroughAPIServer(t *testing.T) {
	e := newProxyEnv(t)
	if err := os.WriteFile(e.logPath, []byte("2026-01-01T00:00:00Z stdout F first\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(e.logPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	stream, err := e.client.CoreV1().Pods("default").GetLogs("web", &corev1.PodLogOptions{Follow: true, Timestamps: true}).Stream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	lines := bufio.NewReader(stream)
	readLine := func() string {
		t.Helper()
		l, err := lines.ReadString('\n')
		if err != nil {
			t.Fatalf("read log line: %v", err)
		}
		return l
	}
	if l := readLine(); l != "2026-01-01T00:00:00Z first\n" {
		t.Errorf("first line %q", l)
	}
	// A line the container writes later arrives while the request is open.
	f.WriteString("2026-01-01T00:00:01Z stdout F second\n")
	if l := readLine(); l != "2026-01-01T00:00:01Z second\n" {
		t.Errorf("second line %q", l)
	}
	// The stream ends once the container stops.
	e.alive.Store(false)
	if rest, err := io.ReadAll(lines); err != nil || len(rest) != 0 {
		t.Errorf("after the container stopped: %q, %v", rest, err)
	}

	// Options reach the kubelet.
	b, err := e.client.CoreV1().Pods("default").GetLogs("web", &corev1.PodLogOptions{TailLines: ptrTo[int64](1), LimitBytes: ptrTo[int64](3)}).DoRaw(context.Background())
	if err != nil || string(b) != "sec" {
		t.Errorf("tail and limit: %q, %v", b, err)
	}
}

func ptrTo[T any](v T) *T { return &v }

// Upstream's "Pods should support retrieving logs from the container over
// websockets": a WebSocket to pods/log gets the log's bytes in binary
// messages (base64 text with base64.binary.k8s.io), then a close.
func TestLogsOverWebSocket(t *testing.T) {
	e := newProxyEnv(t)
	if err := os.WriteFile(e.logPath, []byte("2026-01-01T00:00:00Z stdout F container is alive\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	u := e.client.CoreV1().RESTClient().Get().Namespace("default").Resource("pods").Name("web").Suffix("log").Param("container", "app").URL()
	u.Scheme = "wss"
	read := func(t *testing.T, protocol string) string {
		t.Helper()
		cfg, err := websocket.NewConfig(u.String(), "http://localhost")
		if err != nil {
			t.Fatal(err)
		}
		cfg.TlsConfig = &tls.Config{InsecureSkipVerify: true}
		if protocol != "" {
			cfg.Protocol = []string{protocol}
		}
		ws, err := websocket.DialConfig(cfg)
		if err != nil {
			t.Fatalf("open WebSocket: %v", err)
		}
		defer ws.Close()
		_ = ws.SetDeadline(time.Now().Add(10 * time.Second))
		var out strings.Builder
		for {
			var msg []byte
			if err := websocket.Message.Receive(ws, &msg); err != nil {
				if errors.Is(err, io.EOF) {
					return out.String()
				}
				t.Fatalf("read: %v", err)
			}
			if protocol == "base64.binary.k8s.io" {
				if msg, err = base64.StdEncoding.DecodeString(string(msg)); err != nil {
					t.Fatal(err)
				}
			}
			out.Write(msg)
		}
	}
	for _, p := range []string{"binary.k8s.io", "base64.binary.k8s.io", ""} {
		if got := read(t, p); got != "container is alive\n" {
			t.Errorf("subprotocol %q: %q", p, got)
		}
	}

	// A subprotocol the server does not speak is refused at once.
	cfg, _ := websocket.NewConfig(u.String(), "http://localhost")
	cfg.TlsConfig, cfg.Protocol = &tls.Config{InsecureSkipVerify: true}, []string{"v5.channel.k8s.io"}
	if ws, err := websocket.DialConfig(cfg); err == nil {
		ws.Close()
		t.Error("an unknown subprotocol was accepted")
	}
}
