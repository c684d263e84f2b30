package framework

import (
	"context"
	"fmt"
	"sync"
)

// NodeRejecter is an optional part of a FilterPlugin whose PreFilter
// already knows, for whole groups of nodes at once, what its Filter will
// answer: topology spread rejects every node of an overloaded domain,
// anti-affinity every node hosting a pod its terms select. The search for
// feasible nodes asks it before running the filter chain, so a rejected
// node costs an array lookup instead of a walk through every filter and
// a read of the node object, and an accepted node skips that plugin's
// Filter; the nodes visited and those found stay exactly those of the
// full chain.
type NodeRejecter interface {
	// Rejecter returns a test, valid for this cycle, that is true exactly
	// for the nodes the plugin's Filter rejects, by index in the Nodes of
	// the snapshot PreFilter saw; nil when the plugin cannot tell. The
	// test is called concurrently and must only read.
	Rejecter(state *CycleState) func(i int) bool
}

// deferred marks a node skipped by a NodeRejecter: rejected, with the
// status the filter chain would give left unworked until someone reads it.
var deferred = NewStatus(Unschedulable, "deferred")

// rejectPlan is this cycle's use of the NodeRejecters: the combined test
// and the filters that still run on the nodes it accepts.
type rejectPlan struct {
	reject func(i int) bool
	rest   []FilterPlugin
	// by are the rejecters with their tests, for a trace's reasons.
	by []rejecterTest
}

type rejecterTest struct {
	plugin FilterPlugin
	test   func(int) bool
}

// planRejects returns the cycle's plan; nil when no filter offers a test.
func (f *Framework) planRejects(state *CycleState) *rejectPlan {
	var tests []func(int) bool
	var rest []FilterPlugin
	var by []rejecterTest
	for _, p := range f.Filters {
		if r, ok := p.(NodeRejecter); ok {
			if t := r.Rejecter(state); t != nil {
				tests = append(tests, t)
				by = append(by, rejecterTest{p, t})
				continue
			}
		}
		rest = append(rest, p)
	}
	switch len(tests) {
	case 0:
		return nil
	case 1:
		return &rejectPlan{reject: tests[0], rest: rest, by: by}
	}
	return &rejectPlan{rest: rest, by: by, reject: func(i int) bool {
		for _, t := range tests {
			if t(i) {
				return true
			}
		}
		return false
	}}
}

// filterNode runs the filter chain on a node the plan (if any) accepted.
// The plugins the plan answered for are left out unless pods are
// nominated: a nominated pod added to the node may change their verdict,
// so then the whole chain runs as usual.
func (f *Framework) filterNode(ctx context.Context, plan *rejectPlan, state *CycleState, pod *PodInfo, node *NodeInfo, noms *Nominations) *Status {
	if plan == nil || noms.Len() > 0 {
		return f.RunFiltersWithNominated(ctx, state, pod, node, noms)
	}
	for _, p := range plan.rest {
		if st := p.Filter(ctx, state, pod, node); !st.IsSuccess() {
			return st.WithPlugin(p.Name())
		}
	}
	return nil
}

// resolveDeferred runs the filter chain on the nodes a rejecter skipped,
// so the diagnosis names the first filter that rejects each of them, as
// if no node had been skipped. Only a cycle that found no node pays this:
// its statuses make the event's message and guide preemption.
func (f *Framework) resolveDeferred(ctx context.Context, state *CycleState, pod *PodInfo, snap *Snapshot, statuses []*Status) error {
	var firstErr error
	var errOnce sync.Once
	parallelize(ctx, f.parallelism(), len(statuses), func(i int) {
		if statuses[i] != deferred {
			return
		}
		st := f.RunFiltersWithNominated(ctx, state, pod, snap.Nodes[i], snap.Nominated)
		if st.Code() == Error {
			errOnce.Do(func() {
				firstErr = fmt.Errorf("filter %s on node %s: %w", st.Plugin(), snap.Nodes[i].Name(), st.AsError())
			})
		}
		statuses[i] = st
	})
	return firstErr
}

// resolveByRejecter gives each skipped node the verdict of the first
// rejecter that skipped it, from that plugin's own Filter: the reason a
// recent pod's explanation lists, without the whole chain's cost on
// every skipped node of every cycle. An earlier filter in the chain might
// have rejected the node first; an explanation asked for resolves with
// the whole chain instead.
func (p *rejectPlan) resolveByRejecter(ctx context.Context, state *CycleState, pod *PodInfo, snap *Snapshot, statuses []*Status) error {
	for i, st := range statuses {
		if st != deferred {
			continue
		}
		for _, r := range p.by {
			if r.test(i) {
				st := r.plugin.Filter(ctx, state, pod, snap.Nodes[i])
				if st.IsSuccess() {
					// The test and the Filter disagree: say only who skipped it.
					st = NewStatus(Unschedulable)
				}
				statuses[i] = st.WithPlugin(r.plugin.Name())
				break
			}
		}
	}
	return nil
}
