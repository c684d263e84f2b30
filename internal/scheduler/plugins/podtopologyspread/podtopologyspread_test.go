package podtopologyspread

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orca-project/orca/internal/scheduler/framework"
	tu "github.com/orca-project/orca/internal/scheduler/testutil"
)

func web(name, node string) *v1.Pod {
	return tu.OnNode(tu.WithLabels(tu.Pod(name, "", ""), map[string]string{"app": "web"}), node)
}

func spreadPod(key string, skew int32, when v1.UnsatisfiableConstraintAction) *v1.Pod {
	p := tu.WithLabels(tu.Pod("new", "", ""), map[string]string{"app": "web"})
	p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{
		MaxSkew: skew, TopologyKey: key, WhenUnsatisfiable: when,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
	}}
	return p
}

// zones: a, b in z1; c in z2; d has no zone label.
func cluster(pods ...*v1.Pod) *framework.Snapshot {
	nodes := map[string]*framework.NodeInfo{
		"a": framework.NewNodeInfo(tu.Node("a", 4, 8, map[string]string{"zone": "z1"})),
		"b": framework.NewNodeInfo(tu.Node("b", 4, 8, map[string]string{"zone": "z1"})),
		"c": framework.NewNodeInfo(tu.Node("c", 4, 8, map[string]string{"zone": "z2"})),
		"d": framework.NewNodeInfo(tu.Node("d", 4, 8, nil)),
	}
	for _, p := range pods {
		nodes[p.Spec.NodeName].AddPod(framework.NewPodInfo(p))
	}
	return framework.NewSnapshot(nodes["a"], nodes["b"], nodes["c"], nodes["d"])
}

func TestFilter(t *testing.T) {
	for _, tc := range []struct {
		name     string
		existing []*v1.Pod
		pod      *v1.Pod
		want     map[string]string
	}{
		{"zone skew 1 with z1 ahead", []*v1.Pod{web("w1", "a")}, spreadPod("zone", 1, v1.DoNotSchedule),
			map[string]string{"a": ErrReasonConstraintsNotMatch, "b": ErrReasonConstraintsNotMatch, "c": "", "d": ErrReasonNodeLabelNotMatch}},
		{"balanced zones allow both", []*v1.Pod{web("w1", "a"), web("w2", "c")}, spreadPod("zone", 1, v1.DoNotSchedule),
			map[string]string{"a": "", "b": "", "c": "", "d": ErrReasonNodeLabelNotMatch}},
		{"hostname skew 2", []*v1.Pod{web("w1", "a"), web("w2", "a")}, spreadPod(v1.LabelHostname, 2, v1.DoNotSchedule),
			map[string]string{"a": ErrReasonConstraintsNotMatch, "b": "", "c": "", "d": ""}},
		{"ScheduleAnyway never filters", []*v1.Pod{web("w1", "a")}, spreadPod("zone", 1, v1.ScheduleAnyway),
			map[string]string{"a": "", "b": "", "c": "", "d": ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := cluster(tc.existing...)
			pi, cs, pl := framework.NewPodInfo(tc.pod), framework.NewCycleState(), &Plugin{}
			if st := pl.PreFilter(context.Background(), cs, pi, snap); !st.IsSuccess() {
				t.Fatal(st.Message())
			}
			for _, n := range snap.Nodes {
				if got := pl.Filter(context.Background(), cs, pi, n).Message(); got != tc.want[n.Name()] {
					t.Errorf("node %s: %q, want %q", n.Name(), got, tc.want[n.Name()])
				}
			}
		})
	}
}

func TestScoreFavoursEmptierDomains(t *testing.T) {
	snap := cluster(web("w1", "a"), web("w2", "a"), web("w3", "b"))
	pi, cs, pl := framework.NewPodInfo(spreadPod(v1.LabelHostname, 1, v1.ScheduleAnyway)), framework.NewCycleState(), &Plugin{}
	feasible := snap.Nodes[:3]
	pl.PreScore(context.Background(), cs, pi, snap, feasible)
	var scores []framework.NodeScore
	for _, n := range feasible {
		s, _ := pl.Score(context.Background(), cs, pi, n)
		scores = append(scores, framework.NodeScore{Name: n.Name(), Score: s})
	}
	pl.NormalizeScore(context.Background(), cs, pi, scores)
	if !(scores[2].Score > scores[1].Score && scores[1].Score > scores[0].Score) {
		t.Errorf("scores = %v, want c > b > a", scores)
	}
}

// TestDomainCountsFollowTheCache checks the counts kept across cycles
// against a fresh count after pods are added, removed and a node changes.
func TestDomainCountsFollowTheCache(t *testing.T) {
	c := framework.NewCache()
	for i, z := range []string{"z1", "z1", "z2", "z3"} {
		c.AddNode(tu.Node(fmt.Sprintf("n%d", i), 4, 8, map[string]string{"zone": z}))
	}
	kept := &Plugin{}
	check := func(step string) {
		t.Helper()
		c.WithSnapshot(func(snap *framework.Snapshot) {
			pi := framework.NewPodInfo(spreadPod("zone", 1, v1.DoNotSchedule))
			a, b := framework.NewCycleState(), framework.NewCycleState()
			kept.PreFilter(context.Background(), a, pi, snap)
			(&Plugin{}).PreFilter(context.Background(), b, pi, snap)
			ga, _ := a.Read(filterKey)
			gb, _ := b.Read(filterKey)
			if !reflect.DeepEqual(ga.(*filterState).counts, gb.(*filterState).counts) || !reflect.DeepEqual(ga.(*filterState).minMatch, gb.(*filterState).minMatch) {
				t.Errorf("%s: kept %v/%v, fresh %v/%v", step, ga.(*filterState).counts, ga.(*filterState).minMatch, gb.(*filterState).counts, gb.(*filterState).minMatch)
			}
		})
	}
	check("empty")
	w1, w2 := web("w1", "n0"), web("w2", "n2")
	c.AddPod(w1)
	check("one pod")
	c.AddPod(w2)
	check("two pods")
	c.RemovePod(w1.UID)
	check("removed")
	c.UpdateNode(tu.Node("n3", 4, 8, map[string]string{"zone": "z2"}))
	check("relabelled node")
	c.AddNode(tu.Node("n4", 4, 8, nil))
	check("node without the key")
}
