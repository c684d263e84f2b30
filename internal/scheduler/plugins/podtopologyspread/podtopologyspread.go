// Package podtopologyspread enforces spec.topologySpreadConstraints:
// DoNotSchedule constraints filter nodes whose domain would exceed
// maxSkew, ScheduleAnyway constraints score emptier domains higher.
package podtopologyspread

import (
	"context"
	"errors"
	"fmt"
	"math"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	v1helper "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"

	"github.com/orca-project/orca/internal/scheduler/framework"
)

// Name is the plugin's name.
const Name = "PodTopologySpread"

// Upstream's reasons.
const (
	ErrReasonConstraintsNotMatch = "node(s) didn't match pod topology spread constraints"
	ErrReasonNodeLabelNotMatch   = ErrReasonConstraintsNotMatch + " (missing required label)"
)

const (
	filterKey = Name + "/filter"
	scoreKey  = Name + "/score"
)

var errNoState = errors.New("podtopologyspread: no prefilter state")

// Plugin is the filter and the score. It keeps PreFilter's domain counts
// across cycles (see domainCounts), one set per distinct set of
// constraints, so workloads scheduled in turn do not recount each other's.
type Plugin struct {
	kept map[string]*domainCounts
}

// keptLimit bounds the sets of counts kept; past it they start over.
const keptLimit = 16

func (pl *Plugin) keptFor(sig string) *domainCounts {
	if d, ok := pl.kept[sig]; ok {
		return d
	}
	if pl.kept == nil || len(pl.kept) >= keptLimit {
		pl.kept = map[string]*domainCounts{}
	}
	d := &domainCounts{}
	pl.kept[sig] = d
	return d
}

var (
	_ framework.PreFilterPlugin      = (*Plugin)(nil)
	_ framework.FilterPlugin         = (*Plugin)(nil)
	_ framework.PreScorePlugin       = (*Plugin)(nil)
	_ framework.ScorePlugin          = (*Plugin)(nil)
	_ framework.NormalizeScorePlugin = (*Plugin)(nil)
	_ framework.NodeRejecter         = (*Plugin)(nil)
)

// Name implements framework.Plugin.
func (*Plugin) Name() string { return Name }

type constraint struct {
	// memoKey names the selector in the nodes' match-count memos.
	memoKey      string
	maxSkew      int32
	key          string
	minDomains   int32
	selector     labels.Selector
	honorTaints  bool
	ignoreAffine bool
}

type pair struct{ key, value string }

type filterState struct {
	constraints []constraint
	// counts[i] maps constraint i's domains (label values) to the number
	// of matching pods; one map per constraint, keyed by value alone, so
	// two constraints over one key with different selectors stay apart.
	counts []map[string]int
	// minMatch[i] is the least-loaded domain's count; self[i] whether the
	// pod counts for its own constraint.
	minMatch []int
	self     []int
	// reject is Filter's verdict by node index when the counts were kept
	// across cycles; nil otherwise.
	reject func(i int) bool
}

