package tainttoleration

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/orca-project/orca/internal/scheduler/framework"
	tu "github.com/orca-project/orca/internal/scheduler/testutil"
)

func TestFilter(t *testing.T) {
	gpu := v1.Taint{Key: "gpu", Value: "true", Effect: v1.TaintEffectNoSchedule}
	exec := v1.Taint{Key: "dedicated", Value: "db", Effect: v1.TaintEffectNoExecute}
	soft := v1.Taint{Key: "soft", Value: "x", Effect: v1.TaintEffectPreferNoSchedule}
	for _, tc := range []struct {
		name   string
		taints []v1.Taint
		tols   []v1.Toleration
		want   string
	}{
		{"no taints", nil, nil, ""},
		{"untolerated NoSchedule", []v1.Taint{gpu}, nil, "node(s) had untolerated taint {gpu: true}"},
		{"Equal toleration", []v1.Taint{gpu}, []v1.Toleration{{Key: "gpu", Operator: v1.TolerationOpEqual, Value: "true", Effect: v1.TaintEffectNoSchedule}}, ""},
		{"wrong value", []v1.Taint{gpu}, []v1.Toleration{{Key: "gpu", Operator: v1.TolerationOpEqual, Value: "false"}}, "node(s) had untolerated taint {gpu: true}"},
		{"Exists any effect", []v1.Taint{gpu}, []v1.Toleration{{Key: "gpu", Operator: v1.TolerationOpExists}}, ""},
		{"empty key tolerates everything", []v1.Taint{gpu, exec}, []v1.Toleration{{Operator: v1.TolerationOpExists}}, ""},
		{"NoExecute", []v1.Taint{exec}, nil, "node(s) had untolerated taint {dedicated: db}"},
		{"effect mismatch", []v1.Taint{exec}, []v1.Toleration{{Key: "dedicated", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule}}, "node(s) had untolerated taint {dedicated: db}"},
		{"PreferNoSchedule does not filter", []v1.Taint{soft}, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tu.Pod("p", "", "")
			p.Spec.Tolerations = tc.tols
			st := (&Plugin{}).Filter(context.Background(), nil, framework.NewPodInfo(p), framework.NewNodeInfo(tu.WithTaints(tu.Node("n", 1, 1, nil), tc.taints...)))
			if st.Message() != tc.want {
				t.Errorf("message = %q, want %q", st.Message(), tc.want)
			}
			if tc.want != "" && st.Code() != framework.UnschedulableAndUnresolvable {
				t.Errorf("code = %v", st.Code())
			}
		})
	}
}

func TestPreferNoScheduleScore(t *testing.T) {
	soft := func(k string) v1.Taint { return v1.Taint{Key: k, Effect: v1.TaintEffectPreferNoSchedule} }
	p := tu.Pod("p", "", "")
	p.Spec.Tolerations = []v1.Toleration{{Key: "b", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectPreferNoSchedule}}
	pi := framework.NewPodInfo(p)
	var scores []framework.NodeScore
	for _, n := range []*v1.Node{tu.Node("clean", 1, 1, nil), tu.WithTaints(tu.Node("tolerated", 1, 1, nil), soft("b")), tu.WithTaints(tu.Node("two", 1, 1, nil), soft("a"), soft("c"))} {
		s, _ := (&Plugin{}).Score(context.Background(), nil, pi, framework.NewNodeInfo(n))
		scores = append(scores, framework.NodeScore{Name: n.Name, Score: s})
	}
	(&Plugin{}).NormalizeScore(context.Background(), nil, pi, scores)
	if scores[0].Score != 100 || scores[1].Score != 100 || scores[2].Score != 0 {
		t.Errorf("scores = %v", scores)
	}
}
