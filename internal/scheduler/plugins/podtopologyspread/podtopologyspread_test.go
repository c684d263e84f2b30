package podtopologyspread

import (
	"context"
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
