// Package preemption decides, as a pure function of the snapshot, whether
// evicting lower-priority pods from one node would let a pod that fits
// nowhere run, and which pods: on each node where the pod was rejected for
// a reason eviction can fix, all lower-priority pods are removed in a
// dry run, the pod is filtered again, and then as many victims as possible
// are reprieved, highest priority first. Among the nodes that work, the
// one whose victims are least important wins.
package preemption

import (
	"context"
	"fmt"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/orca-project/orca/internal/scheduler/framework"
)

// Upstream's reasons in the "preemption: ..." part of the message.
const (
	reasonNotHelpful = "Preemption is not helpful for scheduling"
	reasonNoVictims  = "No preemption victims found for incoming pod"
)

// maxCandidates bounds the dry runs per attempt (upstream samples at
// least 100 nodes or 10% of them).
const maxCandidates = 100

// Candidate is a node and the pods to evict from it.
type Candidate struct {
	Node    string
	Victims []*v1.Pod
}

// Find looks for a candidate. msg is the account upstream appends to the
// FailedScheduling message ("preemption: 0/5 nodes are available: ...").
func Find(ctx context.Context, fw *framework.Framework, pod *framework.PodInfo, snap *framework.Snapshot, diag framework.Diagnosis) (*Candidate, string) {
	if ok, msg := Eligible(pod, snap, diag); !ok {
		return nil, msg
	}
	prio := corev1helpers.PodPriority(pod.Pod)
	reasons := map[string]*framework.Status{}
	var potential []*framework.NodeInfo
	for _, n := range snap.Nodes {
		st, ok := diag.NodeToStatus[n.Name()]
		if ok && st.Code() == framework.Unschedulable && diag.PreFilterMsg == "" {
			potential = append(potential, n)
		} else {
			reasons[n.Name()] = framework.NewStatus(framework.UnschedulableAndUnresolvable, reasonNotHelpful)
		}
	}
	// Node-local filters only need the node; pod (anti-)affinity and
	// spreading depend on pods elsewhere, so those re-run PreFilter on a
	// snapshot without the victims.
	global := pod.HasAffinity() || len(pod.Pod.Spec.TopologySpreadConstraints) > 0 || len(snap.NodesWithRequiredAntiAffinityPods()) > 0
	var baseState *framework.CycleState
	if !global {
		baseState = framework.NewCycleState()
		if st := fw.RunPreFilters(ctx, baseState, pod, snap); !st.IsSuccess() {
			return nil, message(len(snap.Nodes), reasons)
		}
	}
	var cands []*Candidate
	for _, n := range potential {
		if len(cands) >= maxCandidates {
			reasons[n.Name()] = framework.NewStatus(framework.Unschedulable, reasonNoVictims)
			continue
		}
		c := dryRun(ctx, fw, pod, prio, snap, n, baseState)
		if c == nil {
			reasons[n.Name()] = framework.NewStatus(framework.Unschedulable, reasonNoVictims)
			continue
		}
		cands = append(cands, c)
	}
	if len(cands) == 0 {
		return nil, message(len(snap.Nodes), reasons)
	}
	return pick(cands), ""
}

// Eligible reports whether pod may preempt at all, with upstream's
// account when it may not: a pod whose preemptionPolicy is Never, and a
// pod already nominated to a node where a lower-priority pod is still
// terminating — its earlier preemption is under way, and evicting more
// pods elsewhere would only add victims.
func Eligible(pod *framework.PodInfo, snap *framework.Snapshot, diag framework.Diagnosis) (bool, string) {
	if p := pod.Pod.Spec.PreemptionPolicy; p != nil && *p == v1.PreemptNever {
		return false, "preemption: not eligible due to preemptionPolicy=Never."
	}
	nominated := snap.Nominated.NodeOf(pod.Pod.UID)
	if nominated == "" {
		return true, ""
	}
	// A nominated node that can no longer take the pod at all frees it
	// to look elsewhere.
	if st, ok := diag.NodeToStatus[nominated]; ok && st.Code() == framework.UnschedulableAndUnresolvable {
		return true, ""
	}
	n := snap.Get(nominated)
	if n == nil {
		return true, ""
	}
	prio := corev1helpers.PodPriority(pod.Pod)
	for _, p := range n.Pods {
		if p.Pod.DeletionTimestamp != nil && corev1helpers.PodPriority(p.Pod) < prio {
			return false, "preemption: not eligible due to a terminating pod on the nominated node."
		}
	}
	return true, ""
}

func message(all int, reasons map[string]*framework.Status) string {
	return fmt.Sprintf("preemption: 0/%d nodes are available: %s.", all, framework.ReasonHistogram(reasons))
}

func fits(ctx context.Context, fw *framework.Framework, pod *framework.PodInfo, snap *framework.Snapshot, node *framework.NodeInfo, base *framework.CycleState) bool {
	state := base
	if state == nil {
		state = framework.NewCycleState()
		if st := fw.RunPreFilters(ctx, state, pod, snap.WithNode(node)); !st.IsSuccess() {
			return false
		}
	}
	// Room promised to other nominated pods of equal or higher priority
	// is not the preemptor's to take.
	return fw.RunFiltersWithNominated(ctx, state, pod, node, snap.Nominated).IsSuccess()
}

func dryRun(ctx context.Context, fw *framework.Framework, pod *framework.PodInfo, prio int32, snap *framework.Snapshot, n *framework.NodeInfo, base *framework.CycleState) *Candidate {
	trial := n.Clone()
	var lower []*framework.PodInfo
	for _, p := range n.Pods {
		if corev1helpers.PodPriority(p.Pod) < prio {
			lower = append(lower, p)
			trial.RemovePod(p.Pod.UID)
		}
	}
	if len(lower) == 0 || !fits(ctx, fw, pod, snap, trial, base) {
		return nil
	}
	// Reprieve the most important pods first; whoever cannot come back
	// without breaking the fit is a victim.
	sort.SliceStable(lower, func(i, j int) bool {
		pi, pj := corev1helpers.PodPriority(lower[i].Pod), corev1helpers.PodPriority(lower[j].Pod)
		if pi != pj {
			return pi > pj
		}
		return lower[i].Pod.CreationTimestamp.Before(&lower[j].Pod.CreationTimestamp)
	})
	c := &Candidate{Node: n.Name()}
	for _, p := range lower {
		trial.AddPod(p)
		if !fits(ctx, fw, pod, snap, trial, base) {
			trial.RemovePod(p.Pod.UID)
			c.Victims = append(c.Victims, p.Pod)
		}
	}
	return c
}

// pick prefers, in upstream's order: the lowest highest-priority victim,
// the lowest sum of priorities, the fewest victims, then the name.
func pick(cands []*Candidate) *Candidate {
	key := func(c *Candidate) (hi int32, sum int64) {
		hi = -1 << 31
		for _, v := range c.Victims {
			p := corev1helpers.PodPriority(v)
			hi = max(hi, p)
			sum += int64(p) + 1<<31 // shifted so negative priorities add up sanely
		}
		return hi, sum
	}
	sort.SliceStable(cands, func(i, j int) bool {
		hi1, s1 := key(cands[i])
		hi2, s2 := key(cands[j])
		switch {
		case hi1 != hi2:
			return hi1 < hi2
		case s1 != s2:
			return s1 < s2
		case len(cands[i].Victims) != len(cands[j].Victims):
			return len(cands[i].Victims) < len(cands[j].Victims)
		}
		return strings.Compare(cands[i].Node, cands[j].Node) < 0
	})
	return cands[0]
}
