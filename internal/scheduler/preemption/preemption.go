// Package preemption decides, as a pure function of the snapshot, whether
// evicting lower-priority pods from one node would let a pod that fits
// nowhere run, and which pods: on each node where the pod was rejected for
// a reason eviction can fix, all lower-priority pods are removed in a
// dry run, the pod is filtered again, and then as many victims as possible
// are reprieved, highest priority first — those whose eviction would
// break a PodDisruptionBudget before the others, so that budgets are
// broken only when nothing else makes room. Among the nodes that work,
// the one breaking the fewest budgets wins, then the one whose victims
// are least important.
package preemption

import (
	"context"
	"fmt"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
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
	// NumPDBViolations counts the victims whose eviction breaks a
	// PodDisruptionBudget.
	NumPDBViolations int
}

// Find looks for a candidate, given the cluster's disruption budgets. msg
// is the account upstream appends to the FailedScheduling message
// ("preemption: 0/5 nodes are available: ...").
func Find(ctx context.Context, fw *framework.Framework, pod *framework.PodInfo, snap *framework.Snapshot, diag framework.Diagnosis, pdbs []*policyv1.PodDisruptionBudget) (*Candidate, string) {
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
		c := dryRun(ctx, fw, pod, prio, snap, n, baseState, pdbs)
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

func dryRun(ctx context.Context, fw *framework.Framework, pod *framework.PodInfo, prio int32, snap *framework.Snapshot, n *framework.NodeInfo, base *framework.CycleState, pdbs []*policyv1.PodDisruptionBudget) *Candidate {
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
	// Reprieve the most important pods first, those protected by a
	// budget before the rest; whoever cannot come back without breaking
	// the fit is a victim.
	sort.SliceStable(lower, func(i, j int) bool { return moreImportant(lower[i].Pod, lower[j].Pod) })
	violating, nonViolating := splitByBudgets(lower, pdbs)
	c := &Candidate{Node: n.Name()}
	reprieve := func(p *framework.PodInfo) bool {
		trial.AddPod(p)
		if fits(ctx, fw, pod, snap, trial, base) {
			return true
		}
		trial.RemovePod(p.Pod.UID)
		c.Victims = append(c.Victims, p.Pod)
		return false
	}
	for _, p := range violating {
		if !reprieve(p) {
			c.NumPDBViolations++
		}
	}
	for _, p := range nonViolating {
		reprieve(p)
	}
	if len(violating) > 0 && len(nonViolating) > 0 {
		sort.SliceStable(c.Victims, func(i, j int) bool { return moreImportant(c.Victims[i], c.Victims[j]) })
	}
	return c
}

// moreImportant orders pods by priority, then the older first.
func moreImportant(a, b *v1.Pod) bool {
	pa, pb := corev1helpers.PodPriority(a), corev1helpers.PodPriority(b)
	if pa != pb {
		return pa > pb
	}
	return a.CreationTimestamp.Before(&b.CreationTimestamp)
}

// splitByBudgets separates, in order, the pods whose eviction would take
// a budget below zero disruptions allowed from the others, spending each
// budget's allowance on the pods in the order given. A pod the eviction
// subresource already recorded in a budget's disruptedPods is on its way
// out and spends nothing; a budget with an empty selector covers nothing.
func splitByBudgets(pods []*framework.PodInfo, pdbs []*policyv1.PodDisruptionBudget) (violating, nonViolating []*framework.PodInfo) {
	allowed := make([]int32, len(pdbs))
	for i, pdb := range pdbs {
		allowed[i] = pdb.Status.DisruptionsAllowed
	}
	for _, p := range pods {
		violates := false
		for i, pdb := range pdbs {
			if len(p.Pod.Labels) == 0 || pdb.Namespace != p.Pod.Namespace {
				continue
			}
			sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
			if err != nil || sel.Empty() || !sel.Matches(labels.Set(p.Pod.Labels)) {
				continue
			}
			if _, gone := pdb.Status.DisruptedPods[p.Pod.Name]; gone {
				continue
			}
			allowed[i]--
			if allowed[i] < 0 {
				violates = true
			}
		}
		if violates {
			violating = append(violating, p)
		} else {
			nonViolating = append(nonViolating, p)
		}
	}
	return violating, nonViolating
}

// pick prefers, in upstream's order: the fewest budgets broken, the
// lowest highest-priority victim, the lowest sum of priorities, the
// fewest victims, then the name.
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
		case cands[i].NumPDBViolations != cands[j].NumPDBViolations:
			return cands[i].NumPDBViolations < cands[j].NumPDBViolations
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
