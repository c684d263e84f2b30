package framework

import (
	"context"
	"math/rand/v2"
)

// Trace is the full account of one decision: what each filter said about
// each node and what each score plugin gave each feasible node. Schedule
// keeps none of it; ScheduleTraced fills one. Its methods do nothing on a
// nil *Trace, so the untraced path pays one nil check per phase.
type Trace struct {
	// NumAllNodes is the size of the snapshot; Evaluated the nodes that
	// were filtered (the rest were not looked at); Feasible those that fit.
	NumAllNodes, Evaluated, Feasible int
	// Filters names the filter plugins in the order they run: a node
	// rejected by a later one passed every earlier one.
	Filters []string
	// PreFilter is set when a PreFilter rejected the pod on every node.
	PreFilter *Status
	// Rejected is the first rejecting filter's status per rejected node.
	Rejected map[string]*Status
	// ScorePlugins are the score plugins and weights, in order.
	ScorePlugins []PluginWeight
	// Scored has one entry per scored node, in no particular order.
	Scored []NodeTrace

	all bool
}

// PluginWeight names a score plugin and its weight.
type PluginWeight struct {
	Name   string
	Weight int64
}

// NodeTrace is one scored node: per score plugin (in Trace.ScorePlugins
// order) the raw score and the normalised score times the weight, and the
// total of the latter.
type NodeTrace struct {
	Name     string
	Raw      []int64
	Weighted []int64
	Total    int64
}

// ScheduleTraced is Schedule that also returns the trace of the decision.
// With all, every node is filtered, not only enough to score (the trace
// then accounts for the whole cluster), and the feasible nodes are scored
// even when only one fits. Without all the decision, and the search
// offset, are exactly Schedule's.
func (f *Framework) ScheduleTraced(ctx context.Context, state *CycleState, pod *PodInfo, snap *Snapshot, rng *rand.Rand, all bool) (Result, *Trace, error) {
	tr := &Trace{Filters: make([]string, len(f.Filters)), all: all}
	for i, p := range f.Filters {
		tr.Filters[i] = p.Name()
	}
	res, err := f.schedule(ctx, state, pod, snap, rng, tr)
	return res, tr, err
}

// filterAll reports whether every node is to be filtered and scored.
func (tr *Trace) filterAll() bool { return tr != nil && tr.all }

// rejectedAll records a PreFilter's rejection of every node.
func (tr *Trace) rejectedAll(numAll int, st *Status, statuses map[string]*Status) {
	if tr == nil {
		return
	}
	tr.NumAllNodes, tr.Evaluated = numAll, numAll
	tr.PreFilter, tr.Rejected = st, statuses
}

// filtered records the outcome of the filters.
func (tr *Trace) filtered(numAll, feasible int, rejected map[string]*Status) {
	if tr == nil {
		return
	}
	tr.NumAllNodes, tr.Feasible, tr.Rejected = numAll, feasible, rejected
	tr.Evaluated = feasible + len(rejected)
}

// scoring keeps the raw scores before normalisation rewrites them.
func (tr *Trace) scoring(plugins []WeightedScore, per [][]NodeScore) {
	if tr == nil || len(per) == 0 {
		return
	}
	tr.ScorePlugins = make([]PluginWeight, len(plugins))
	for j, ws := range plugins {
		tr.ScorePlugins[j] = PluginWeight{Name: ws.Plugin.Name(), Weight: ws.Weight}
	}
	tr.Scored = make([]NodeTrace, len(per[0]))
	// One backing array for every node's two lists: two allocations per
	// node were most of a traced decision's cost.
	k := len(per)
	buf := make([]int64, 2*k*len(tr.Scored))
	for i := range tr.Scored {
		b := buf[2*k*i : 2*k*(i+1) : 2*k*(i+1)]
		tr.Scored[i] = NodeTrace{Name: per[0][i].Name, Raw: b[:k:k], Weighted: b[k:]}
		for j := range per {
			tr.Scored[i].Raw[j] = per[j][i].Score
		}
	}
}

// scored records the normalised, weighted scores and totals.
func (tr *Trace) scored(plugins []WeightedScore, per [][]NodeScore, total []NodeScore) {
	if tr == nil {
		return
	}
	if len(tr.Scored) == 0 {
		// No score plugins: only totals (all zero).
		tr.Scored = make([]NodeTrace, len(total))
	}
	for i := range tr.Scored {
		tr.Scored[i].Name = total[i].Name
		tr.Scored[i].Total = total[i].Score
		for j, ws := range plugins {
			tr.Scored[i].Weighted[j] = per[j][i].Score * ws.Weight
		}
	}
}

// topScores returns up to n nodes: chosen first, then the others by score
// (highest first, ties by name), by insertion into a short list rather
// than sorting every node.
func topScores(scores []NodeScore, chosen string, n int) []NodeScore {
	top := make([]NodeScore, 1, n)
	top[0].Name = chosen
	for _, s := range scores {
		if s.Name == chosen {
			top[0] = s
			continue
		}
		if len(top) == n && !better(s, top[n-1]) {
			continue
		}
		if len(top) < n {
			top = append(top, s)
		} else {
			top[n-1] = s
		}
		for k := len(top) - 1; k > 1 && better(top[k], top[k-1]); k-- {
			top[k], top[k-1] = top[k-1], top[k]
		}
	}
	return top
}

func better(a, b NodeScore) bool {
	return a.Score > b.Score || a.Score == b.Score && a.Name < b.Name
}
