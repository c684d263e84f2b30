// Package healthcheck serves the health-check node ports of services with
// externalTrafficPolicy Local, as upstream kube-proxy does: a load
// balancer asks each node, and only nodes with a local endpoint answer
// 200.
package healthcheck

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Service is what one health-check port reports.
type Service struct {
	Namespace, Name string
	LocalEndpoints  int
}

// Body is upstream's JSON answer, byte for byte.
func Body(s Service, healthy bool) string {
	return fmt.Sprintf("{\n\t\"service\": {\n\t\t\"namespace\": %q,\n\t\t\"name\": %q\n\t},\n\t\"localEndpoints\": %d,\n\t\"serviceProxyHealthy\": %v\n}", s.Namespace, s.Name, s.LocalEndpoints, healthy)
}

// Servers keeps one HTTP server per health-check node port.
type Servers struct {
	// Listen opens a port; all addresses when nil.
	Listen func(port int32) (net.Listener, error)
	// Healthy says whether the proxy's rules are current.
	Healthy func() bool
	Log     *slog.Logger

	mu      sync.Mutex
	servers map[int32]*server
}

type server struct {
	srv *http.Server
	mu  sync.Mutex
	svc Service
}

// Sync makes the servers match want (node port → service): new ports are
// opened, gone ones closed, and counts updated in place. A port that
// cannot be opened is logged and retried at the next Sync.
func (s *Servers) Sync(want map[int32]Service) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.servers == nil {
		s.servers = map[int32]*server{}
	}
	for port, sv := range s.servers {
		if _, ok := want[port]; !ok {
			_ = sv.srv.Close()
			delete(s.servers, port)
		}
	}
	for port, svc := range want {
		if sv := s.servers[port]; sv != nil {
			sv.mu.Lock()
			sv.svc = svc
			sv.mu.Unlock()
			continue
		}
		ln, err := s.listen(port)
		if err != nil {
			s.log().Error("health check node port", "port", port, "service", svc.Namespace+"/"+svc.Name, "err", err)
			continue
		}
		sv := &server{svc: svc}
		sv.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.serve(sv, w) }), ReadHeaderTimeout: 10 * time.Second}
		s.servers[port] = sv
		go func() {
			if err := sv.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				s.log().Error("health check server", "port", port, "err", err)
			}
		}()
	}
}

// Close stops every server.
func (s *Servers) Close() { s.Sync(nil) }

func (s *Servers) serve(sv *server, w http.ResponseWriter) {
	sv.mu.Lock()
	svc := sv.svc
	sv.mu.Unlock()
	healthy := s.Healthy == nil || s.Healthy()
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Load-Balancing-Endpoint-Weight", strconv.Itoa(svc.LocalEndpoints))
	if svc.LocalEndpoints > 0 && healthy {
		w.WriteHeader(http.StatusOK)
	} else {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_, _ = fmt.Fprint(w, Body(svc, healthy))
}

func (s *Servers) listen(port int32) (net.Listener, error) {
	if s.Listen != nil {
		return s.Listen(port)
	}
	return net.Listen("tcp", ":"+strconv.Itoa(int(port)))
}

func (s *Servers) log() *slog.Logger {
	if s.Log == nil {
		return slog.Default()
	}
	return s.Log
}
