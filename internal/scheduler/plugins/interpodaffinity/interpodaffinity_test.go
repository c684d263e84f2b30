package interpodaffinity

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orca-project/orca/internal/scheduler/framework"
	tu "github.com/orca-project/orca/internal/scheduler/testutil"
)

func term(app, key string) v1.PodAffinityTerm {
	return v1.PodAffinityTerm{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}, TopologyKey: key}
}

func podWith(name, app string, aff *v1.Affinity) *v1.Pod {
	p := tu.WithLabels(tu.Pod(name, "", ""), map[string]string{"app": app})
	p.Spec.Affinity = aff
	return p
}

func anti(app, key string) *v1.Affinity {
	return &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{term(app, key)}}}
}

func affinity(app, key string) *v1.Affinity {
	return &v1.Affinity{PodAffinity: &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{term(app, key)}}}
}

// cluster: a and b in zone z1, c in zone z2.
func cluster(pods ...*v1.Pod) *framework.Snapshot {
	nodes := map[string]*framework.NodeInfo{
		"a": framework.NewNodeInfo(tu.Node("a", 4, 8, map[string]string{"zone": "z1"})),
		"b": framework.NewNodeInfo(tu.Node("b", 4, 8, map[string]string{"zone": "z1"})),
		"c": framework.NewNodeInfo(tu.Node("c", 4, 8, map[string]string{"zone": "z2"})),
	}
	for _, p := range pods {
		nodes[p.Spec.NodeName].AddPod(framework.NewPodInfo(p))
	}
	return framework.NewSnapshot(nodes["a"], nodes["b"], nodes["c"])
}

func TestFilter(t *testing.T) {
	host := v1.LabelHostname
	for _, tc := range []struct {
		name     string
		existing []*v1.Pod
		pod      *v1.Pod
		want     map[string]string // node -> reason ("" fits)
	}{
		{"anti-affinity per host", []*v1.Pod{tu.OnNode(podWith("w1", "web", nil), "a")}, podWith("w2", "web", anti("web", host)),
			map[string]string{"a": ErrReasonAntiAffinity, "b": "", "c": ""}},
		{"anti-affinity per zone", []*v1.Pod{tu.OnNode(podWith("w1", "web", nil), "a")}, podWith("w2", "web", anti("web", "zone")),
			map[string]string{"a": ErrReasonAntiAffinity, "b": ErrReasonAntiAffinity, "c": ""}},
		{"existing pod's anti-affinity binds the newcomer", []*v1.Pod{tu.OnNode(podWith("db", "db", anti("web", host)), "b")}, podWith("w", "web", nil),
			map[string]string{"a": "", "b": ErrReasonExistingAntiAffi, "c": ""}},
		{"affinity to a zone", []*v1.Pod{tu.OnNode(podWith("db", "db", nil), "c")}, podWith("w", "web", affinity("db", "zone")),
			map[string]string{"a": ErrReasonAffinity, "b": ErrReasonAffinity, "c": ""}},
		{"affinity with no match anywhere", nil, podWith("w", "web", affinity("db", "zone")),
			map[string]string{"a": ErrReasonAffinity, "b": ErrReasonAffinity, "c": ErrReasonAffinity}},
		{"first pod of a self-selecting group goes anywhere", nil, podWith("w", "web", affinity("web", "zone")),
			map[string]string{"a": "", "b": "", "c": ""}},
		{"missing topology key", nil, podWith("w", "web", affinity("web", "rack")),
			map[string]string{"a": ErrReasonAffinity, "b": ErrReasonAffinity, "c": ErrReasonAffinity}},
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

func TestPreferredScore(t *testing.T) {
	p := podWith("w", "web", &v1.Affinity{
		PodAffinity:     &v1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{{Weight: 50, PodAffinityTerm: term("cache", "zone")}}},
		PodAntiAffinity: &v1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{{Weight: 100, PodAffinityTerm: term("web", v1.LabelHostname)}}},
	})
	snap := cluster(tu.OnNode(podWith("cache", "cache", nil), "a"), tu.OnNode(podWith("w0", "web", nil), "a"))
	pi, cs, pl := framework.NewPodInfo(p), framework.NewCycleState(), &Plugin{}
	pl.PreScore(context.Background(), cs, pi, snap, snap.Nodes)
	var scores []framework.NodeScore
	for _, n := range snap.Nodes {
		s, _ := pl.Score(context.Background(), cs, pi, n)
		scores = append(scores, framework.NodeScore{Name: n.Name(), Score: s})
	}
	pl.NormalizeScore(context.Background(), cs, pi, scores)
	// a: +50 -100 = -50; b: +50 (same zone as the cache); c: 0.
	if scores[0].Score != 0 || scores[1].Score != 100 || scores[2].Score != 50 {
		t.Errorf("scores = %v, want a=0 b=100 c=50", scores)
	}
}