func constraints(pod *v1.Pod, when v1.UnsatisfiableConstraintAction) ([]constraint, error) {
	var out []constraint
	for _, c := range pod.Spec.TopologySpreadConstraints {
		if c.WhenUnsatisfiable != when {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(c.LabelSelector)
		if err != nil {
			return nil, fmt.Errorf("topology spread selector: %w", err)
		}
		for _, k := range c.MatchLabelKeys {
			if v, ok := pod.Labels[k]; ok {
				if r, err := labels.NewRequirement(k, "in", []string{v}); err == nil {
					sel = sel.Add(*r)
				}
			}
		}
		cc := constraint{maxSkew: c.MaxSkew, key: c.TopologyKey, minDomains: 1, selector: sel, memoKey: framework.SelectorKey(pod.Namespace, sel)}
		if c.MinDomains != nil {
			cc.minDomains = *c.MinDomains
		}
		cc.honorTaints = c.NodeTaintsPolicy != nil && *c.NodeTaintsPolicy == v1.NodeInclusionPolicyHonor
		cc.ignoreAffine = c.NodeAffinityPolicy != nil && *c.NodeAffinityPolicy == v1.NodeInclusionPolicyIgnore
		out = append(out, cc)
	}
	return out, nil
}

// eligible reports whether node counts as a domain for the constraints:
// it has every key, matches the pod's node affinity (unless the policy
// says Ignore) and, with nodeTaintsPolicy Honor, has no untolerated taint.
func eligible(pod *v1.Pod, req nodeaffinity.RequiredNodeAffinity, cs []constraint, node *v1.Node) bool {
	for _, c := range cs {
		if _, ok := node.Labels[c.key]; !ok {
			return false
		}
		if !c.ignoreAffine {
			if ok, _ := req.Match(node); !ok {
				return false
			}
		}
		if c.honorTaints {
			if _, bad := v1helper.FindMatchingUntoleratedTaint(klog.Background(), node.Spec.Taints, pod.Spec.Tolerations, func(t *v1.Taint) bool {
				return t.Effect == v1.TaintEffectNoSchedule || t.Effect == v1.TaintEffectNoExecute
			}, false); bad {
				return false
			}
		}
	}
	return true
}

func countMatching(pod *v1.Pod, c constraint, node *framework.NodeInfo) int {
	return node.CountMatching(c.memoKey, pod.Namespace, c.selector)
}

// PreFilter counts matching pods per domain over the eligible nodes, in
// one pass that reads each node's labels once.
func (pl *Plugin) PreFilter(_ context.Context, cs *framework.CycleState, pod *framework.PodInfo, snap *framework.Snapshot) *framework.Status {
	cons, err := constraints(pod.Pod, v1.DoNotSchedule)
	if err != nil {
		return framework.AsStatus(err)
	}
	s := &filterState{constraints: cons}
	if len(cons) > 0 {
		req := nodeaffinity.GetRequiredNodeAffinity(pod.Pod)
		hasAffinity := pod.Pod.Spec.NodeSelector != nil || (pod.Pod.Spec.Affinity != nil && pod.Pod.Spec.Affinity.NodeAffinity != nil)
		s.counts = make([]map[string]int, len(cons))
		s.self = make([]int, len(cons))
		for i, c := range cons {
			s.counts[i] = map[string]int{}
			if c.selector.Matches(labels.Set(pod.Pod.Labels)) {
				s.self[i] = 1
			}
		}
		if !hasAffinity && !needsTaints(cons) {
			// Every node with the keys is eligible: the counts depend on
			// the selectors alone and can be kept across cycles. The cycle
			// gets a copy, because preemption's dry runs call PreFilter
			// again on other snapshots while this state is still in use.
			sig := signature(cons)
			d := pl.keptFor(sig)
			d.update(sig, pod, cons, snap)
			d.fill(s)
			s.setMinMatch()
			s.reject = d.rejecter(s)
		} else {
			pl.prefilterScan(s, pod, req, hasAffinity, cons, snap)
			s.setMinMatch()
		}
	}
	cs.Write(filterKey, s)
	return nil
}

func (s *filterState) setMinMatch() {
	s.minMatch = make([]int, len(s.constraints))
	for i, c := range s.constraints {
		s.minMatch[i] = minMatch(s.counts[i], c.minDomains)
	}
}

// Rejecter implements framework.NodeRejecter.
func (*Plugin) Rejecter(cs *framework.CycleState) func(i int) bool {
	if v, ok := cs.Read(filterKey); ok {
		return v.(*filterState).reject
	}
	return nil
}

// prefilterScan counts over every node, for pods whose node affinity or
// taint policy makes eligibility depend on the pod.
func (pl *Plugin) prefilterScan(s *filterState, pod *framework.PodInfo, req nodeaffinity.RequiredNodeAffinity, hasAffinity bool, cons []constraint, snap *framework.Snapshot) {
	vals := make([]string, len(cons))
nodes:
	for _, n := range snap.Nodes {
		for i, c := range cons {
			v, ok := n.Node.Labels[c.key]
			if !ok {
				continue nodes
			}
			vals[i] = v
		}
		if (hasAffinity || needsTaints(cons)) && !eligible(pod.Pod, req, cons, n.Node) {
			continue
		}
		for i, c := range cons {
			s.counts[i][vals[i]] += countMatching(pod.Pod, c, n)
		}
	}
}

func needsTaints(cons []constraint) bool {
	for _, c := range cons {
		if c.honorTaints {
			return true
		}
	}
	return false
}

// Filter implements framework.FilterPlugin: placing the pod on node must
// not make its domain exceed the least-loaded domain by more than maxSkew.
func (*Plugin) Filter(_ context.Context, cs *framework.CycleState, pod *framework.PodInfo, node *framework.NodeInfo) *framework.Status {
	v, ok := cs.Read(filterKey)
	if !ok {
		return framework.AsStatus(errNoState)
	}
	s := v.(*filterState)
	for i, c := range s.constraints {
		val, ok := node.Node.Labels[c.key]
		if !ok {
			return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonNodeLabelNotMatch)
		}
		if skew := s.counts[i][val] + s.self[i] - s.minMatch[i]; skew > int(c.maxSkew) {
			return framework.NewStatus(framework.Unschedulable, ErrReasonConstraintsNotMatch)
		}
	}
	return nil
}

