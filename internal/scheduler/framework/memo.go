package framework

import (
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
)

// Per-node memos. Topology spreading and inter-pod affinity count, for
// every node, the pods a selector matches. Between two scheduling cycles
// only the node that received the last pod changes, so each node keeps
// its last answers keyed by the question and tagged with the node's
// generation: a repeated question over 5,000 nodes costs 5,000 lookups
// instead of matching every pod in the cluster again.
//
// The cache lock is held for the whole cycle, and a node's memo is used by
// one goroutine at a time: the PreFilter/PreScore phases are sequential and
// the parallel Filter/Score phases give each node to one goroutine.

type memoEntry struct {
	gen   uint64
	count int
	pairs []TopologyPair
}

// TopologyPair is a topology key and a node's value for it.
type TopologyPair struct{ Key, Value string }

// SelectorKey names a (namespace, selector) question for CountMatching.
func SelectorKey(namespace string, sel labels.Selector) string {
	return "c|" + namespace + "|" + sel.String()
}

// CountMatching counts the node's pods in namespace that sel matches,
// leaving out pods being deleted. key is SelectorKey(namespace, sel).
func (ni *NodeInfo) CountMatching(key, namespace string, sel labels.Selector) int {
	if e, ok := ni.memo[key]; ok && e.gen == ni.gen {
		return e.count
	}
	n := 0
	for _, p := range ni.Pods {
		if p.Pod.Namespace == namespace && p.Pod.DeletionTimestamp == nil && sel.Matches(labels.Set(p.Pod.Labels)) {
			n++
		}
	}
	ni.remember(key, memoEntry{gen: ni.gen, count: n})
	return n
}

// OwnerKey names a (namespace, controller) question for CountOwned.
func OwnerKey(namespace string, owner types.UID) string {
	return "o|" + namespace + "|" + string(owner)
}

// CountOwned counts the node's pods in namespace whose controller is
// owner, leaving out pods being deleted: default spreading asks it of
// every node each cycle, which would otherwise walk every pod in the
// cluster per pod scheduled. key is OwnerKey(namespace, owner).
func (ni *NodeInfo) CountOwned(key, namespace string, owner types.UID) int {
	if e, ok := ni.memo[key]; ok && e.gen == ni.gen {
		return e.count
	}
	n := 0
	for _, p := range ni.Pods {
		if p.Pod.Namespace != namespace || p.Pod.DeletionTimestamp != nil {
			continue
		}
		if ref := metav1.GetControllerOfNoCopy(p.Pod); ref != nil && ref.UID == owner {
			n++
		}
	}
	ni.remember(key, memoEntry{gen: ni.gen, count: n})
	return n
}

// PodKey names a pod by what other pods' affinity terms can see of it:
// namespace and labels. Replicas of one workload share it.
func PodKey(pod *v1.Pod) string {
	keys := make([]string, 0, len(pod.Labels))
	for k := range pod.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("a|")
	b.WriteString(pod.Namespace)
	for _, k := range keys {
		b.WriteByte('|')
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(pod.Labels[k])
	}
	return b.String()
}

// ExistingAntiAffinity returns the topology pairs of this node that its
// pods' required anti-affinity terms forbid to pod. key is PodKey(pod);
// nsLabels are the labels of pod's namespace.
func (ni *NodeInfo) ExistingAntiAffinity(key string, pod *v1.Pod, nsLabels map[string]string) []TopologyPair {
	if e, ok := ni.memo[key]; ok && e.gen == ni.gen {
		return e.pairs
	}
	var pairs []TopologyPair
	for _, ex := range ni.PodsWithRequiredAntiAffinity {
		for i := range ex.RequiredAntiAffinity {
			t := &ex.RequiredAntiAffinity[i]
			if v, ok := ni.Node.Labels[t.TopologyKey]; ok && t.Matches(pod, nsLabels) {
				pairs = append(pairs, TopologyPair{t.TopologyKey, v})
			}
		}
	}
	ni.remember(key, memoEntry{gen: ni.gen, pairs: pairs})
	return pairs
}

// memoLimit bounds a node's memo; past it the memo starts over, which
// costs a recount, never a wrong answer.
const memoLimit = 64

func (ni *NodeInfo) remember(key string, e memoEntry) {
	if ni.memo == nil || len(ni.memo) >= memoLimit {
		ni.memo = make(map[string]memoEntry, 8)
	}
	ni.memo[key] = e
}
