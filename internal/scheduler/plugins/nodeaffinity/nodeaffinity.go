// Package nodeaffinity applies nodeSelector and node affinity: required
// terms filter (every operator, matchExpressions and matchFields, via
// component-helpers, which is the code upstream uses), preferred terms
// score by weight.
package nodeaffinity

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/orca-project/orca/internal/scheduler/framework"
)

// Name is the plugin's name.
const Name = "NodeAffinity"

// ErrReason is upstream's reason.
const ErrReason = "node(s) didn't match Pod's node affinity/selector"

// ErrReasonEnforced is upstream's reason for a node outside the
// profile's addedAffinity.
const ErrReasonEnforced = "node(s) didn't match scheduler-enforced node affinity"

const stateKey = Name

// Plugin is the filter and the score.
type Plugin struct {
	// AddedRequired and AddedPreferred are the profile's addedAffinity,
	// applied to every pod on top of its own; nil adds nothing.
	AddedRequired  *nodeaffinity.NodeSelector
	AddedPreferred *nodeaffinity.PreferredSchedulingTerms
}

var (
	_ framework.PreFilterPlugin      = (*Plugin)(nil)
	_ framework.FilterPlugin         = (*Plugin)(nil)
	_ framework.PreScorePlugin       = (*Plugin)(nil)
	_ framework.ScorePlugin          = (*Plugin)(nil)
	_ framework.NormalizeScorePlugin = (*Plugin)(nil)
)

// Name implements framework.Plugin.
func (*Plugin) Name() string { return Name }

type state struct {
	required  nodeaffinity.RequiredNodeAffinity
	preferred *nodeaffinity.PreferredSchedulingTerms
}

// PreFilter parses the pod's selectors once.
func (*Plugin) PreFilter(_ context.Context, cs *framework.CycleState, pod *framework.PodInfo, _ *framework.Snapshot) *framework.Status {
	s := &state{required: nodeaffinity.GetRequiredNodeAffinity(pod.Pod)}
	if a := pod.Pod.Spec.Affinity; a != nil && a.NodeAffinity != nil && len(a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution) > 0 {
		p, err := nodeaffinity.NewPreferredSchedulingTerms(a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution)
		if err != nil {
			return framework.AsStatus(fmt.Errorf("parse preferred node affinity: %w", err))
		}
		s.preferred = p
	}
	cs.Write(stateKey, s)
	return nil
}

func getState(cs *framework.CycleState, pod *v1.Pod) *state {
	if v, ok := cs.Read(stateKey); ok {
		return v.(*state)
	}
	return &state{required: nodeaffinity.GetRequiredNodeAffinity(pod)}
}

// Filter implements framework.FilterPlugin.
func (pl *Plugin) Filter(_ context.Context, cs *framework.CycleState, pod *framework.PodInfo, node *framework.NodeInfo) *framework.Status {
	if pl.AddedRequired != nil && !pl.AddedRequired.Match(node.Node) {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonEnforced)
	}
	ok, err := getState(cs, pod.Pod).required.Match(node.Node)
	if err != nil {
		return framework.AsStatus(fmt.Errorf("match node affinity: %w", err))
	}
	if !ok {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReason)
	}
	return nil
}

// PreScore implements framework.PreScorePlugin (the state from PreFilter
// is reused; nothing more to prepare).
func (*Plugin) PreScore(context.Context, *framework.CycleState, *framework.PodInfo, *framework.Snapshot, []*framework.NodeInfo) *framework.Status {
	return nil
}

// Score sums the weights of the preferred terms the node matches.
func (pl *Plugin) Score(_ context.Context, cs *framework.CycleState, pod *framework.PodInfo, node *framework.NodeInfo) (int64, *framework.Status) {
	var score int64
	if pl.AddedPreferred != nil {
		score = pl.AddedPreferred.Score(node.Node)
	}
	if s := getState(cs, pod.Pod); s.preferred != nil {
		score += s.preferred.Score(node.Node)
	}
	return score, nil
}

// NormalizeScore scales to [0, MaxNodeScore].
func (*Plugin) NormalizeScore(_ context.Context, _ *framework.CycleState, _ *framework.PodInfo, scores []framework.NodeScore) *framework.Status {
	framework.DefaultNormalizeScore(framework.MaxNodeScore, false, scores)
	return nil
}
