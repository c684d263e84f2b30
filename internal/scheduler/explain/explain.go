// Package explain turns the framework's trace of one scheduling decision
// into an Explanation a person can read: the verdict, the counts by
// reason (the words of the FailedScheduling message), the rejected nodes
// with the plugin that rejected each, and the scored nodes with each
// plugin's score. It also holds the versioned, size-bounded JSON form the
// scheduler writes into a pod annotation, the bounded store of recent
// explanations and the text `orca explain` prints. Everything here is a
// pure function of its input except the Store.
package explain

import (
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/orca-project/orca/internal/scheduler/framework"
)

const (
	// RequestAnnotation asks the scheduler to explain its decision for the
	// pod into Annotation: "true" keeps up to DefaultListCap nodes per list,
	// "full" as many as fit in MaxBytes. Either way every node is filtered.
	RequestAnnotation = "scheduler.orca.io/explain"
	// Annotation holds the explanation as compact JSON.
	Annotation = "scheduler.orca.io/explanation"
	// Version is the schema version, the "v" field.
	Version = 1
	// DefaultListCap bounds the rejected and scored lists of an
	// explanation unless "full" is asked for.
	DefaultListCap = 100
	// MaxBytes bounds the annotation, well below the 256 KiB that all of a
	// pod's annotations may take together.
	MaxBytes = 64 << 10
)

// Results of a decision.
const (
	Scheduled     = "Scheduled"
	Unschedulable = "Unschedulable"
	Error         = "Error"
)

// Explanation is one scheduling attempt's account. Its JSON form is the
// annotation's schema (version 1).
type Explanation struct {
	Version   int       `json:"v"`
	Pod       string    `json:"pod"`
	UID       string    `json:"uid,omitempty"`
	Time      time.Time `json:"time"`
	Result    string    `json:"result"`
	Node      string    `json:"node,omitempty"`
	Message   string    `json:"message,omitempty"`
	Nodes     int       `json:"nodes"`
	Evaluated int       `json:"evaluated"`
	Feasible  int       `json:"feasible"`
	// PreFilter is a PreFilter's rejection of the pod on every node.
	PreFilter *Verdict `json:"preFilter,omitempty"`
	// Reasons counts the rejected nodes by reason, as the FailedScheduling
	// message does; a node with two reasons counts under both.
	Reasons []ReasonCount `json:"reasons,omitempty"`
	// Rejected lists rejected nodes, those that came closest first: a node
	// turned away by a later filter passed more of them, and one that
	// preemption could free (Unschedulable) ranks before one it could not.
	Rejected        []Verdict `json:"rejected,omitempty"`
	RejectedOmitted int       `json:"rejectedOmitted,omitempty"`
	// Closest names up to three nodes that came closest when none fit.
	Closest []string `json:"closest,omitempty"`
	// ScorePlugins are the score plugins in the order of each Scored
	// node's Raw and Weighted lists.
	ScorePlugins  []Plugin     `json:"scorePlugins,omitempty"`
	Scored        []ScoredNode `json:"scored,omitempty"`
	ScoredOmitted int          `json:"scoredOmitted,omitempty"`
}

// Verdict is a filter's rejection of a node.
type Verdict struct {
	Node   string `json:"node,omitempty"`
	Plugin string `json:"plugin"`
	// Code is Unschedulable (preemption may help) or
	// UnschedulableAndUnresolvable.
	Code   string `json:"code"`
	Reason string `json:"reason,omitempty"`
}

// ReasonCount is one term of "0/5 nodes are available: 2 Insufficient cpu".
type ReasonCount struct {
	Reason string `json:"reason"`
	Count  int    `json:"count"`
}

// Plugin is a score plugin and its weight.
type Plugin struct {
	Name   string `json:"name"`
	Weight int64  `json:"weight"`
}

// ScoredNode is a feasible node's scores; Rank 1 is the chosen node.
type ScoredNode struct {
	Node     string  `json:"node"`
	Rank     int     `json:"rank"`
	Total    int64   `json:"total"`
	Raw      []int64 `json:"raw"`
	Weighted []int64 `json:"weighted"`
}

// Input is what Build explains.
type Input struct {
	Namespace, Name, UID string
	Time                 time.Time
	// Node is the chosen node; empty when the pod stays Pending.
	Node string
	// Err is the attempt's error: a *framework.FitError's message is the
	// FailedScheduling message.
	Err error
	// Unschedulable tells a FitError from any other error.
	Unschedulable bool
	Trace         *framework.Trace
	// ListCap bounds the rejected and scored lists; 0 means no bound.
	ListCap int
}

