// Package streamtest is a stand-in for a container runtime's streaming
// server (what containerd serves on 127.0.0.1 for CRI Exec, Attach and
// PortForward) and a Runtime over it, for tests of the streaming path
// without containers. It speaks the SPDY protocols containerd 1.6 speaks:
// v4.channel.k8s.io for exec/attach and portforward.k8s.io.
package streamtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apihttpstream "k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/tools/portforward"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/streaming/pkg/httpstream"
	"k8s.io/streaming/pkg/httpstream/spdy"

	"github.com/orca-project/orca/internal/kubelet/server"
)

// Runtime is a fake kubelet runtime: one pod per key "ns/pod" with the
// named containers; Exec, Attach and PortForward return URLs on its
// streaming server.
type Runtime struct {
	// Pods maps "ns/pod" to its containers by name.
	Pods map[string]map[string]server.ContainerRef
	// Ports maps a pod's port to the address that stands in for it.
	Ports map[int32]string
	// Alive reports whether a container is running; nil means it is.
	Alive func(id string) bool
	// AttachOutput is what an attach writes to stdout before echoing stdin.
	AttachOutput string

	srv  *httptest.Server
	mu   sync.Mutex
	next int
	reqs map[string]any
}

// NewRuntime starts the fake streaming server; Close stops it.
func NewRuntime() *Runtime {
	rt := &Runtime{Pods: map[string]map[string]server.ContainerRef{}, Ports: map[int32]string{}, reqs: map[string]any{}}
	rt.srv = httptest.NewServer(http.HandlerFunc(rt.serve))
	return rt
}

// Close stops the streaming server.
func (rt *Runtime) Close() { rt.srv.Close() }

func (rt *Runtime) Container(_ context.Context, ns, pod, container string, previous bool) (server.ContainerRef, error) {
	cs, ok := rt.Pods[ns+"/"+pod]
	if !ok {
		return server.ContainerRef{}, fmt.Errorf("pod %s/%s: %w", ns, pod, server.ErrNotFound)
	}
	c, ok := cs[container]
	if !ok || previous {
		return server.ContainerRef{}, fmt.Errorf("container %s: %w", container, server.ErrNotFound)
	}
	return c, nil
}

func (rt *Runtime) Sandbox(_ context.Context, ns, pod string) (string, error) {
	if _, ok := rt.Pods[ns+"/"+pod]; !ok {
		return "", fmt.Errorf("pod %s/%s: %w", ns, pod, server.ErrNotFound)
	}
	return "sandbox-" + pod, nil
}

func (rt *Runtime) Running(_ context.Context, id string) (bool, error) {
	if rt.Alive == nil {
		return true, nil
	}
	return rt.Alive(id), nil
}

func (rt *Runtime) token(kind string, req any) string {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	rt.next++
	tok := strconv.Itoa(rt.next)
	rt.reqs[tok] = req
	return rt.srv.URL + "/" + kind + "/" + tok
}

func (rt *Runtime) Exec(_ context.Context, req *runtimeapi.ExecRequest) (*runtimeapi.ExecResponse, error) {
	return &runtimeapi.ExecResponse{Url: rt.token("exec", req)}, nil
}

func (rt *Runtime) Attach(_ context.Context, req *runtimeapi.AttachRequest) (*runtimeapi.AttachResponse, error) {
	return &runtimeapi.AttachResponse{Url: rt.token("attach", req)}, nil
}

func (rt *Runtime) PortForward(_ context.Context, req *runtimeapi.PortForwardRequest) (*runtimeapi.PortForwardResponse, error) {
	return &runtimeapi.PortForwardResponse{Url: rt.token("portforward", req)}, nil
}

func (rt *Runtime) serve(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if len(parts) != 2 {
		http.NotFound(w, r)
		return
	}
	rt.mu.Lock()
	req, ok := rt.reqs[parts[1]]
	delete(rt.reqs, parts[1]) // tokens are single use, as containerd's
	rt.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	switch req := req.(type) {
	case *runtimeapi.ExecRequest:
		serveRemoteCommand(w, r, req.Stdin, req.Stdout, req.Stderr, req.Tty, func(s *streams) int { return runCommand(req.Cmd, s) })
	case *runtimeapi.AttachRequest:
		serveRemoteCommand(w, r, req.Stdin, req.Stdout, req.Stderr, req.Tty, func(s *streams) int {
			if s.stdout != nil {
				io.WriteString(s.stdout, rt.AttachOutput)
			}
			if s.stdin != nil && s.stdout != nil {
				io.Copy(s.stdout, s.stdin)
			}
			return 0
		})
	case *runtimeapi.PortForwardRequest:
		rt.servePortForward(w, r)
	}
}

type streams struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

// runCommand is the fake container's shell: `echo ARGS`, `cat` (stdin to
// stdout), `exit N`, and `stderr TEXT`.
func runCommand(cmd []string, s *streams) int {
	switch cmd[0] {
	case "echo":
		if s.stdout != nil {
			fmt.Fprintln(s.stdout, strings.Join(cmd[1:], " "))
		}
	case "cat":
		if s.stdin != nil && s.stdout != nil {
			io.Copy(s.stdout, s.stdin)
		}
	case "stderr":
		if s.stderr != nil {
			fmt.Fprintln(s.stderr, strings.Join(cmd[1:], " "))
		}
	case "exit":
		n, _ := strconv.Atoi(cmd[1])
		return n
	default:
		if s.stderr != nil {
			fmt.Fprintf(s.stderr, "%s: not found\n", cmd[0])
		}
		return 127
	}
	return 0
}

