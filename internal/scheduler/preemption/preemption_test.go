package preemption

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orca-project/orca/internal/scheduler/framework"
	"github.com/orca-project/orca/internal/scheduler/profile"
	tu "github.com/orca-project/orca/internal/scheduler/testutil"
)

func prio(p *v1.Pod, n int32) *v1.Pod { p.Spec.Priority = &n; return p }

func run(t *testing.T, pod *v1.Pod, nodes []*v1.Node, pods ...*v1.Pod) (*Candidate, string) {
	t.Helper()
	return runNominated(t, pod, nodes, nil, pods...)
}

// runNominated is run with nominations (pod name -> node) among pods
// that have no node.
func runNominated(t *testing.T, pod *v1.Pod, nodes []*v1.Node, nominated map[*v1.Pod]string, pods ...*v1.Pod) (*Candidate, string) {
	t.Helper()
	return runWith(t, pod, nodes, nominated, nil, pods...)
}

// runWith is runNominated under disruption budgets.
func runWith(t *testing.T, pod *v1.Pod, nodes []*v1.Node, nominated map[*v1.Pod]string, pdbs []*policyv1.PodDisruptionBudget, pods ...*v1.Pod) (*Candidate, string) {
	t.Helper()
	infos := map[string]*framework.NodeInfo{}
	var list []*framework.NodeInfo
	for _, n := range nodes {
		infos[n.Name] = framework.NewNodeInfo(n)
		list = append(list, infos[n.Name])
	}
	for _, p := range pods {
		infos[p.Spec.NodeName].AddPod(framework.NewPodInfo(p))
	}
	snap := framework.NewSnapshot(list...)
	if len(nominated) > 0 {
		snap.Nominated = framework.NewNominations()
		for p, n := range nominated {
			snap.Nominated.Set(framework.NewPodInfo(p), n)
		}
	}
	fw := profile.Default(0)
	pi := framework.NewPodInfo(pod)
	_, err := fw.Schedule(context.Background(), framework.NewCycleState(), pi, snap, rand.New(rand.NewPCG(1, 1)))
	fe, ok := err.(*framework.FitError)
	if !ok {
		t.Fatalf("schedule: %v, want a FitError", err)
	}
	return Find(context.Background(), fw, pi, snap, fe.Diagnosis, pdbs)
}

func TestPicksLowestPriorityVictimsOnOneNode(t *testing.T) {
	nodes := []*v1.Node{tu.Node("a", 2, 8, nil), tu.Node("b", 2, 8, nil)}
	c, msg := run(t, prio(tu.Pod("new", "1", ""), 100), nodes,
		tu.OnNode(prio(tu.Pod("a-mid", "1", ""), 50), "a"), tu.OnNode(prio(tu.Pod("a-low", "1", ""), 10), "a"),
		tu.OnNode(prio(tu.Pod("b-mid", "1", ""), 50), "b"), tu.OnNode(prio(tu.Pod("b-mid2", "1", ""), 60), "b"))
	if c == nil {
		t.Fatalf("no candidate: %s", msg)
	}
	if c.Node != "a" || len(c.Victims) != 1 || c.Victims[0].Name != "a-low" {
		t.Errorf("candidate %s %v, want node a evicting a-low only", c.Node, names(c.Victims))
	}
}

func TestNeverAndNotHelpful(t *testing.T) {
	nodes := []*v1.Node{tu.WithTaints(tu.Node("t", 8, 8, nil), v1.Taint{Key: "k", Effect: v1.TaintEffectNoSchedule}), tu.Node("a", 1, 8, nil)}
	full := tu.OnNode(prio(tu.Pod("hi", "1", ""), 1000), "a")
	_, msg := run(t, prio(tu.Pod("new", "1", ""), 100), nodes, full)
	if want := "preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling."; msg != want {
		t.Errorf("msg = %q\nwant %q", msg, want)
	}
	never := v1.PreemptNever
	p := prio(tu.Pod("new", "1", ""), 2000)
	p.Spec.PreemptionPolicy = &never
	c, msg := run(t, p, nodes, full)
	if c != nil || !strings.Contains(msg, "preemptionPolicy=Never") {
		t.Errorf("candidate %v msg %q", c, msg)
	}
}

func names(pods []*v1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

func TestRoomPromisedToANominatedPodIsNotPreemptedFor(t *testing.T) {
	nodes := []*v1.Node{tu.Node("a", 2, 8, nil)}
	low := tu.OnNode(prio(tu.Pod("low", "2", ""), 10), "a")
	nominee := prio(tu.Pod("nominee", "2", ""), 100)
	// Evicting low would free room that the nominee, of higher priority,
	// was promised: no candidate for a mid-priority pod.
	c, msg := runNominated(t, prio(tu.Pod("mid", "2", ""), 50), nodes, map[*v1.Pod]string{nominee: "a"}, low)
	if c != nil {
		t.Fatalf("candidate %s %v, want none", c.Node, names(c.Victims))
	}
	if want := "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."; msg != want {
		t.Errorf("msg = %q\nwant %q", msg, want)
	}
	// A pod that outranks the nominee may still preempt.
	if c, msg := runNominated(t, prio(tu.Pod("top", "2", ""), 500), nodes, map[*v1.Pod]string{nominee: "a"}, low); c == nil {
		t.Errorf("no candidate for a higher-priority pod: %s", msg)
	}
}

func TestNominatedPodWaitsForItsTerminatingVictims(t *testing.T) {
	nodes := []*v1.Node{tu.Node("a", 2, 8, nil), tu.Node("b", 2, 8, nil)}
	victim := tu.OnNode(prio(tu.Pod("victim", "2", ""), 10), "a")
	now := metav1.Now()
	victim.DeletionTimestamp = &now
	other := tu.OnNode(prio(tu.Pod("other", "2", ""), 10), "b")
	pod := prio(tu.Pod("preemptor", "2", ""), 100)
	c, msg := runNominated(t, pod, nodes, map[*v1.Pod]string{pod: "a"}, victim, other)
	if c != nil {
		t.Errorf("preempted again on %s %v while the first victim terminates", c.Node, names(c.Victims))
	}
	if want := "preemption: not eligible due to a terminating pod on the nominated node."; msg != want {
		t.Errorf("msg = %q\nwant %q", msg, want)
	}
	// Without the nomination it is an ordinary preemptor.
	if c, msg := run(t, pod, nodes, victim, other); c == nil {
		t.Errorf("no candidate without a nomination: %s", msg)
	}
}