type scoreState struct {
	constraints []constraint
	counts      map[pair]int
	weights     []float64
	// local marks constraints over a unique hostname: a node is its own
	// domain, so Score counts on the node instead of PreScore counting
	// over the cluster.
	local []bool
}

// PreScore counts matching pods per domain for the soft constraints.
func (*Plugin) PreScore(_ context.Context, cs *framework.CycleState, pod *framework.PodInfo, snap *framework.Snapshot, feasible []*framework.NodeInfo) *framework.Status {
	cons, err := constraints(pod.Pod, v1.ScheduleAnyway)
	if err != nil {
		return framework.AsStatus(err)
	}
	s := &scoreState{constraints: cons, counts: map[pair]int{}}
	if len(cons) > 0 {
		s.local = make([]bool, len(cons))
		global := false
		for i, c := range cons {
			s.local[i] = snap.IsLocal(c.key)
			global = global || !s.local[i]
		}
		// Domains are those of the feasible nodes; pods are counted on
		// every eligible node of those domains. A local constraint's
		// domains are the feasible nodes themselves (every node has a
		// unique hostname), so they are not collected one by one.
		domains := map[pair]bool{}
		for _, n := range feasible {
			if !global {
				break
			}
			for i, c := range cons {
				if v, ok := n.Node.Labels[c.key]; ok && !s.local[i] {
					domains[pair{c.key, v}] = true
				}
			}
		}
		req := nodeaffinity.GetRequiredNodeAffinity(pod.Pod)
		for _, n := range snap.Nodes {
			if !global {
				break
			}
			if !eligible(pod.Pod, req, cons, n.Node) {
				continue
			}
			for i, c := range cons {
				if s.local[i] {
					continue
				}
				p := pair{c.key, n.Node.Labels[c.key]}
				if domains[p] {
					s.counts[p] += countMatching(pod.Pod, c, n)
				}
			}
		}
		s.weights = make([]float64, len(cons))
		for i, c := range cons {
			d := 0
			if s.local[i] {
				d = len(feasible)
			}
			for p := range domains {
				if p.key == c.key {
					d++
				}
			}
			// Upstream weighs a constraint by log(domains+2) so that
			// spreading over many domains counts for more.
			s.weights[i] = math.Log(float64(d + 2))
		}
	}
	cs.Write(scoreKey, s)
	return nil
}

// Score is the weighted number of matching pods in the node's domains
// (lower is better; NormalizeScore reverses it).
func (*Plugin) Score(_ context.Context, cs *framework.CycleState, pod *framework.PodInfo, node *framework.NodeInfo) (int64, *framework.Status) {
	v, ok := cs.Read(scoreKey)
	if !ok {
		return 0, framework.AsStatus(errNoState)
	}
	s := v.(*scoreState)
	var score float64
	for i, c := range s.constraints {
		if s.local[i] {
			// Every node has the key of a local constraint.
			score += float64(countMatching(pod.Pod, c, node))*s.weights[i] + float64(c.maxSkew-1)
			continue
		}
		if val, ok := node.Node.Labels[c.key]; ok {
			score += float64(s.counts[pair{c.key, val}])*s.weights[i] + float64(c.maxSkew-1)
		}
	}
	return int64(math.Round(score)), nil
}

// NormalizeScore maps the lowest count to MaxNodeScore.
func (*Plugin) NormalizeScore(_ context.Context, cs *framework.CycleState, _ *framework.PodInfo, scores []framework.NodeScore) *framework.Status {
	if v, ok := cs.Read(scoreKey); !ok || len(v.(*scoreState).constraints) == 0 {
		for i := range scores {
			scores[i].Score = 0
		}
		return nil
	}
	if len(scores) == 0 {
		return nil
	}
	lo, hi := scores[0].Score, scores[0].Score
	for _, s := range scores {
		lo, hi = min(lo, s.Score), max(hi, s.Score)
	}
	for i := range scores {
		if hi == 0 {
			scores[i].Score = framework.MaxNodeScore
			continue
		}
		scores[i].Score = framework.MaxNodeScore * (hi + lo - scores[i].Score) / hi
	}
	return nil
}
