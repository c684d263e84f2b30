package framework

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"
)

// Framework is an ordered set of plugins and the algorithm that runs them.
type Framework struct {
	PreFilters []PreFilterPlugin
	Filters    []FilterPlugin
	PreScores  []PreScorePlugin
	Scores     []WeightedScore
	// PercentageOfNodesToScore bounds how many feasible nodes are looked
	// for before scoring; 0 selects upstream's adaptive value.
	PercentageOfNodesToScore int
	// Parallelism is the number of goroutines filtering and scoring nodes.
	Parallelism int

	// next is where the next search starts, so that successive pods spread
	// over all nodes when only a fraction of them is examined.
	next atomic.Int64
}

// Result is where a pod goes.
type Result struct {
	Node string
	// Evaluated and Feasible count the nodes looked at and those that fit.
	Evaluated, Feasible int
	// Top holds the best-ranked scored nodes, the chosen one first, then
	// by score; nil when a single feasible node made scoring needless.
	Top []NodeScore
}

// TopN is how many ranked nodes a Result carries (for the Scheduled event).
const TopN = 3

// Diagnosis records why each node was rejected.
type Diagnosis struct {
	NodeToStatus map[string]*Status
	// PreFilterMsg is set when a PreFilter rejected the pod on every node.
	PreFilterMsg string
	// PostFilterMsg is preemption's account, appended to the message.
	PostFilterMsg string
}

// ErrNoNodesAvailable is upstream's message for a cluster without nodes.
const ErrNoNodesAvailable = "no nodes available to schedule pods"

// FitError is the error when no node fits; its message is upstream's.
type FitError struct {
	Pod         *PodInfo
	NumAllNodes int
	Diagnosis   Diagnosis
}

// Error renders "0/5 nodes are available: 2 Insufficient cpu, 3 node(s)
// had untolerated taint {gpu: true}." with preemption's message after it.
func (f *FitError) Error() string {
	if f.NumAllNodes == 0 {
		return ErrNoNodesAvailable
	}
	msg := fmt.Sprintf("0/%d nodes are available:", f.NumAllNodes)
	if f.Diagnosis.PreFilterMsg != "" {
		msg += " " + f.Diagnosis.PreFilterMsg + "."
	}
	if h := ReasonHistogram(f.Diagnosis.NodeToStatus); h != "" {
		msg += " " + h + "."
	}
	if f.Diagnosis.PostFilterMsg != "" {
		msg += " " + f.Diagnosis.PostFilterMsg
	}
	return msg
}