// Build explains one attempt.
func Build(in Input) *Explanation {
	tr := in.Trace
	if tr == nil {
		tr = &framework.Trace{}
	}
	e := &Explanation{
		Version: Version, Pod: in.Namespace + "/" + in.Name, UID: in.UID, Time: in.Time.UTC().Truncate(time.Second),
		Node: in.Node, Nodes: tr.NumAllNodes, Evaluated: tr.Evaluated, Feasible: tr.Feasible,
	}
	switch {
	case in.Err == nil:
		e.Result = Scheduled
	case in.Unschedulable:
		e.Result = Unschedulable
	default:
		e.Result = Error
	}
	if in.Err != nil {
		e.Message = in.Err.Error()
	}
	if tr.PreFilter != nil {
		e.PreFilter = &Verdict{Plugin: tr.PreFilter.Plugin(), Code: tr.PreFilter.Code().String(), Reason: tr.PreFilter.Message()}
	} else {
		e.Reasons = reasonCounts(tr.Rejected)
		e.Rejected, e.RejectedOmitted = rejected(tr, in.ListCap)
		if in.Node == "" {
			for _, v := range e.Rejected[:min(framework.TopN, len(e.Rejected))] {
				e.Closest = append(e.Closest, v.Node)
			}
		}
	}
	for _, p := range tr.ScorePlugins {
		e.ScorePlugins = append(e.ScorePlugins, Plugin{Name: p.Name, Weight: p.Weight})
	}
	e.Scored, e.ScoredOmitted = scored(tr.Scored, in.Node, in.ListCap)
	return e
}

// reasonCounts is framework.ReasonHistogram as data, in the same order.
func reasonCounts(statuses map[string]*framework.Status) []ReasonCount {
	counts := map[string]int{}
	for _, s := range statuses {
		for _, r := range s.Reasons() {
			counts[r]++
		}
	}
	out := make([]ReasonCount, 0, len(counts))
	for r, n := range counts {
		out = append(out, ReasonCount{Reason: r, Count: n})
	}
	// The message sorts the rendered "N reason" strings; so do we.
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// String renders the count as the FailedScheduling message does.
func (r ReasonCount) String() string { return strconv.Itoa(r.Count) + " " + r.Reason }

func rejected(tr *framework.Trace, listCap int) ([]Verdict, int) {
	order := make(map[string]int, len(tr.Filters))
	for i, name := range tr.Filters {
		order[name] = i
	}
	out := make([]Verdict, 0, len(tr.Rejected))
	for node, st := range tr.Rejected {
		out = append(out, Verdict{Node: node, Plugin: st.Plugin(), Code: st.Code().String(), Reason: st.Message()})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if oa, ob := order[a.Plugin], order[b.Plugin]; oa != ob {
			return oa > ob
		}
		if a.Code != b.Code {
			return a.Code == framework.Unschedulable.String()
		}
		return a.Node < b.Node
	})
	return capList(out, listCap)
}

func scored(nodes []framework.NodeTrace, chosen string, listCap int) ([]ScoredNode, int) {
	out := make([]ScoredNode, 0, len(nodes))
	for _, n := range nodes {
		out = append(out, ScoredNode{Node: n.Name, Total: n.Total, Raw: n.Raw, Weighted: n.Weighted})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if (a.Node == chosen) != (b.Node == chosen) {
			return a.Node == chosen
		}
		if a.Total != b.Total {
			return a.Total > b.Total
		}
		return a.Node < b.Node
	})
	for i := range out {
		out[i].Rank = i + 1
	}
	out, omitted := capList(out, listCap)
	// The trace keeps every node's scores in one backing array; a kept
	// explanation must not hold it (nor the uncapped list) alive.
	for i := range out {
		out[i].Raw, out[i].Weighted = slices.Clone(out[i].Raw), slices.Clone(out[i].Weighted)
	}
	return out, omitted
}

// capList keeps the first n entries in an array of their own, so that an
// explanation kept in the store does not hold the whole list.
func capList[T any](l []T, n int) ([]T, int) {
	if n <= 0 || len(l) <= n {
		return l, 0
	}
	return slices.Clone(l[:n]), len(l) - n
}

// Summary is the verdict in one line, as `orca explain` heads its output
// and the scheduler logs it.
func (e *Explanation) Summary() string {
	if e.Node != "" {
		return "Scheduled to " + e.Node
	}
	return "Pending: " + e.Message
}

// ReasonsText renders the counts as the FailedScheduling message does.
func (e *Explanation) ReasonsText() string {
	parts := make([]string, len(e.Reasons))
	for i, r := range e.Reasons {
		parts[i] = r.String()
	}
	return strings.Join(parts, ", ")
}
