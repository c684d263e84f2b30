package agent

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orca-project/orca/internal/agent/join"
)

// freePort is a port on 127.0.0.1 nothing listens on.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// silentServer accepts connections and never answers, until the test ends.
func silentServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	return "https://" + ln.Addr().String()
}

// TestRunStartUp covers what Run does before it needs a container
// runtime: a step that fails ends Run with its error, a stop while
// starting is not an error, and either way what was already started (the
// load balancer over the API servers) has stopped when Run returns.
func TestRunStartUp(t *testing.T) {
	const token = "K10" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef" + "::abcdef.0123456789abcdef"
	for _, tc := range []struct {
		name string
		// options builds the options; lbPort is a free port for the
		// load balancer.
		options func(t *testing.T, lbPort int) Options
		// stopAfter cancels Run's context after this long; 0 never.
		stopAfter time.Duration
		// err is what Run's error starts with; "" is no error.
		err string
		// portTaken: the test itself holds the load balancer's port.
		portTaken bool
	}{{
		name:    "no credentials",
		options: func(*testing.T, int) Options { return Options{} },
		err:     "agent: no credentials for the API server: give a kubeconfig, or a server and a join token",
	}, {
		name: "the join fails",
		options: func(t *testing.T, lbPort int) Options {
			return Options{Join: &join.Config{Server: "https://127.0.0.1:" + strconv.Itoa(freePort(t)), Token: token}, APIServerLBPort: lbPort}
		},
		err: "agent: join https://127.0.0.1:",
	}, {
		name: "the load balancer's port is taken",
		options: func(t *testing.T, lbPort int) Options {
			ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(lbPort)))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ln.Close() })
			return Options{Join: &join.Config{Server: silentServer(t), Token: token}, APIServerLBPort: lbPort}
		},
		err:       "agent: serverlb: listen",
		portTaken: true,
	}, {
		name: "stopped while joining",
		options: func(t *testing.T, lbPort int) Options {
			return Options{Join: &join.Config{Server: silentServer(t), Token: token}, APIServerLBPort: lbPort}
		},
		stopAfter: 300 * time.Millisecond,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			lbPort := freePort(t)
			o := tc.options(t, lbPort)
			o.DataDir, o.NodeName = t.TempDir(), "node-1"
			o.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.stopAfter > 0 {
				time.AfterFunc(tc.stopAfter, cancel)
			}
			done := make(chan error, 1)
			go func() { done <- Run(ctx, o) }()
			var err error
			select {
			case err = <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("Run did not return")
			}
			switch {
			case tc.err == "" && err != nil:
				t.Errorf("Run() = %v, want nil", err)
			case tc.err != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.err)):
				t.Errorf("Run() = %v, want an error starting with %q", err, tc.err)
			}
			if o.Join != nil && !tc.portTaken {
				// Whatever Run started is stopped: the port is free again.
				ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(lbPort)))
				if err != nil {
					t.Errorf("the load balancer still listens after Run returned: %v", err)
				} else {
					ln.Close()
				}
			}
		})
	}
}
