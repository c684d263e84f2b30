// Package supervisor runs a node agent's long-running components under
// one error group and stops them in tiers, as the control plane's
// server.Start does: the components that talk to others stop first, and
// what they talk through stops after they have returned.
//
// A component is a function that runs until its context ends. One that
// returns an error before then has failed: the error is logged, every
// component is stopped in tier order, and Wait returns that error, named
// after the component. One that returns nil early has simply finished.
// Components that are expected to come and go (a listener that retries
// its port, a daemon that is restarted when it dies) handle that
// themselves and do not return.
package supervisor

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
)

// DefaultStopTimeout is how long one tier may take to stop before the
// next is stopped anyway; the server allows its clients as long.
const DefaultStopTimeout = 10 * time.Second

// Group is a set of components in tiers. Tier 0 stops first.
type Group struct {
	eg      *errgroup.Group
	ctx     context.Context
	stop    context.CancelFunc
	tiers   []*tier
	timeout time.Duration
	log     *slog.Logger
}

type tier struct {
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	running map[string]int
	idle    *sync.Cond
}

// New returns a group of tiers tiers (at least one) that stops when ctx
// ends or a component fails. A tier is given timeout (DefaultStopTimeout
// when 0) to stop before the next one is stopped regardless; log (the
// default logger when nil) reports failures and slow stops.
func New(ctx context.Context, tiers int, timeout time.Duration, log *slog.Logger) *Group {
	if tiers < 1 {
		tiers = 1
	}
	if timeout == 0 {
		timeout = DefaultStopTimeout
	}
	if log == nil {
		log = slog.Default()
	}
	ctx, stop := context.WithCancel(ctx)
	eg, gctx := errgroup.WithContext(ctx)
	g := &Group{eg: eg, ctx: gctx, stop: stop, timeout: timeout, log: log}
	// The tiers' contexts keep ctx's values but not its cancellation:
	// the group ends them one after the other.
	base := context.WithoutCancel(ctx)
	for range tiers {
		t := &tier{running: map[string]int{}}
		t.ctx, t.cancel = context.WithCancel(base)
		t.idle = sync.NewCond(&t.mu)
		g.tiers = append(g.tiers, t)
	}
	eg.Go(g.stopInOrder)
	return g
}

// Context ends when the group starts stopping: ctx ended, Stop was
// called, or a component failed. Start-up work between components runs
// under it.
func (g *Group) Context() context.Context { return g.ctx }

// Go runs a component in tier t (clamped to the group's tiers) with that
// tier's context.
func (g *Group) Go(t int, name string, run func(context.Context) error) {
	tr := g.tiers[max(0, min(t, len(g.tiers)-1))]
	tr.mu.Lock()
	tr.running[name]++
	tr.mu.Unlock()
	g.eg.Go(func() error {
		defer func() {
			tr.mu.Lock()
			if tr.running[name]--; tr.running[name] == 0 {
				delete(tr.running, name)
			}
			tr.idle.Broadcast()
			tr.mu.Unlock()
		}()
		err := run(tr.ctx)
		if tr.ctx.Err() != nil {
			// Stopped: whatever it says now is about being stopped.
			return nil
		}
		if err != nil {
			g.log.Error("component failed; stopping", "component", name, "err", err)
			// Packages name themselves in their errors ("kubelet: ...");
			// say it once.
			if strings.HasPrefix(err.Error(), name+": ") {
				return err
			}
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	})
}

// OnStop runs stop when tier t stops, alongside that tier's components
// and after every earlier tier's have returned: for things that are
// started and stopped rather than run.
func (g *Group) OnStop(t int, name string, stop func()) {
	g.Go(t, name, func(ctx context.Context) error {
		<-ctx.Done()
		stop()
		return nil
	})
}

// Stop starts stopping the group without an error.
func (g *Group) Stop() { g.stop() }

// Wait returns once the group has stopped and every component has
// returned, with the first failure, or nil when the group was stopped.
func (g *Group) Wait() error {
	err := g.eg.Wait()
	g.stop()
	return err
}

// stopInOrder waits for the group to start stopping, then ends the
// tiers' contexts one after the other.
func (g *Group) stopInOrder() error {
	<-g.ctx.Done()
	for i, t := range g.tiers {
		t.cancel()
		if left := t.wait(g.timeout); len(left) > 0 {
			g.log.Warn("components slow to stop; stopping the next tier anyway", "tier", i, "components", left)
		}
	}
	return nil
}

// wait waits at most d for the tier's components to return, and names
// those still running.
func (t *tier) wait(d time.Duration) []string {
	timer := time.AfterFunc(d, func() {
		t.mu.Lock()
		t.idle.Broadcast()
		t.mu.Unlock()
	})
	defer timer.Stop()
	deadline := time.Now().Add(d)
	t.mu.Lock()
	defer t.mu.Unlock()
	for len(t.running) > 0 && time.Now().Before(deadline) {
		t.idle.Wait()
	}
	left := make([]string, 0, len(t.running))
	for name := range t.running {
		left = append(left, name)
	}
	sort.Strings(left)
	return left
}