// serveRemoteCommand is the server side of the SPDY remote command
// protocol (v4.channel.k8s.io): the client opens an error stream and one
// stream per standard stream (and resize with a TTY), the command runs,
// and its result is a Status on the error stream.
func serveRemoteCommand(w http.ResponseWriter, r *http.Request, stdin, stdout, stderr, tty bool, run func(*streams) int) {
	if _, err := httpstream.Handshake(r, w, []string{"v4.channel.k8s.io"}); err != nil {
		return
	}
	want := 1
	for _, on := range []bool{stdin, stdout, stderr, tty} {
		if on {
			want++
		}
	}
	ch := make(chan httpstream.Stream, want)
	conn := spdy.NewResponseUpgrader().UpgradeResponse(w, r, func(s httpstream.Stream, replySent <-chan struct{}) error {
		ch <- s
		return nil
	})
	if conn == nil {
		return
	}
	defer conn.Close()
	conn.SetIdleTimeout(time.Minute)
	var s streams
	var errStream httpstream.Stream
	var closers []io.Closer
	timeout := time.After(10 * time.Second)
	for i := 0; i < want; i++ {
		select {
		case st := <-ch:
			switch st.Headers().Get("streamType") {
			case "error":
				errStream = st
			case "stdin":
				s.stdin = st
			case "stdout":
				s.stdout = st
				closers = append(closers, st)
			case "stderr":
				s.stderr = st
				closers = append(closers, st)
			case "resize":
				go io.Copy(io.Discard, st)
			}
		case <-timeout:
			return
		}
	}
	code := run(&s)
	for _, c := range closers {
		c.Close()
	}
	status := metav1.Status{Status: metav1.StatusSuccess}
	if code != 0 {
		status = metav1.Status{
			Status: metav1.StatusFailure, Reason: "NonZeroExitCode",
			Message: fmt.Sprintf("command terminated with non-zero exit code: exit status %d", code),
			Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: "ExitCode", Message: strconv.Itoa(code)}}},
		}
	}
	if errStream != nil {
		json.NewEncoder(errStream).Encode(status)
		errStream.Close()
	}
}

// servePortForward is the server side of portforward.k8s.io: each
// forwarded connection is a pair of streams (error and data) sharing a
// requestID; data is relayed to the address standing in for the port.
func (rt *Runtime) servePortForward(w http.ResponseWriter, r *http.Request) {
	if _, err := httpstream.Handshake(r, w, []string{"portforward.k8s.io"}); err != nil {
		return
	}
	type pair struct{ data, errs httpstream.Stream }
	var mu sync.Mutex
	pairs := map[string]*pair{}
	ready := make(chan *pair, 16)
	conn := spdy.NewResponseUpgrader().UpgradeResponse(w, r, func(s httpstream.Stream, replySent <-chan struct{}) error {
		id := s.Headers().Get("requestID")
		mu.Lock()
		defer mu.Unlock()
		p := pairs[id]
		if p == nil {
			p = &pair{}
			pairs[id] = p
		}
		switch s.Headers().Get("streamType") {
		case "data":
			p.data = s
		case "error":
			p.errs = s
		}
		if p.data != nil && p.errs != nil {
			delete(pairs, id)
			ready <- p
		}
		return nil
	})
	if conn == nil {
		return
	}
	defer conn.Close()
	conn.SetIdleTimeout(time.Minute)
	for {
		select {
		case p := <-ready:
			go rt.forward(p.data, p.errs)
		case <-conn.CloseChan():
			return
		}
	}
}

func (rt *Runtime) forward(data, errs httpstream.Stream) {
	defer errs.Close()
	defer data.Close()
	port, _ := strconv.Atoi(data.Headers().Get("port"))
	addr, ok := rt.Ports[int32(port)]
	if !ok {
		fmt.Fprintf(errs, "port %d is not open in the pod", port)
		return
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		fmt.Fprintf(errs, "dial port %d: %v", port, err)
		return
	}
	defer c.Close()
	done := make(chan struct{})
	go func() {
		io.Copy(c, data)
		c.(*net.TCPConn).CloseWrite()
		close(done)
	}()
	io.Copy(data, c)
	<-done
}

// EchoServer listens on loopback and echoes what each connection sends;
// it stands in for a pod's port.
func EchoServer(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	return ln.Addr().String()
}

// Forward starts client-go's port forwarder of the pod port remote over
// dialer and returns the local address it listens on.
func Forward(t testing.TB, dialer apihttpstream.Dialer, remote int) string {
	t.Helper()
	stop, ready := make(chan struct{}), make(chan struct{})
	pf, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{fmt.Sprintf("0:%d", remote)}, stop, ready, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- pf.ForwardPorts() }()
	t.Cleanup(func() { close(stop); <-done })
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("port-forward: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("port-forward did not become ready")
	}
	ports, err := pf.GetPorts()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("127.0.0.1:%d", ports[0].Local)
}

// RoundTrip sends msg to addr, closes its write side, and returns what
// comes back.
func RoundTrip(t testing.TB, addr, msg string) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, msg); err != nil {
		t.Fatal(err)
	}
	c.(*net.TCPConn).CloseWrite()
	b, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("read through the forwarded port: %v", err)
	}
	return string(b)
}
