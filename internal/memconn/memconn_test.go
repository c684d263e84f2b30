package memconn

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"
)

// TestHTTP2OverTLS serves through the listener as the API server does:
// TLS with ALPN, HTTP/2 streams multiplexed on one connection, a
// streaming response, and the loopback address in the request.
func TestHTTP2OverTLS(t *testing.T) {
	l := NewListener(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 6443})
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/stream" {
			for i := 0; i < 3; i++ {
				fmt.Fprintf(w, "event %d\n", i)
				w.(http.Flusher).Flush()
			}
			return
		}
		fmt.Fprintf(w, "%s %s %s", r.Proto, r.RemoteAddr, r.URL.Path)
	}))
	ts.Listener = l
	ts.EnableHTTP2 = true
	ts.StartTLS()
	defer ts.Close()
	client := ts.Client()
	client.Transport.(*http.Transport).DialContext = l.DialContext

	var wg sync.WaitGroup
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			resp, err := client.Get(fmt.Sprintf("%s/%d", ts.URL, i))
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if want := fmt.Sprintf("HTTP/2.0 127.0.0.1:0 /%d", i); string(body) != want {
				t.Errorf("response %q, want %q", body, want)
			}
		}(i)
	}
	wg.Wait()

	resp, err := client.Get(ts.URL + "/stream")
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(resp.Body)
	n := 0
	for sc.Scan() {
		if want := fmt.Sprintf("event %d", n); sc.Text() != want {
			t.Fatalf("streamed %q, want %q", sc.Text(), want)
		}
		n++
	}
	resp.Body.Close()
	if n != 3 {
		t.Fatalf("streamed %d events, want 3", n)
	}
}

func TestClosedListener(t *testing.T) {
	l := NewListener(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 6443})
	accepted := make(chan error, 1)
	go func() {
		c, err := l.Accept()
		if err == nil {
			c.Close()
		}
		accepted <- err
	}()
	c, err := l.DialContext(context.Background(), "tcp", "ignored")
	if err != nil {
		t.Fatal(err)
	}
	if err := <-accepted; err != nil {
		t.Fatal(err)
	}
	// The server closed its end: the client reads EOF.
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Fatalf("read after the server closed: %v, want EOF", err)
	}
	l.Close()
	if _, err := l.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("accept on a closed listener: %v, want net.ErrClosed", err)
	}
	if _, err := l.DialContext(context.Background(), "tcp", "ignored"); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("dial to a closed listener: %v, want net.ErrClosed", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	open := NewListener(l.Addr())
	if _, err := open.DialContext(ctx, "tcp", "ignored"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("dial nobody accepts: %v, want the context's deadline", err)
	}
}

// TestPipeBuffersLikeASocket: a write does not wait for the other side to
// read, deadlines end blocked calls, and a close lets the other side read
// what was queued before io.EOF.
func TestPipeBuffersLikeASocket(t *testing.T) {
	a, b := pipe(clientAddr, clientAddr)
	big := make([]byte, 1<<20)
	done := make(chan error, 1)
	go func() {
		_, err := a.Write(big)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a 1 MiB write waited for a reader")
	}
	if _, err := b.Write([]byte("both sides write at once")); err != nil {
		t.Fatal(err)
	}

	if err := b.SetReadDeadline(time.Now().Add(20 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(io.LimitReader(b, int64(len(big))))
	if err != nil || len(got) != len(big) {
		t.Fatalf("read %d bytes, %v; want %d", len(got), err, len(big))
	}
	if _, err := b.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past the deadline: %v, want os.ErrDeadlineExceeded", err)
	}
	if err := b.SetReadDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}

	if _, err := a.Write([]byte("last words")); err != nil {
		t.Fatal(err)
	}
	a.Close()
	rest, err := io.ReadAll(b)
	if err != nil || string(rest) != "last words" {
		t.Fatalf("after the close: %q, %v; want the queued bytes, then EOF", rest, err)
	}
	if _, err := b.Write([]byte("x")); err == nil {
		t.Fatal("a write to a closed connection succeeded")
	}
	if _, err := a.Read(make([]byte, 1)); err == nil {
		t.Fatal("a read on the closed end succeeded")
	}
}
