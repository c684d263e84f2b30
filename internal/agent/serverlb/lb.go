package serverlb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Config configures an LB.
type Config struct {
	// ListenAddr is where the LB listens, 127.0.0.1:PORT; port 0 picks a
	// free one.
	ListenAddr string
	// Default is the host:port of the server given on the command line:
	// the only server while the list is empty, and always a fallback
	// after the healthy listed ones.
	Default string
	Log     *slog.Logger
	// DialTimeout bounds a dial to a server (2 s when zero);
	// HealthInterval is the time between health checks (1 s when zero).
	// A health check's dial is bounded by the shorter of the two.
	DialTimeout, HealthInterval time.Duration
}

// LB is a TCP proxy on loopback over the cluster's API servers.
type LB struct {
	cfg     Config
	log     *slog.Logger
	ln      net.Listener
	running atomic.Bool

	accepted, unserved atomic.Int64

	mu      sync.Mutex
	servers []string          // normalized, without the default unless listed
	health  map[string]health // of every server checked; none means healthy
	current string
	conns   map[string]map[*proxied]struct{} // open connections by server
	stopped bool
}

// proxied is one client connection and its connection to a server.
type proxied struct{ client, server net.Conn }

// close ends both sides; the copies between them return.
func (p *proxied) close() {
	_ = p.client.Close()
	_ = p.server.Close()
}

// Stats are the LB's counters.
type Stats struct {
	// Connections is how many proxied connections each server holds.
	Connections map[string]int
	// Accepted counts the client connections taken; Unserved those
	// closed because no server could be dialed.
	Accepted, Unserved int64
}

