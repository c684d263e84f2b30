package framework

import "context"

// MaxNodeScore is the highest score a score plugin gives after
// normalisation; MinNodeScore the lowest.
const (
	MaxNodeScore int64 = 100
	MinNodeScore int64 = 0
)

// Plugin names itself; the name appears in statuses and logs.
type Plugin interface {
	Name() string
}

// PreFilterPlugin computes, once per pod, what its Filter needs (topology
// counts, matching pods). A rejection here rejects every node.
type PreFilterPlugin interface {
	Plugin
	PreFilter(ctx context.Context, state *CycleState, pod *PodInfo, snap *Snapshot) *Status
}

// FilterPlugin decides whether the pod can run on one node. It is called
// concurrently for different nodes and must not write shared state.
type FilterPlugin interface {
	Plugin
	Filter(ctx context.Context, state *CycleState, pod *PodInfo, node *NodeInfo) *Status
}

// PreScorePlugin prepares scoring over the feasible nodes.
type PreScorePlugin interface {
	Plugin
	PreScore(ctx context.Context, state *CycleState, pod *PodInfo, snap *Snapshot, feasible []*NodeInfo) *Status
}

// ScorePlugin ranks one feasible node; higher is better. It is called
// concurrently for different nodes.
type ScorePlugin interface {
	Plugin
	Score(ctx context.Context, state *CycleState, pod *PodInfo, node *NodeInfo) (int64, *Status)
}

// NormalizeScorePlugin rescales a score plugin's raw scores to
// [MinNodeScore, MaxNodeScore] once all nodes are scored.
type NormalizeScorePlugin interface {
	Plugin
	NormalizeScore(ctx context.Context, state *CycleState, pod *PodInfo, scores []NodeScore) *Status
}

// NodeScore is a node's score from one plugin (or the weighted total).
type NodeScore struct {
	Name  string
	Score int64
}

// CycleState carries data from a plugin's PreFilter/PreScore to its
// Filter/Score within one scheduling attempt. Writes happen only in the
// sequential phases and reads in the parallel ones, so it needs no lock
// (a lock here cost a few percent of a cycle: every Filter and Score
// reads it once per node).
type CycleState struct {
	m map[string]any
}

// NewCycleState returns an empty state.
func NewCycleState() *CycleState { return &CycleState{m: map[string]any{}} }

// Read returns the value stored under key.
func (c *CycleState) Read(key string) (any, bool) {
	v, ok := c.m[key]
	return v, ok
}

// Write stores a value under key; only from sequential phases.
func (c *CycleState) Write(key string, v any) { c.m[key] = v }

// WeightedScore pairs a score plugin with its weight.
type WeightedScore struct {
	Plugin ScorePlugin
	Weight int64
}

// DefaultNormalizeScore scales scores so the highest becomes maxPriority
// (and, when reverse, inverts them so the lowest raw score wins).
func DefaultNormalizeScore(maxPriority int64, reverse bool, scores []NodeScore) {
	var highest int64
	for _, s := range scores {
		highest = max(highest, s.Score)
	}
	if highest == 0 {
		if reverse {
			for i := range scores {
				scores[i].Score = maxPriority
			}
		}
		return
	}
	for i := range scores {
		s := maxPriority * scores[i].Score / highest
		if reverse {
			s = maxPriority - s
		}
		scores[i].Score = s
	}
}
