package supervisor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"
)

// behaviour is what a test component does.
type behaviour int

const (
	// untilStopped runs until its context ends and records that it
	// stopped.
	untilStopped behaviour = iota
	// fails returns an error at once.
	fails
	// failsNamed returns an error at once that starts with its name.
	failsNamed
	// finishes returns nil at once, without being stopped.
	finishes
	// stuck records that it was stopped but keeps running past the stop
	// timeout, then returns its context's error.
	stuck
	// onStop is registered with OnStop and records when it runs.
	onStop
)

type component struct {
	tier int
	name string
	does behaviour
}

func TestGroup(t *testing.T) {
	const timeout = 100 * time.Millisecond
	boom := errors.New("boom")
	for _, tc := range []struct {
		name       string
		components []component
		// cancel ends the parent context once every component has
		// started.
		cancel bool
		// stopped is the order the components see their contexts end
		// in: the groups in order, each group in any order.
		stopped [][]string
		err     string
	}{{
		name: "the parent ends: tiers stop in order",
		components: []component{
			{2, "lb", untilStopped}, {0, "kubelet", untilStopped}, {1, "server", untilStopped},
			{0, "proxy", untilStopped}, {1, "events", onStop},
		},
		cancel:  true,
		stopped: [][]string{{"kubelet", "proxy"}, {"server", "events"}, {"lb"}},
	}, {
		name: "a failure stops everything and is reported by name",
		components: []component{
			{0, "kubelet", untilStopped}, {0, "proxy", fails}, {1, "server", untilStopped},
		},
		stopped: [][]string{{"kubelet"}, {"server"}},
		err:     "proxy: boom",
	}, {
		name: "a failure in a later tier still stops the earlier tiers first",
		components: []component{
			{0, "kubelet", untilStopped}, {1, "server", fails}, {1, "events", onStop}, {2, "lb", untilStopped},
		},
		stopped: [][]string{{"kubelet"}, {"events"}, {"lb"}},
		err:     "server: boom",
	}, {
		name: "an error that names its component says it once",
		components: []component{
			{0, "kubelet", failsNamed}, {1, "server", untilStopped},
		},
		stopped: [][]string{{"server"}},
		err:     "kubelet: boom",
	}, {
		name: "a component that finishes does not stop the others",
		components: []component{
			{0, "label", finishes}, {0, "kubelet", untilStopped}, {1, "server", untilStopped},
		},
		cancel:  true,
		stopped: [][]string{{"kubelet"}, {"server"}},
	}, {
		name: "a tier slow to stop holds the next one back only until the timeout",
		components: []component{
			{0, "stuck", stuck}, {1, "server", untilStopped},
		},
		cancel:  true,
		stopped: [][]string{{"stuck"}, {"server"}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			g := New(ctx, 3, timeout, slog.New(slog.NewTextHandler(io.Discard, nil)))
			var mu sync.Mutex
			var stopped []string
			// ended counts, per tier, the components that returned after
			// being stopped, or that will not be waited for (stuck ones).
			ended := map[int]int{}
			record := func(c component) {
				mu.Lock()
				defer mu.Unlock()
				stopped = append(stopped, c.name)
				for _, o := range tc.components {
					if o.tier < c.tier && (o.does == untilStopped || o.does == onStop) && ended[o.tier] < count(tc.components, o.tier) {
						t.Errorf("%s (tier %d) was stopped before every component of tier %d had returned", c.name, c.tier, o.tier)
						return
					}
				}
			}
			end := func(c component) {
				mu.Lock()
				ended[c.tier]++
				mu.Unlock()
			}
			for _, c := range tc.components {
				if c.does == stuck || c.does == finishes || c.does == fails || c.does == failsNamed {
					end(c)
				}
			}
			var started sync.WaitGroup
			for _, c := range tc.components {
				if c.does == onStop {
					g.OnStop(c.tier, c.name, func() {
						record(c)
						time.Sleep(timeout / 5)
						end(c)
					})
					continue
				}
				started.Add(1)
				g.Go(c.tier, c.name, func(ctx context.Context) error {
					started.Done()
					switch c.does {
					case fails:
						return boom
					case failsNamed:
						return fmt.Errorf("%s: %w", c.name, boom)
					case finishes:
						return nil
					case stuck:
						<-ctx.Done()
						record(c)
						time.Sleep(3 * timeout)
						return ctx.Err()
					}
					<-ctx.Done()
					record(c)
					// Long enough that a later tier stopped too early
					// would be seen above.
					time.Sleep(timeout / 5)
					end(c)
					return ctx.Err()
				})
			}
			started.Wait()
			if tc.cancel {
				cancel()
			}
			start := time.Now()
			err := g.Wait()
			if got := errString(err); got != tc.err {
				t.Errorf("Wait() = %q, want %q", got, tc.err)
			}
			if elapsed := time.Since(start); elapsed > 5*timeout {
				t.Errorf("Wait took %v", elapsed)
			}
			if !inGroups(stopped, tc.stopped) {
				t.Errorf("stopped in order %q, want groups %q", stopped, tc.stopped)
			}
			if g.Context().Err() == nil {
				t.Error("the group's context is still live after Wait")
			}
		})
	}
}

// count is how many components are in tier.
func count(components []component, tier int) int {
	n := 0
	for _, c := range components {
		if c.tier == tier {
			n++
		}
	}
	return n
}

// inGroups says whether got is want's groups one after the other, each
// in any order.
func inGroups(got []string, want [][]string) bool {
	for _, group := range want {
		if len(got) < len(group) {
			return false
		}
		head := slices.Clone(got[:len(group)])
		slices.Sort(head)
		sorted := slices.Sorted(slices.Values(group))
		if !slices.Equal(head, sorted) {
			return false
		}
		got = got[len(group):]
	}
	return len(got) == 0
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
