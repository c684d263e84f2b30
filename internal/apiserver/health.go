package apiserver

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// healthCheck is one named check of /livez, /readyz and /healthz.
type healthCheck struct {
	name string
	// readyOnly checks count for /readyz (and /healthz) but not /livez: a
	// server that is still starting is alive.
	readyOnly bool
	check     func(context.Context) error
}

func (s *Server) checkEtcd(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_, err := s.cfg.Store.CurrentRevision(ctx)
	return err
}

func (s *Server) checkCachesReady(context.Context) error {
	if !s.Ready() {
		return fmt.Errorf("caches not synced or bootstrap not finished")
	}
	return nil
}

// serveHealth answers /healthz, /livez, /readyz and /<endpoint>/<check>,
// with per-check lines under ?verbose as upstream prints them.
func (s *Server) serveHealth(w http.ResponseWriter, r *http.Request) bool {
	parts := splitPath(r.URL.Path)
	if len(parts) == 0 || len(parts) > 2 {
		return false
	}
	endpoint := parts[0]
	if endpoint != "healthz" && endpoint != "livez" && endpoint != "readyz" {
		return false
	}
	checks := s.checks
	if len(parts) == 2 {
		checks = nil
		for _, c := range s.checks {
			if c.name == parts[1] {
				checks = append(checks, c)
			}
		}
		if len(checks) == 0 {
			http.NotFound(w, r)
			return true
		}
	}
	exclude := map[string]bool{}
	for _, e := range r.URL.Query()["exclude"] {
		exclude[e] = true
	}
	var out strings.Builder
	failed := false
	for _, c := range checks {
		if endpoint == "livez" && c.readyOnly {
			continue
		}
		if exclude[c.name] {
			fmt.Fprintf(&out, "[+]%s excluded: ok\n", c.name)
			continue
		}
		if err := c.check(r.Context()); err != nil {
			failed = true
			fmt.Fprintf(&out, "[-]%s failed: reason withheld\n", c.name)
			s.log.Warn("health check failed", "endpoint", endpoint, "check", c.name, "err", err)
			continue
		}
		fmt.Fprintf(&out, "[+]%s ok\n", c.name)
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if failed {
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(w, "%s%s check failed\n", out.String(), endpoint)
		return true
	}
	if _, verbose := r.URL.Query()["verbose"]; verbose {
		fmt.Fprintf(w, "%s%s check passed\n", out.String(), endpoint)
		return true
	}
	fmt.Fprint(w, "ok")
	return true
}
