package nodeaffinity

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/orca-project/orca/internal/scheduler/framework"
	tu "github.com/orca-project/orca/internal/scheduler/testutil"
)

// TestAddedAffinity: a profile's addedAffinity applies to every pod on
// top of its own node affinity, as upstream's NodeAffinityArgs do.
func TestAddedAffinity(t *testing.T) {
	req, err := nodeaffinity.NewNodeSelector(&v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
		MatchExpressions: []v1.NodeSelectorRequirement{{Key: "pool", Operator: v1.NodeSelectorOpIn, Values: []string{"batch"}}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	pref, err := nodeaffinity.NewPreferredSchedulingTerms([]v1.PreferredSchedulingTerm{{Weight: 7, Preference: v1.NodeSelectorTerm{
		MatchExpressions: []v1.NodeSelectorRequirement{{Key: "ssd", Operator: v1.NodeSelectorOpExists}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	pl := &Plugin{AddedRequired: req, AddedPreferred: pref}
	for _, tc := range []struct {
		name      string
		labels    map[string]string
		selector  map[string]string
		reason    string
		wantScore int64
	}{
		{"in the pool", map[string]string{"pool": "batch"}, nil, "", 0},
		{"in the pool with ssd", map[string]string{"pool": "batch", "ssd": ""}, nil, "", 7},
		{"outside the pool", map[string]string{"pool": "web"}, nil, ErrReasonEnforced, 0},
		{"pool and the pod's own selector", map[string]string{"pool": "batch"}, map[string]string{"gpu": "true"}, ErrReason, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tu.Pod("p", "", "")
			p.Spec.NodeSelector = tc.selector
			pi := framework.NewPodInfo(p)
			node := framework.NewNodeInfo(tu.Node("n", 1, 1, tc.labels))
			cs := framework.NewCycleState()
			pl.PreFilter(context.Background(), cs, pi, nil)
			st := pl.Filter(context.Background(), cs, pi, node)
			var got string
			if r := st.Reasons(); len(r) > 0 {
				got = r[0]
			}
			if got != tc.reason {
				t.Errorf("filter reason %q, want %q", got, tc.reason)
			}
			if tc.reason == "" {
				if s, _ := pl.Score(context.Background(), cs, pi, node); s != tc.wantScore {
					t.Errorf("score %d, want %d", s, tc.wantScore)
				}
			}
		})
	}
}