// ReasonHistogram counts the reasons over nodes and renders them as
// upstream does: "N reason" sorted as strings, joined by ", ".
func ReasonHistogram(statuses map[string]*Status) string {
	counts := map[string]int{}
	for _, s := range statuses {
		for _, r := range s.Reasons() {
			counts[r]++
		}
	}
	out := make([]string, 0, len(counts))
	for r, n := range counts {
		out = append(out, fmt.Sprintf("%d %s", n, r))
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// parallelism defaults to the number of CPUs the process may use:
// upstream's 16 goroutines on a 2-core machine only add switching.
func (f *Framework) parallelism() int {
	if f.Parallelism > 0 {
		return f.Parallelism
	}
	return min(16, runtime.GOMAXPROCS(0))
}

// NumFeasibleNodesToFind is upstream's adaptive rule: all nodes up to 100;
// beyond, a percentage that falls from 50% by one point per 125 nodes to
// a floor of 5%, and never fewer than 100 nodes.
func NumFeasibleNodesToFind(percentage, numAll int) int {
	const minFeasible, minPercentage = 100, 5
	if numAll < minFeasible {
		return numAll
	}
	if percentage >= 100 {
		return numAll
	}
	if percentage <= 0 {
		percentage = 50 - numAll/125
		if percentage < minPercentage {
			percentage = minPercentage
		}
	}
	n := numAll * percentage / 100
	if n < minFeasible {
		return minFeasible
	}
	return n
}

// RunPreFilters runs every PreFilter; a rejection applies to all nodes.
func (f *Framework) RunPreFilters(ctx context.Context, state *CycleState, pod *PodInfo, snap *Snapshot) *Status {
	for _, p := range f.PreFilters {
		if st := p.PreFilter(ctx, state, pod, snap); !st.IsSuccess() {
			return st.WithPlugin(p.Name())
		}
	}
	return nil
}

// RunFilters runs the filters on one node and stops at the first
// rejection, as upstream does; the status names the plugin.
func (f *Framework) RunFilters(ctx context.Context, state *CycleState, pod *PodInfo, node *NodeInfo) *Status {
	for _, p := range f.Filters {
		if st := p.Filter(ctx, state, pod, node); !st.IsSuccess() {
			return st.WithPlugin(p.Name())
		}
	}
	return nil
}

// Schedule picks a node for pod. It is a pure function of the pod, the
// snapshot and rng: it writes nothing but the framework's search offset.
// When no node fits it returns a *FitError.
func (f *Framework) Schedule(ctx context.Context, state *CycleState, pod *PodInfo, snap *Snapshot, rng *rand.Rand) (Result, error) {
	return f.schedule(ctx, state, pod, snap, rng, nil)
}

// schedule is Schedule, filling tr when it is not nil: then every node is
// filtered and the feasible ones are scored even when only one fits.
func (f *Framework) schedule(ctx context.Context, state *CycleState, pod *PodInfo, snap *Snapshot, rng *rand.Rand, tr *Trace) (Result, error) {
	numAll := len(snap.Nodes)
	if numAll == 0 {
		return Result{}, &FitError{Pod: pod, Diagnosis: Diagnosis{NodeToStatus: map[string]*Status{}}}
	}
	if pod.ParseError != nil {
		return Result{}, fmt.Errorf("pod %s/%s: invalid affinity: %w", pod.Pod.Namespace, pod.Pod.Name, pod.ParseError)
	}
	if st := f.RunPreFilters(ctx, state, pod, snap); !st.IsSuccess() {
		if st.Code() == Error {
			return Result{}, fmt.Errorf("prefilter %s: %w", st.Plugin(), st.AsError())
		}
		diag := Diagnosis{NodeToStatus: make(map[string]*Status, numAll), PreFilterMsg: st.Message()}
		for _, n := range snap.Nodes {
			diag.NodeToStatus[n.Name()] = NewStatus(UnschedulableAndUnresolvable).WithPlugin(st.Plugin())
		}
		tr.rejectedAll(numAll, st, diag.NodeToStatus)
		return Result{}, &FitError{Pod: pod, NumAllNodes: numAll, Diagnosis: diag}
	}

	feasible, rejected, diag, err := f.findFeasible(ctx, state, pod, snap, tr.filterAll(), tr != nil)
	if err != nil {
		return Result{}, err
	}
	tr.filtered(numAll, len(feasible), diag.NodeToStatus)
	if len(feasible) == 0 {
		return Result{}, &FitError{Pod: pod, NumAllNodes: numAll, Diagnosis: diag}
	}
	res := Result{Evaluated: len(feasible) + rejected, Feasible: len(feasible)}
	if len(feasible) == 1 && !tr.filterAll() {
		res.Node = feasible[0].Name()
		return res, nil
	}
	scores, err := f.score(ctx, state, pod, snap, feasible, tr)
	if err != nil {
		return Result{}, err
	}
	res.Node = selectHost(scores, rng)
	res.Top = topScores(scores, res.Node, TopN)
	return res, nil
}

// findFeasible filters nodes in parallel, starting where the previous
// search stopped, until enough feasible nodes are found. It returns them
// with the number of nodes rejected; the diagnosis of each rejection is
// worked out only when no node fits, the one case that reads it, or for a
// trace (diagnose). With all, every node is filtered and a node a
// rejecter skipped gets the whole chain's verdict; a trace of an
// ordinary search names the rejecter, whose own Filter gives the reason.
func (f *Framework) findFeasible(ctx context.Context, state *CycleState, pod *PodInfo, snap *Snapshot, all, diagnose bool) ([]*NodeInfo, int, Diagnosis, error) {
	numAll := len(snap.Nodes)
	want := NumFeasibleNodesToFind(f.PercentageOfNodesToScore, numAll)
	if all {
		want = numAll
	}
	start := int(f.next.Load() % int64(numAll))
	feasible := make([]*NodeInfo, want)
	statuses := make([]*Status, numAll)
	var found, processed atomic.Int64
	var firstErr error
	var errOnce sync.Once
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	plan := f.planRejects(state)
	work := func(i int) {
		if plan != nil && plan.reject((start+i)%numAll) {
			statuses[(start+i)%numAll] = deferred
			processed.Add(1)
			return
		}
		node := snap.Nodes[(start+i)%numAll]
		st := f.filterNode(ctx, plan, state, pod, node, snap.Nominated)
		processed.Add(1)
		switch {
		case st.IsSuccess():
			if n := found.Add(1); n <= int64(want) {
				feasible[n-1] = node
			} else {
				cancel()
			}
		case st.Code() == Error:
			errOnce.Do(func() { firstErr = fmt.Errorf("filter %s on node %s: %w", st.Plugin(), node.Name(), st.AsError()) })
			cancel()
		default:
			statuses[(start+i)%numAll] = st
		}
	}
	parallelize(ctx, f.parallelism(), numAll, work)
	if firstErr != nil {
		return nil, 0, Diagnosis{}, firstErr
	}
	n := min(int(found.Load()), want)
	feasible = feasible[:n]
	f.next.Store(int64((start + int(processed.Load())) % numAll))
	rejected := 0
	for _, st := range statuses {
		if st != nil {
			rejected++
		}
	}
	diag := Diagnosis{NodeToStatus: map[string]*Status{}}
	if n > 0 && !diagnose {
		return feasible, rejected, diag, nil
	}
	if plan != nil {
		resolve := f.resolveDeferred
		if n > 0 && !all {
			resolve = plan.resolveByRejecter
		}
		if err := resolve(ctx, state, pod, snap, statuses); err != nil {
			return nil, 0, Diagnosis{}, err
		}
	}
	for i, st := range statuses {
		if st != nil {
			diag.NodeToStatus[snap.Nodes[i].Name()] = st
		}
	}
	return feasible, rejected, diag, nil
}

// parallelize runs work(0..n-1) on p goroutines in chunks, stopping early
// when ctx is cancelled.
func parallelize(ctx context.Context, p, n int, work func(i int)) {
	if n == 0 {
		return
	}
	chunk := max(1, min(64, n/(p*4)))
	var next atomic.Int64
	var g errgroup.Group
	for w := 0; w < min(p, (n+chunk-1)/chunk); w++ {
		g.Go(func() error {
			for ctx.Err() == nil {
				lo := int(next.Add(int64(chunk))) - chunk
				if lo >= n {
					return nil
				}
				for i := lo; i < min(lo+chunk, n) && ctx.Err() == nil; i++ {
					work(i)
				}
			}
			return nil
		})
	}
	_ = g.Wait()
}

// Parallelize exposes the chunked parallel loop to plugins.
func Parallelize(ctx context.Context, n int, work func(i int)) {
	parallelize(ctx, min(16, runtime.GOMAXPROCS(0)), n, work)
}

func (f *Framework) score(ctx context.Context, state *CycleState, pod *PodInfo, snap *Snapshot, nodes []*NodeInfo, tr *Trace) ([]NodeScore, error) {
	for _, p := range f.PreScores {
		if st := p.PreScore(ctx, state, pod, snap, nodes); !st.IsSuccess() {
			return nil, fmt.Errorf("prescore %s: %w", p.Name(), st.AsError())
		}
	}
	total := make([]NodeScore, len(nodes))
	for i, n := range nodes {
		total[i].Name = n.Name()
	}
	per := make([][]NodeScore, len(f.Scores))
	for j := range f.Scores {
		per[j] = make([]NodeScore, len(nodes))
	}
	var firstErr error
	var errOnce sync.Once
	parallelize(ctx, f.parallelism(), len(nodes), func(i int) {
		for j, ws := range f.Scores {
			s, st := ws.Plugin.Score(ctx, state, pod, nodes[i])
			if !st.IsSuccess() {
				errOnce.Do(func() {
					firstErr = fmt.Errorf("score %s on node %s: %w", ws.Plugin.Name(), nodes[i].Name(), st.AsError())
				})
				return
			}
			per[j][i] = NodeScore{Name: nodes[i].Name(), Score: s}
		}
	})
	if firstErr != nil {
		return nil, firstErr
	}
	tr.scoring(f.Scores, per)
	for j, ws := range f.Scores {
		if np, ok := ws.Plugin.(NormalizeScorePlugin); ok {
			if st := np.NormalizeScore(ctx, state, pod, per[j]); !st.IsSuccess() {
				return nil, fmt.Errorf("normalize %s: %w", ws.Plugin.Name(), st.AsError())
			}
		}
		for i := range nodes {
			total[i].Score += per[j][i].Score * ws.Weight
		}
	}
	tr.scored(f.Scores, per, total)
	return total, nil
}

// selectHost returns a node with the highest score, chosen uniformly
// among ties by reservoir sampling so no node is favoured by its position.
func selectHost(scores []NodeScore, rng *rand.Rand) string {
	best, ties := scores[0], 1
	for _, s := range scores[1:] {
		switch {
		case s.Score > best.Score:
			best, ties = s, 1
		case s.Score == best.Score:
			ties++
			if rng.IntN(ties) == 0 {
				best = s
			}
		}
	}
	return best.Name
}
