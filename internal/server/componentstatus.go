package server

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orca-project/orca/internal/registry/core"
	"github.com/orca-project/orca/internal/storage"
)

// componentProbes is what componentstatuses reports: etcd always, and the
// scheduler and controller manager once this server starts them (in a
// split control plane they run elsewhere, and are not listed here).
type componentProbes struct {
	mu     sync.Mutex
	probes []core.ComponentProbe
}

func newComponentProbes(store *storage.Store) *componentProbes {
	p := &componentProbes{}
	p.add("etcd-0", func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		_, err := store.CurrentRevision(ctx)
		return err
	})
	return p
}

func (p *componentProbes) add(name string, check func(context.Context) error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.probes = append(p.probes, core.ComponentProbe{Name: name, Check: check})
}

// source is the apiserver's Computed source for componentstatuses.
func (p *componentProbes) source() map[schema.GroupVersionResource]func(context.Context) []runtime.Object {
	return map[schema.GroupVersionResource]func(context.Context) []runtime.Object{
		core.Componentstatuses.GroupVersionResource(): func(ctx context.Context) []runtime.Object {
			p.mu.Lock()
			probes := append([]core.ComponentProbe(nil), p.probes...)
			p.mu.Unlock()
			return core.ComponentStatuses(ctx, probes)
		},
	}
}

// controllerManagerProbe asks the in-process controller manager what its
// /healthz would answer (its leader-election watchdog).
func controllerManagerProbe(healthy func(*http.Request) error) func(context.Context) error {
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "/healthz", nil)
		if err != nil {
			return err
		}
		if err := healthy(req); err != nil {
			return fmt.Errorf("leaderElection: %w", err)
		}
		return nil
	}
}

// schedulerProbe is what the scheduler's /healthz answers: ok while it
// runs, and in-process it runs as long as this server does.
func schedulerProbe(context.Context) error { return nil }
