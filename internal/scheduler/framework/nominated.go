package framework

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
)

// Nominations are the pods that preemption promised a node to
// (status.nominatedNodeName) and that are not bound yet. Until they bind,
// the room their victims free is theirs: pods of equal or lower priority
// are filtered as if the nominated pods already ran there.
//
// The Cache owns the set and hands it to each cycle's Snapshot; it is
// only written under the cache lock, outside scheduling cycles.
type Nominations struct {
	byNode map[string][]*PodInfo
	nodeOf map[types.UID]string
}

// NewNominations returns an empty set.
func NewNominations() *Nominations {
	return &Nominations{byNode: map[string][]*PodInfo{}, nodeOf: map[types.UID]string{}}
}

// Set nominates the pod to node, replacing an earlier nomination; an
// empty node removes it.
func (n *Nominations) Set(pi *PodInfo, node string) {
	n.Remove(pi.Pod.UID)
	if node == "" {
		return
	}
	n.byNode[node] = append(n.byNode[node], pi)
	n.nodeOf[pi.Pod.UID] = node
}

// Remove forgets the pod's nomination, if any.
func (n *Nominations) Remove(uid types.UID) {
	node, ok := n.nodeOf[uid]
	if !ok {
		return
	}
	delete(n.nodeOf, uid)
	pods := n.byNode[node]
	if i := indexOf(pods, uid); i >= 0 {
		pods = removeAt(pods, i)
	}
	if len(pods) == 0 {
		delete(n.byNode, node)
	} else {
		n.byNode[node] = pods
	}
}

// NodeOf returns the node the pod is nominated to, or "".
func (n *Nominations) NodeOf(uid types.UID) string {
	if n == nil {
		return ""
	}
	return n.nodeOf[uid]
}

// Len is the number of nominated pods.
func (n *Nominations) Len() int {
	if n == nil {
		return 0
	}
	return len(n.nodeOf)
}

// reserving returns the pods nominated to node that outrank or equal pod
// (other than pod itself): those whose room pod must not take.
func (n *Nominations) reserving(node string, pod *PodInfo) []*PodInfo {
	if n == nil || len(n.byNode) == 0 {
		return nil
	}
	pods := n.byNode[node]
	if len(pods) == 0 {
		return nil
	}
	prio := corev1helpers.PodPriority(pod.Pod)
	var out []*PodInfo
	for _, p := range pods {
		if p.Pod.UID != pod.Pod.UID && corev1helpers.PodPriority(p.Pod) >= prio {
			out = append(out, p)
		}
	}
	return out
}

// RunFiltersWithNominated runs the filters on node as upstream does when
// pods are nominated to it: first with the nominated pods of equal or
// higher priority added to a copy of the node, so their room stays
// theirs, and, if that passes, once more on the node as it is, because
// pod affinity satisfied only by a nominated pod must not count. A node
// without such nominations is filtered once, on the node itself, at no
// extra cost.
func (f *Framework) RunFiltersWithNominated(ctx context.Context, state *CycleState, pod *PodInfo, node *NodeInfo, noms *Nominations) *Status {
	if noms.Len() == 0 {
		// Without nominations, skip reading the node's name: it lives in
		// the node object, a cache miss per node per cycle.
		return f.RunFilters(ctx, state, pod, node)
	}
	extra := noms.reserving(node.Name(), pod)
	if len(extra) == 0 {
		return f.RunFilters(ctx, state, pod, node)
	}
	with := node.Clone()
	for _, p := range extra {
		with.AddPod(p)
	}
	if st := f.RunFilters(ctx, state, pod, with); !st.IsSuccess() {
		return st
	}
	return f.RunFilters(ctx, state, pod, node)
}
