// Package interpodaffinity places pods relative to other pods over a
// topology key: required affinity and anti-affinity filter (including the
// anti-affinity of pods already running, which binds the newcomer too),
// preferred terms score.
package interpodaffinity

import (
	"context"

	v1 "k8s.io/api/core/v1"

	"github.com/orca-project/orca/internal/scheduler/framework"
)

// Name is the plugin's name.
const Name = "InterPodAffinity"

// Upstream's reasons.
const (
	ErrReasonAffinity         = "node(s) didn't match pod affinity rules"
	ErrReasonAntiAffinity     = "node(s) didn't match pod anti-affinity rules"
	ErrReasonExistingAntiAffi = "node(s) didn't satisfy existing pods anti-affinity rules"
)

const (
	filterKey = Name + "/filter"
	scoreKey  = Name + "/score"
)

// Plugin is the filter and the score. It keeps, across cycles, which
// nodes host pods that hostname anti-affinity terms select (see
// nodeFlags), keyed by the question.
type Plugin struct {
	// HardPodAffinityWeight is how strongly a running pod's required
	// affinity to the incoming pod attracts it (upstream's
	// hardPodAffinityWeight); nil is upstream's default, 1.
	HardPodAffinityWeight *int64

	kept map[string]*nodeFlags
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

type pair struct{ key, value string }

type filterState struct {
	// existingAnti counts running pods whose required anti-affinity
	// selects the incoming pod, per topology pair of their node.
	existingAnti map[pair]int
	// affinity and anti count running pods matched by the incoming pod's
	// required affinity (all terms) and anti-affinity (any term).
	affinity map[pair]int
	anti     map[pair]int

	// Terms over a unique hostname concern one node: they are checked on
	// the node in Filter instead of counted over the cluster in PreFilter.
	localAnti []bool
	antiKeys  []string
	podKey    string
	podNS     map[string]string
	nsLabels  map[string]map[string]string
	snapLocal bool
	// reject is Filter's verdict by node index, when kept answers give it.
	reject func(i int) bool
}

// PreFilter counts matching pods per topology domain once per pod.
func (pl *Plugin) PreFilter(_ context.Context, cs *framework.CycleState, pod *framework.PodInfo, snap *framework.Snapshot) *framework.Status {
	s := &filterState{existingAnti: map[pair]int{}, affinity: map[pair]int{}, anti: map[pair]int{}}
	nsLabels := func(ns string) map[string]string { return snap.NamespaceLabels[ns] }
	s.podKey, s.podNS, s.nsLabels, s.snapLocal = framework.PodKey(pod.Pod), nsLabels(pod.Pod.Namespace), snap.NamespaceLabels, snap.UniqueHostnames
	for _, n := range snap.NodesWithNonLocalAntiAffinityPods() {
		for _, p := range n.ExistingAntiAffinity(s.podKey, pod.Pod, s.podNS) {
			if !snap.IsLocal(p.Key) {
				s.existingAnti[pair{p.Key, p.Value}]++
			}
		}
	}
	s.localAnti = make([]bool, len(pod.RequiredAntiAffinity))
	s.antiKeys = make([]string, len(pod.RequiredAntiAffinity))
	global := len(pod.RequiredAffinity) > 0
	for i := range pod.RequiredAntiAffinity {
		s.antiKeys[i] = pod.RequiredAntiAffinity[i].MemoKey()
		s.localAnti[i] = snap.IsLocal(pod.RequiredAntiAffinity[i].TopologyKey)
		global = global || !s.localAnti[i]
	}
	if global {
		antiKeys := s.antiKeys
		// One affinity term (the usual case) is counted through the memo;
		// several must all match the same pod, so those are matched pod
		// by pod.
		var affKey string
		if len(pod.RequiredAffinity) == 1 {
			affKey = pod.RequiredAffinity[0].MemoKey()
		}
		for _, n := range snap.Nodes {
			if len(pod.RequiredAffinity) == 1 {
				t := &pod.RequiredAffinity[0]
				if v, ok := n.Node.Labels[t.TopologyKey]; ok {
					if c := t.CountOn(n, affKey, snap.NamespaceLabels); c > 0 {
						s.affinity[pair{t.TopologyKey, v}] += c
					}
				}
			} else if len(pod.RequiredAffinity) > 1 {
				for _, ex := range n.Pods {
					if matchesAll(pod.RequiredAffinity, ex, nsLabels(ex.Pod.Namespace)) {
						for i := range pod.RequiredAffinity {
							k := pod.RequiredAffinity[i].TopologyKey
							if v, ok := n.Node.Labels[k]; ok {
								s.affinity[pair{k, v}]++
							}
						}
					}
				}
			}
			for i := range pod.RequiredAntiAffinity {
				t := &pod.RequiredAntiAffinity[i]
				if s.localAnti[i] {
					continue
				}
				if v, ok := n.Node.Labels[t.TopologyKey]; ok {
					if c := t.CountOn(n, antiKeys[i], snap.NamespaceLabels); c > 0 {
						s.anti[pair{t.TopologyKey, v}] += c
					}
				}
			}
		}
	}
	s.reject = pl.rejecter(s, pod, snap)
	cs.Write(filterKey, s)
	return nil
}

func matchesAll(terms []framework.AffinityTerm, pi *framework.PodInfo, nsLabels map[string]string) bool {
	for i := range terms {
		if !terms[i].Matches(pi.Pod, nsLabels) {
			return false
		}
	}
	return true
}

// Filter implements framework.FilterPlugin in upstream's order:
// affinity, then the pod's anti-affinity, then existing pods' anti-affinity.
func (*Plugin) Filter(_ context.Context, cs *framework.CycleState, pod *framework.PodInfo, node *framework.NodeInfo) *framework.Status {
	v, ok := cs.Read(filterKey)
	if !ok {
		return framework.AsStatus(errNoState)
	}
	s := v.(*filterState)
	labels := node.Node.Labels
	if len(pod.RequiredAffinity) > 0 {
		exist := true
		for i := range pod.RequiredAffinity {
			k := pod.RequiredAffinity[i].TopologyKey
			val, ok := labels[k]
			if !ok {
				return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonAffinity)
			}
			if s.affinity[pair{k, val}] <= 0 {
				exist = false
			}
		}
		// The first pod of a group that selects itself may go anywhere,
		// or it could never start.
		if !exist && !(len(s.affinity) == 0 && matchesAll(pod.RequiredAffinity, pod, nil)) {
			return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonAffinity)
		}
	}
	for i := range pod.RequiredAntiAffinity {
		t := &pod.RequiredAntiAffinity[i]
		if s.localAnti[i] {
			if t.CountOn(node, s.antiKeys[i], s.nsLabels) > 0 {
				return framework.NewStatus(framework.Unschedulable, ErrReasonAntiAffinity)
			}
			continue
		}
		if val, ok := labels[t.TopologyKey]; ok && s.anti[pair{t.TopologyKey, val}] > 0 {
			return framework.NewStatus(framework.Unschedulable, ErrReasonAntiAffinity)
		}
	}
	if existingLocalAnti(s, pod, node) {
		return framework.NewStatus(framework.Unschedulable, ErrReasonExistingAntiAffi)
	}
	if len(s.existingAnti) > 0 {
		for k, val := range labels {
			if s.existingAnti[pair{k, val}] > 0 {
				return framework.NewStatus(framework.Unschedulable, ErrReasonExistingAntiAffi)
			}
		}
	}
	return nil
}

