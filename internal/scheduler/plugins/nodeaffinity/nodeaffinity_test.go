package nodeaffinity

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/orca-project/orca/internal/scheduler/framework"
	tu "github.com/orca-project/orca/internal/scheduler/testutil"
)

func required(reqs ...v1.NodeSelectorRequirement) *v1.Affinity {
	return &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
		NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: reqs}},
	}}}
}

func TestFilter(t *testing.T) {
	node := tu.Node("n1", 4, 8, map[string]string{"gpu": "true", "cores": "8", "zone": "a"})
	for _, tc := range []struct {
		name     string
		selector map[string]string
		affinity *v1.Affinity
		want     bool
	}{
		{"nothing", nil, nil, true},
		{"nodeSelector match", map[string]string{"gpu": "true"}, nil, true},
		{"nodeSelector miss", map[string]string{"gpu": "false"}, nil, false},
		{"In", nil, required(v1.NodeSelectorRequirement{Key: "zone", Operator: v1.NodeSelectorOpIn, Values: []string{"a", "b"}}), true},
		{"NotIn", nil, required(v1.NodeSelectorRequirement{Key: "zone", Operator: v1.NodeSelectorOpNotIn, Values: []string{"a"}}), false},
		{"Exists", nil, required(v1.NodeSelectorRequirement{Key: "gpu", Operator: v1.NodeSelectorOpExists}), true},
		{"DoesNotExist", nil, required(v1.NodeSelectorRequirement{Key: "gpu", Operator: v1.NodeSelectorOpDoesNotExist}), false},
		{"Gt", nil, required(v1.NodeSelectorRequirement{Key: "cores", Operator: v1.NodeSelectorOpGt, Values: []string{"4"}}), true},
		{"Lt", nil, required(v1.NodeSelectorRequirement{Key: "cores", Operator: v1.NodeSelectorOpLt, Values: []string{"4"}}), false},
		{"matchFields", nil, &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
			NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchFields: []v1.NodeSelectorRequirement{{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{"n1"}}}}},
		}}}, true},
		{"selector and affinity both needed", map[string]string{"gpu": "false"}, required(v1.NodeSelectorRequirement{Key: "gpu", Operator: v1.NodeSelectorOpExists}), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tu.Pod("p", "", "")
			p.Spec.NodeSelector, p.Spec.Affinity = tc.selector, tc.affinity
			pi := framework.NewPodInfo(p)
			cs := framework.NewCycleState()
			pl := &Plugin{}
			if st := pl.PreFilter(context.Background(), cs, pi, nil); !st.IsSuccess() {
				t.Fatal(st.Message())
			}
			st := pl.Filter(context.Background(), cs, pi, framework.NewNodeInfo(node))
			if st.IsSuccess() != tc.want {
				t.Errorf("fits = %v, want %v (%s)", st.IsSuccess(), tc.want, st.Message())
			}
			if !tc.want && (st.Code() != framework.UnschedulableAndUnresolvable || st.Message() != ErrReason) {
				t.Errorf("status = %v %q", st.Code(), st.Message())
			}
		})
	}
}

func TestPreferredScore(t *testing.T) {
	p := tu.Pod("p", "", "")
	p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{
		{Weight: 10, Preference: v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "ssd", Operator: v1.NodeSelectorOpExists}}}},
		{Weight: 30, Preference: v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "zone", Operator: v1.NodeSelectorOpIn, Values: []string{"a"}}}}},
	}}}
	pi, cs, pl := framework.NewPodInfo(p), framework.NewCycleState(), &Plugin{}
	pl.PreFilter(context.Background(), cs, pi, nil)
	var scores []framework.NodeScore
	for _, n := range []*v1.Node{tu.Node("both", 1, 1, map[string]string{"ssd": "", "zone": "a"}), tu.Node("zone", 1, 1, map[string]string{"zone": "a"}), tu.Node("none", 1, 1, nil)} {
		s, _ := pl.Score(context.Background(), cs, pi, framework.NewNodeInfo(n))
		scores = append(scores, framework.NodeScore{Name: n.Name, Score: s})
	}
	pl.NormalizeScore(context.Background(), cs, pi, scores)
	if scores[0].Score != 100 || scores[1].Score != 75 || scores[2].Score != 0 {
		t.Errorf("scores = %v, want 100, 75, 0", scores)
	}
}