// New listens on cfg.ListenAddr; Run serves.
func New(cfg Config) (*LB, error) {
	if !validAddr(cfg.Default) {
		return nil, fmt.Errorf("serverlb: default server %q: want host:port", cfg.Default)
	}
	if cfg.ListenAddr == "" {
		cfg.ListenAddr = "127.0.0.1:0"
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = 2 * time.Second
	}
	if cfg.HealthInterval <= 0 {
		cfg.HealthInterval = time.Second
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	ln, err := net.Listen("tcp", cfg.ListenAddr)
	if err != nil {
		return nil, fmt.Errorf("serverlb: %w", err)
	}
	return &LB{
		cfg: cfg, log: cfg.Log.With("component", "apiserver-lb"), ln: ln,
		health: map[string]health{}, conns: map[string]map[*proxied]struct{}{},
	}, nil
}

// Addr is the address the LB listens on, 127.0.0.1:PORT.
func (lb *LB) Addr() string { return lb.ln.Addr().String() }

// URL is the API server URL clients use through the LB.
func (lb *LB) URL() string { return "https://" + lb.Addr() }

// Servers returns the listed servers, sorted (the default only if
// listed).
func (lb *LB) Servers() []string {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	return slices.Clone(lb.servers)
}

// Stats returns the LB's counters.
func (lb *LB) Stats() Stats {
	lb.mu.Lock()
	conns := make(map[string]int, len(lb.conns))
	for s, cs := range lb.conns {
		if len(cs) > 0 {
			conns[s] = len(cs)
		}
	}
	lb.mu.Unlock()
	return Stats{Connections: conns, Accepted: lb.accepted.Load(), Unserved: lb.unserved.Load()}
}

// Update sets the listed servers (host:port; order and repeats do not
// matter, invalid entries are dropped). The connections to a server no
// longer listed are closed at once. With an empty list, the default is
// the only server.
func (lb *LB) Update(servers []string) {
	next := normalize(servers)
	lb.mu.Lock()
	prev := lb.servers
	if slices.Equal(prev, next) {
		lb.mu.Unlock()
		return
	}
	lb.servers = next
	var removed []string
	var drop []*proxied
	for _, s := range prev {
		if slices.Contains(next, s) {
			continue
		}
		removed = append(removed, s)
		drop = append(drop, lb.detach(s)...)
		if s != lb.cfg.Default {
			delete(lb.health, s)
		}
	}
	lb.mu.Unlock()
	lb.log.Info("API servers changed", "servers", next, "removed", removed, "closedConnections", len(drop))
	closeAll(drop)
}

// detach forgets the connections to server and returns them to close;
// the caller holds mu.
func (lb *LB) detach(server string) []*proxied {
	var out []*proxied
	for p := range lb.conns[server] {
		out = append(out, p)
	}
	delete(lb.conns, server)
	return out
}

func closeAll(ps []*proxied) {
	for _, p := range ps {
		p.close()
	}
}

// Run serves until ctx ends, then closes the listener and every proxied
// connection. It returns nil when ctx ended.
func (lb *LB) Run(ctx context.Context) error {
	if !lb.running.CompareAndSwap(false, true) {
		return errors.New("serverlb: Run called twice")
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		_ = lb.ln.Close()
		lb.mu.Lock()
		lb.stopped = true
		var drop []*proxied
		for s := range lb.conns {
			drop = append(drop, lb.detach(s)...)
		}
		lb.mu.Unlock()
		closeAll(drop)
		wg.Wait()
	}()
	stop := context.AfterFunc(ctx, func() { _ = lb.ln.Close() })
	defer stop()
	wg.Go(func() { lb.checkHealth(ctx) })
	lb.log.Info("API server load balancer listening", "addr", lb.Addr(), "default", lb.cfg.Default)
	backoff := 5 * time.Millisecond
	for {
		c, err := lb.ln.Accept()
		switch {
		case ctx.Err() != nil:
			if c != nil {
				_ = c.Close()
			}
			return nil
		case errors.Is(err, net.ErrClosed):
			return fmt.Errorf("serverlb: %w", err)
		case err != nil:
			// Out of file descriptors and the like: wait and retry, as
			// net/http's server does.
			lb.log.Warn("accept", "err", err)
			select {
			case <-ctx.Done():
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, time.Second)
			continue
		}
		backoff = 5 * time.Millisecond
		lb.accepted.Add(1)
		wg.Go(func() { lb.serve(ctx, c) })
	}
}

// serve proxies one client connection to the first server in order
// that answers, or closes it if none does.
func (lb *LB) serve(ctx context.Context, client net.Conn) {
	d := net.Dialer{Timeout: lb.cfg.DialTimeout}
	for _, server := range lb.order() {
		conn, err := d.DialContext(ctx, "tcp", server)
		if err != nil {
			lb.log.Debug("dial API server", "server", server, "err", err)
			continue
		}
		p := &proxied{client: client, server: conn}
		if ok, stopped := lb.track(server, p); !ok {
			_ = conn.Close()
			if stopped {
				break
			}
			continue
		}
		pipe(p)
		lb.untrack(server, p)
		return
	}
	lb.unserved.Add(1)
	lb.log.Debug("no API server reachable; closing the client connection", "client", client.RemoteAddr())
	_ = client.Close()
}

// order is the servers to try now, from the current state.
func (lb *LB) order() []string {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	down := map[string]bool{}
	for s, h := range lb.health {
		if h.down {
			down[s] = true
		}
	}
	return order(choice{servers: lb.servers, down: down, current: lb.current, fallback: lb.cfg.Default})
}

// track records p as proxied to server, which becomes the current one,
// unless the LB stopped or the server went down or left the list while
// it was being dialed: then its connections were closed already, and so
// must p's be.
func (lb *LB) track(server string, p *proxied) (ok, stopped bool) {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	if lb.stopped {
		return false, true
	}
	if lb.health[server].down || !lb.known(server) {
		return false, false
	}
	if lb.conns[server] == nil {
		lb.conns[server] = map[*proxied]struct{}{}
	}
	lb.conns[server][p] = struct{}{}
	lb.current = server
	return true, false
}

func (lb *LB) untrack(server string, p *proxied) {
	lb.mu.Lock()
	delete(lb.conns[server], p)
	lb.mu.Unlock()
}

// known reports whether server is listed or the default; the caller
// holds mu.
func (lb *LB) known(server string) bool {
	return server == lb.cfg.Default || slices.Contains(lb.servers, server)
}

// pipe copies both ways until both sides are done, passing a half-close
// on; an error either way ends both.
func pipe(p *proxied) {
	done := make(chan struct{})
	go func() {
		copyHalf(p, p.server, p.client)
		close(done)
	}()
	copyHalf(p, p.client, p.server)
	<-done
	p.close()
}

func copyHalf(p *proxied, dst, src net.Conn) {
	_, err := io.Copy(dst, src)
	if cw, ok := dst.(interface{ CloseWrite() error }); ok && err == nil {
		if cw.CloseWrite() == nil {
			return
		}
	}
	p.close()
}

// checkHealth dials every known server each interval until ctx ends.
func (lb *LB) checkHealth(ctx context.Context) {
	t := time.NewTicker(lb.cfg.HealthInterval)
	defer t.Stop()
	for {
		lb.checkOnce(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// checkOnce dials every listed server and the default at once, then
// records what it found.
func (lb *LB) checkOnce(ctx context.Context) {
	lb.mu.Lock()
	targets := slices.Clone(lb.servers)
	lb.mu.Unlock()
	if !slices.Contains(targets, lb.cfg.Default) {
		targets = append(targets, lb.cfg.Default)
	}
	d := net.Dialer{Timeout: min(lb.cfg.DialTimeout, lb.cfg.HealthInterval)}
	ok := make([]bool, len(targets))
	var wg sync.WaitGroup
	for i, s := range targets {
		wg.Go(func() {
			if c, err := d.DialContext(ctx, "tcp", s); err == nil {
				_ = c.Close()
				ok[i] = true
			}
		})
	}
	wg.Wait()
	if ctx.Err() != nil {
		return
	}
	for i, s := range targets {
		lb.record(s, ok[i])
	}
}

// record applies one check's result to server, closing its connections
// when it has just gone down.
func (lb *LB) record(server string, ok bool) {
	lb.mu.Lock()
	if !lb.known(server) {
		// Dropped from the list while it was being checked.
		lb.mu.Unlock()
		return
	}
	prev := lb.health[server]
	next := prev.observe(ok)
	lb.health[server] = next
	var drop []*proxied
	if next.down && !prev.down {
		drop = lb.detach(server)
	}
	lb.mu.Unlock()
	switch {
	case next.down && !prev.down:
		lb.log.Info("API server unhealthy", "server", server, "failedChecks", next.fails, "closedConnections", len(drop))
		closeAll(drop)
	case prev.down && !next.down:
		lb.log.Info("API server healthy again", "server", server)
	}
}