// existingLocalAnti reports whether a pod on node has required
// anti-affinity over unique hostnames that selects pod.
func existingLocalAnti(s *filterState, pod *framework.PodInfo, node *framework.NodeInfo) bool {
	if !s.snapLocal || len(node.PodsWithRequiredAntiAffinity) == 0 {
		return false
	}
	for _, p := range node.ExistingAntiAffinity(s.podKey, pod.Pod, s.podNS) {
		if p.Key == v1.LabelHostname {
			return true
		}
	}
	return false
}

type scoreState struct {
	topo map[pair]int64
}

// PreScore sums preferred-term weights per topology domain: the incoming
// pod's preferred (anti-)affinity towards running pods, and running pods'
// preferred (anti-)affinity and required affinity towards it.
func (pl *Plugin) PreScore(_ context.Context, cs *framework.CycleState, pod *framework.PodInfo, snap *framework.Snapshot, _ []*framework.NodeInfo) *framework.Status {
	s := &scoreState{topo: map[pair]int64{}}
	hard := int64(1)
	if pl.HardPodAffinityWeight != nil {
		hard = *pl.HardPodAffinityWeight
	}
	hasPreferred := len(pod.PreferredAffinity)+len(pod.PreferredAntiAffinity) > 0
	nodes := snap.NodesWithAffinityPods()
	if hasPreferred {
		nodes = snap.Nodes
	}
	podNS := snap.NamespaceLabels[pod.Pod.Namespace]
	add := func(labels map[string]string, key string, w int64) {
		if v, ok := labels[key]; ok {
			s.topo[pair{key, v}] += w
		}
	}
	for _, n := range nodes {
		pods := n.PodsWithAffinity
		if hasPreferred {
			pods = n.Pods
		}
		for _, ex := range pods {
			exNS := snap.NamespaceLabels[ex.Pod.Namespace]
			for _, t := range pod.PreferredAffinity {
				if t.Matches(ex.Pod, exNS) {
					add(n.Node.Labels, t.TopologyKey, int64(t.Weight))
				}
			}
			for _, t := range pod.PreferredAntiAffinity {
				if t.Matches(ex.Pod, exNS) {
					add(n.Node.Labels, t.TopologyKey, -int64(t.Weight))
				}
			}
			// Upstream's hardPodAffinityWeight: a running pod's required
			// affinity to the newcomer attracts it.
			for _, t := range ex.RequiredAffinity {
				if hard > 0 && t.Matches(pod.Pod, podNS) {
					add(n.Node.Labels, t.TopologyKey, hard)
				}
			}
			for _, t := range ex.PreferredAffinity {
				if t.Matches(pod.Pod, podNS) {
					add(n.Node.Labels, t.TopologyKey, int64(t.Weight))
				}
			}
			for _, t := range ex.PreferredAntiAffinity {
				if t.Matches(pod.Pod, podNS) {
					add(n.Node.Labels, t.TopologyKey, -int64(t.Weight))
				}
			}
		}
	}
	cs.Write(scoreKey, s)
	return nil
}

// Score adds up the weights of the domains the node belongs to.
func (*Plugin) Score(_ context.Context, cs *framework.CycleState, _ *framework.PodInfo, node *framework.NodeInfo) (int64, *framework.Status) {
	v, ok := cs.Read(scoreKey)
	if !ok {
		return 0, framework.AsStatus(errNoState)
	}
	s := v.(*scoreState)
	if len(s.topo) == 0 {
		return 0, nil
	}
	var score int64
	for p, w := range s.topo {
		if node.Node.Labels[p.key] == p.value {
			score += w
		}
	}
	return score, nil
}

// NormalizeScore maps [min, max] onto [0, MaxNodeScore].
func (*Plugin) NormalizeScore(_ context.Context, _ *framework.CycleState, _ *framework.PodInfo, scores []framework.NodeScore) *framework.Status {
	if len(scores) == 0 {
		return nil
	}
	lo, hi := scores[0].Score, scores[0].Score
	for _, s := range scores {
		lo, hi = min(lo, s.Score), max(hi, s.Score)
	}
	for i := range scores {
		if hi > lo {
			scores[i].Score = framework.MaxNodeScore * (scores[i].Score - lo) / (hi - lo)
		} else {
			scores[i].Score = 0
		}
	}
	return nil
}
