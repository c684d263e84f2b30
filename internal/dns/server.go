// Package dns is the cluster DNS server: it answers for the cluster domain
// (services, endpoints, pods, reverse addresses) from informers, in
// memory, the way CoreDNS's kubernetes plugin does, and forwards other
// names only to the resolvers it is given.
package dns

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"time"

	mdns "github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// Config configures a Server.
type Config struct {
	Client kubernetes.Interface
	// Zone is the cluster domain; cluster.local when empty.
	Zone string
	// Upstreams (host:port) receive names outside the cluster domain.
	// With none such names get SERVFAIL and nothing leaves the machine.
	Upstreams []string
	Metrics   prometheus.Registerer
	Log       *slog.Logger
}

// Server is the cluster DNS server.
type Server struct {
	*Handler
	factory informers.SharedInformerFactory
	synced  []cache.InformerSynced
	udp     net.PacketConn
	tcp     net.Listener
	log     *slog.Logger
}

// New builds the server and its informers; Listen and Run start it.
func New(cfg Config) (*Server, error) {
	if cfg.Zone == "" {
		cfg.Zone = "cluster.local"
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	f := informers.NewSharedInformerFactory(cfg.Client, 0)
	svcs, slices := f.Core().V1().Services().Informer(), f.Discovery().V1().EndpointSlices().Informer()
	if err := svcs.AddIndexers(ServiceIndexers()); err != nil {
		return nil, fmt.Errorf("dns: service indexes: %w", err)
	}
	if err := slices.AddIndexers(SliceIndexers()); err != nil {
		return nil, fmt.Errorf("dns: endpointslice indexes: %w", err)
	}
	res := NewResolver(cfg.Zone, NewCache(svcs.GetIndexer(), slices.GetIndexer()), uint32(time.Now().Unix()))
	h, err := NewHandler(res, cfg.Upstreams, cfg.Metrics)
	if err != nil {
		return nil, err
	}
	h.ready.Store(false)
	return &Server{Handler: h, factory: f, synced: []cache.InformerSynced{svcs.HasSynced, slices.HasSynced}, log: cfg.Log.With("component", "dns")}, nil
}

// Listen opens the UDP and TCP sockets on addr (host:port; port 0 picks
// one free for both), so that the port is known before Run.
func (s *Server) Listen(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("dns: listen address %q: %w", addr, err)
	}
	for attempt := 0; ; attempt++ {
		tcp, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("dns: listen: %w", err)
		}
		p := strconv.Itoa(tcp.Addr().(*net.TCPAddr).Port)
		udp, err := net.ListenPacket("udp", net.JoinHostPort(host, p))
		if err == nil {
			s.tcp, s.udp = tcp, udp
			return nil
		}
		tcp.Close()
		// A free TCP port may be taken for UDP; only a picked port is
		// worth another try.
		if port != "0" || attempt == 10 {
			return fmt.Errorf("dns: listen: %w", err)
		}
	}
}

// Port is the port Listen opened.
func (s *Server) Port() int { return s.tcp.Addr().(*net.TCPAddr).Port }

// Ready reports whether the informers have synced, i.e. answers are
// complete.
func (s *Server) Ready() bool { return s.Handler.ready.Load() }

// Run starts the informers and serves until ctx ends. Queries arriving
// before the caches have synced get SERVFAIL rather than false NXDOMAINs.
func (s *Server) Run(ctx context.Context) error {
	if s.tcp == nil {
		return errors.New("dns: Run before Listen")
	}
	s.factory.Start(ctx.Done())
	defer s.factory.Shutdown()
	go func() {
		if cache.WaitForCacheSync(ctx.Done(), s.synced...) {
			s.Handler.ready.Store(true)
			s.log.Info("cluster DNS serving", "port", s.Port())
		}
	}()
	udp := &mdns.Server{PacketConn: s.udp, Handler: s.Handler}
	tcp := &mdns.Server{Listener: s.tcp, Handler: s.Handler}
	errc := make(chan error, 2)
	go func() { errc <- udp.ActivateAndServe() }()
	go func() { errc <- tcp.ActivateAndServe() }()
	select {
	case <-ctx.Done():
		_ = udp.Shutdown()
		_ = tcp.Shutdown()
		return nil
	case err := <-errc:
		_ = udp.Shutdown()
		_ = tcp.Shutdown()
		return fmt.Errorf("dns: serve: %w", err)
	}
}
