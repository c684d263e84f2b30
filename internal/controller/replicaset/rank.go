package replicaset

import (
	"math"
	"sort"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/orca-project/orca/internal/controller/controllerutil"
)

// PodDeletionCostAnnotation lets users steer which pods a scale-down
// removes first (lower cost goes first), as upstream.
const PodDeletionCostAnnotation = "controller.kubernetes.io/pod-deletion-cost"

// PodsToDelete picks the n pods a scale-down removes, in upstream's
// order: the pods that cost the least to lose go first. related are all
// active pods of the owner's family (the ReplicaSets of one Deployment),
// used to prefer pods doubled up on a node.
func PodsToDelete(pods, related []*v1.Pod, n int, now time.Time) []*v1.Pod {
	if n >= len(pods) {
		return pods
	}
	ranked := append([]*v1.Pod(nil), pods...)
	onNode := map[string]int{}
	for _, p := range related {
		if controllerutil.IsPodActive(p) {
			onNode[p.Spec.NodeName]++
		}
	}
	rank := make(map[*v1.Pod]int, len(ranked))
	for _, p := range ranked {
		rank[p] = onNode[p.Spec.NodeName]
	}
	sort.SliceStable(ranked, func(i, j int) bool {
		return deleteBefore(ranked[i], ranked[j], rank[ranked[i]], rank[ranked[j]], now)
	})
	return ranked[:n]
}

var phaseOrdinal = map[v1.PodPhase]int{v1.PodPending: 0, v1.PodUnknown: 1, v1.PodRunning: 2}

// deleteBefore is upstream's ActivePodsWithRanks.Less: whether a should
// be deleted before b. rankA/rankB count the family's active pods on each
// pod's node.
func deleteBefore(a, b *v1.Pod, rankA, rankB int, now time.Time) bool {
	// Unassigned pods are cheapest to lose.
	if a.Spec.NodeName != b.Spec.NodeName && (a.Spec.NodeName == "" || b.Spec.NodeName == "") {
		return a.Spec.NodeName == ""
	}
	if pa, pb := phaseOrdinal[a.Status.Phase], phaseOrdinal[b.Status.Phase]; pa != pb {
		return pa < pb
	}
	ra, rb := controllerutil.IsPodReady(a), controllerutil.IsPodReady(b)
	if ra != rb {
		return !ra
	}
	if ca, cb := deletionCost(a), deletionCost(b); ca != cb {
		return ca < cb
	}
	// Doubled-up pods go first, spreading what remains over more nodes.
	if rankA != rankB {
		return rankA > rankB
	}
	if ra && rb {
		if ta, tb := readyTime(a), readyTime(b); !ta.Equal(tb) {
			return newerFirst(a, b, ta, tb, now)
		}
	}
	if x, y := maxRestarts(a), maxRestarts(b); x != y {
		return x > y
	}
	if x, y := sidecarRestarts(a), sidecarRestarts(b); x != y {
		return x > y
	}
	if ta, tb := a.CreationTimestamp.Time, b.CreationTimestamp.Time; !ta.Equal(tb) {
		return newerFirst(a, b, ta, tb, now)
	}
	return false
}

// newerFirst orders by time on a log2 scale of age, so pods of about the
// same age count as equal (ties broken by UID) and a scale-down does not
// always pick the very newest (upstream's LogarithmicScaleDown). A zero
// time goes first.
func newerFirst(a, b *v1.Pod, ta, tb, now time.Time) bool {
	if now.IsZero() || ta.IsZero() || tb.IsZero() {
		return afterOrZero(ta, tb)
	}
	if d := logRankDiff(ta, tb, now); d != 0 {
		return d < 0
	}
	return a.UID < b.UID
}

// afterOrZero orders a zero time first, then the later time first.
func afterOrZero(a, b time.Time) bool {
	if a.IsZero() || b.IsZero() {
		return a.IsZero()
	}
	return a.After(b)
}

// logRankDiff compares the ages of a and b at now on a log2 scale.
func logRankDiff(a, b, now time.Time) int64 {
	r := func(t time.Time) int64 {
		if d := now.Sub(t); d > 0 {
			return int64(math.Log2(float64(d)))
		}
		return -1
	}
	return r(a) - r(b)
}

func readyTime(p *v1.Pod) time.Time {
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodReady && c.Status == v1.ConditionTrue {
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{}
}

func deletionCost(p *v1.Pod) int32 {
	s, ok := p.Annotations[PodDeletionCostAnnotation]
	if !ok {
		return 0
	}
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return 0
	}
	return int32(n)
}

func maxRestarts(p *v1.Pod) int32 {
	var m int32
	for _, c := range p.Status.ContainerStatuses {
		m = max(m, c.RestartCount)
	}
	return m
}

func sidecarRestarts(p *v1.Pod) int32 {
	sidecars := map[string]bool{}
	for _, c := range p.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways {
			sidecars[c.Name] = true
		}
	}
	var m int32
	for _, c := range p.Status.InitContainerStatuses {
		if sidecars[c.Name] {
			m = max(m, c.RestartCount)
		}
	}
	return m
}
