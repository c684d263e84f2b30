package serverlb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"slices"
	"sync"
	"testing"
	"time"
)

// wait bounds every wait in these tests; the health checks run every
// interval, so anything the LB does happens well within it.
const (
	interval = 50 * time.Millisecond
	wait     = 2 * time.Second
)

// fakeServer is an API server as the LB sees it: a TCP listener that
// writes its name on every connection, then echoes.
type fakeServer struct {
	name string
	ln   net.Listener

	mu    sync.Mutex
	conns []net.Conn
}

func startServers(t *testing.T, n int) []*fakeServer {
	t.Helper()
	var out []*fakeServer
	for i := range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		s := &fakeServer{name: fmt.Sprintf("s%d", i), ln: ln}
		go s.serve()
		t.Cleanup(s.kill)
		out = append(out, s)
	}
	return out
}

func (s *fakeServer) serve() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns = append(s.conns, c)
		s.mu.Unlock()
		go func() {
			if _, err := io.WriteString(c, s.name+"\n"); err == nil {
				_, _ = io.Copy(c, c)
			}
		}()
	}
}

func (s *fakeServer) addr() string { return s.ln.Addr().String() }

// hang stops accepting but keeps the open connections silent, as a
// machine that dropped off the network: only the LB can end them.
func (s *fakeServer) hang() { _ = s.ln.Close() }

func (s *fakeServer) kill() {
	_ = s.ln.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		_ = c.Close()
	}
}

func addrs(ss ...*fakeServer) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.addr())
	}
	return out
}

// startLB runs an LB with default def until the test ends.
func startLB(t *testing.T, def string) (*LB, context.CancelFunc, <-chan error) {
	t.Helper()
	lb, err := New(Config{Default: def, HealthInterval: interval, DialTimeout: time.Second,
		Log: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done, finished := make(chan error, 1), make(chan struct{})
	go func() {
		done <- lb.Run(ctx)
		close(finished)
	}()
	t.Cleanup(func() { cancel(); <-finished })
	return lb, cancel, done
}

// connect opens a connection through lb and returns it with the name of
// the server it reached.
func connect(t *testing.T, lb *LB) (net.Conn, string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", lb.Addr(), wait)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	line, err := readLine(c)
	if err != nil {
		t.Fatalf("read the server's name through the LB: %v", err)
	}
	return c, line
}

// readLine reads up to a newline, byte by byte so that nothing after it
// is consumed.
func readLine(c net.Conn) (string, error) {
	_ = c.SetReadDeadline(time.Now().Add(wait))
	defer c.SetReadDeadline(time.Time{})
	var b []byte
	one := make([]byte, 1)
	for {
		if _, err := c.Read(one); err != nil {
			return string(b), err
		}
		if one[0] == '\n' {
			return string(b), nil
		}
		b = append(b, one[0])
	}
}

// waitClosed fails unless the LB closes c within the wait.
func waitClosed(t *testing.T, c net.Conn) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(wait))
	_, err := c.Read(make([]byte, 1))
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("connection %v still open after %v", c.LocalAddr(), wait)
	}
	if err == nil {
		t.Fatalf("connection %v: read data, want it closed", c.LocalAddr())
	}
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", wait, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestStickyThenFailover(t *testing.T) {
	s := startServers(t, 3)
	lb, _, _ := startLB(t, s[0].addr())
	first, name := connect(t, lb)
	if name != "s0" {
		t.Fatalf("through the default: reached %s, want s0", name)
	}
	if _, err := io.WriteString(first, "ping\n"); err != nil {
		t.Fatal(err)
	}
	if echo, err := readLine(first); err != nil || echo != "ping" {
		t.Fatalf("echo through the LB: %q, %v", echo, err)
	}

	lb.Update(addrs(s...))
	open := []net.Conn{first}
	for range 5 {
		c, name := connect(t, lb)
		if name != "s0" {
			t.Fatalf("with s0 healthy, reached %s: the current server should stick", name)
		}
		open = append(open, c)
	}

	start := time.Now()
	s[0].hang()
	for _, c := range open {
		waitClosed(t, c)
	}
	t.Logf("connections to the hung server closed after %v (health interval %v)", time.Since(start), interval)
	if n := lb.Stats().Connections[s[0].addr()]; n != 0 {
		t.Errorf("%d connections to s0 still tracked", n)
	}

	_, next := connect(t, lb)
	if next == "s0" {
		t.Fatal("reached the hung server")
	}
	for range 3 {
		if _, name := connect(t, lb); name != next {
			t.Fatalf("after failing over to %s, reached %s: the new server should stick", next, name)
		}
	}
}

func TestUpdateClosesRemovedServers(t *testing.T) {
	s := startServers(t, 3)
	lb, _, _ := startLB(t, s[2].addr())
	lb.Update([]string{s[1].addr(), s[0].addr(), s[1].addr()})
	if got, want := lb.Servers(), normalize(addrs(s[0], s[1])); !slices.Equal(got, want) {
		t.Fatalf("Servers() = %v, want %v (sorted, deduplicated)", got, want)
	}
	c, name := connect(t, lb)
	var reached, other *fakeServer
	for _, x := range s[:2] {
		if x.name == name {
			reached = x
		} else {
			other = x
		}
	}
	if reached == nil {
		t.Fatalf("reached %s, want a listed server before the default", name)
	}

	lb.Update([]string{other.addr()})
	waitClosed(t, c)
	if _, name := connect(t, lb); name != other.name {
		t.Fatalf("after %s left the list, reached %s, want %s", reached.name, name, other.name)
	}
}

func TestDefaultWhenListEmpty(t *testing.T) {
	s := startServers(t, 2)
	lb, _, _ := startLB(t, s[1].addr())
	if _, name := connect(t, lb); name != "s1" {
		t.Fatalf("with no list, reached %s, want the default s1", name)
	}
	lb.Update(addrs(s[0]))
	listed, name := connect(t, lb)
	if name != "s0" {
		t.Fatalf("reached %s, want the listed s0 before the default", name)
	}
	lb.Update(nil)
	waitClosed(t, listed)
	if len(lb.Servers()) != 0 {
		t.Fatalf("Servers() = %v after an empty update", lb.Servers())
	}
	if _, name := connect(t, lb); name != "s1" {
		t.Fatalf("with the list emptied, reached %s, want the default s1", name)
	}
}

func TestNoServerClosesClient(t *testing.T) {
	s := startServers(t, 1)
	s[0].kill()
	lb, _, _ := startLB(t, s[0].addr())
	c, err := net.DialTimeout("tcp", lb.Addr(), wait)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	waitClosed(t, c)
	eventually(t, "the connection counted as unserved", func() bool { return lb.Stats().Unserved == 1 })
}

func TestRunEndsOnCancel(t *testing.T) {
	s := startServers(t, 1)
	lb, cancel, done := startLB(t, s[0].addr())
	c, _ := connect(t, lb)
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(wait):
		t.Fatal("Run did not return after cancel")
	}
	waitClosed(t, c)
	if c, err := net.DialTimeout("tcp", lb.Addr(), wait); err == nil {
		c.Close()
		t.Fatal("the LB still listens after Run returned")
	}
}
