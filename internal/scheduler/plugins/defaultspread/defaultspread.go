// Package defaultspread spreads the pods of one owner (a ReplicaSet, a
// StatefulSet, a Job...) over nodes and zones when the pod declares no
// topology spread constraints of its own — upstream's system default
// spreading, keyed here on the controller owner reference.
package defaultspread

import (
	"context"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orca-project/orca/internal/scheduler/framework"
)

// Name is the plugin's name.
const Name = "DefaultPodTopologySpread"

const stateKey = Name

// zoneWeighting is upstream's: zone spreading counts twice as much as
// node spreading.
const zoneWeighting = 2.0 / 3.0

// Plugin is the score.
type Plugin struct{}

var (
	_ framework.PreScorePlugin       = (*Plugin)(nil)
	_ framework.ScorePlugin          = (*Plugin)(nil)
	_ framework.NormalizeScorePlugin = (*Plugin)(nil)
)

// Name implements framework.Plugin.
func (*Plugin) Name() string { return Name }

type state struct {
	owner types.UID
	// key names the owner's count in the nodes' memos.
	key string
	// zoneCounts counts the owner's pods per zone (over all nodes).
	zoneCounts map[string]int64
	nodeZone   map[string]string
}

func controllerUID(pod *v1.Pod) types.UID {
	if ref := metav1.GetControllerOfNoCopy(pod); ref != nil {
		return ref.UID
	}
	return ""
}

func zone(node *v1.Node) string { return node.Labels[v1.LabelTopologyZone] }

// PreScore finds the pod's owner and counts its pods per zone.
func (*Plugin) PreScore(_ context.Context, cs *framework.CycleState, pod *framework.PodInfo, snap *framework.Snapshot, feasible []*framework.NodeInfo) *framework.Status {
	s := &state{}
	if len(pod.Pod.Spec.TopologySpreadConstraints) == 0 {
		s.owner = controllerUID(pod.Pod)
	}
	if s.owner != "" {
		s.key = framework.OwnerKey(pod.Pod.Namespace, s.owner)
		s.zoneCounts = map[string]int64{}
		for _, n := range snap.Nodes {
			if z := zone(n.Node); z != "" {
				s.zoneCounts[z] += s.count(n, pod.Pod.Namespace)
			}
		}
		s.nodeZone = map[string]string{}
		for _, n := range feasible {
			if z := zone(n.Node); z != "" {
				s.nodeZone[n.Name()] = z
			}
		}
	}
	cs.Write(stateKey, s)
	return nil
}

func (s *state) count(n *framework.NodeInfo, ns string) int64 {
	return int64(n.CountOwned(s.key, ns, s.owner))
}

// Score counts the owner's pods on the node (fewer is better).
func (*Plugin) Score(_ context.Context, cs *framework.CycleState, pod *framework.PodInfo, node *framework.NodeInfo) (int64, *framework.Status) {
	v, ok := cs.Read(stateKey)
	if !ok || v.(*state).owner == "" {
		return 0, nil
	}
	return v.(*state).count(node, pod.Pod.Namespace), nil
}

// NormalizeScore reverses node counts onto [0, MaxNodeScore] and blends
// in the zone counts, as upstream's SelectorSpread did.
func (*Plugin) NormalizeScore(_ context.Context, cs *framework.CycleState, _ *framework.PodInfo, scores []framework.NodeScore) *framework.Status {
	v, ok := cs.Read(stateKey)
	if !ok || v.(*state).owner == "" {
		for i := range scores {
			scores[i].Score = 0
		}
		return nil
	}
	s := v.(*state)
	var maxNode, maxZone int64
	for _, sc := range scores {
		maxNode = max(maxNode, sc.Score)
		if z, ok := s.nodeZone[sc.Name]; ok {
			maxZone = max(maxZone, s.zoneCounts[z])
		}
	}
	for i := range scores {
		f := float64(framework.MaxNodeScore)
		if maxNode > 0 {
			f = float64(framework.MaxNodeScore) * float64(maxNode-scores[i].Score) / float64(maxNode)
		}
		if z, ok := s.nodeZone[scores[i].Name]; ok {
			zs := float64(framework.MaxNodeScore)
			if maxZone > 0 {
				zs = float64(framework.MaxNodeScore) * float64(maxZone-s.zoneCounts[z]) / float64(maxZone)
			}
			f = f*(1-zoneWeighting) + zoneWeighting*zs
		}
		scores[i].Score = int64(f)
	}
	return nil
}
