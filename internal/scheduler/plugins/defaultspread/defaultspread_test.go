package defaultspread

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orca-project/orca/internal/scheduler/framework"
	tu "github.com/orca-project/orca/internal/scheduler/testutil"
)

func owned(name, node string) *v1.Pod {
	p := tu.OnNode(tu.Pod(name, "", ""), node)
	yes := true
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "rs-uid", Controller: &yes}}
	return p
}

func TestSpreadsPodsOfOneOwner(t *testing.T) {
	a := framework.NewNodeInfo(tu.Node("a", 4, 8, nil))
	b := framework.NewNodeInfo(tu.Node("b", 4, 8, nil))
	c := framework.NewNodeInfo(tu.Node("c", 4, 8, nil))
	a.AddPod(framework.NewPodInfo(owned("x1", "a")))
	a.AddPod(framework.NewPodInfo(owned("x2", "a")))
	b.AddPod(framework.NewPodInfo(owned("x3", "b")))
	c.AddPod(framework.NewPodInfo(tu.OnNode(tu.Pod("other", "", ""), "c")))
	snap := framework.NewSnapshot(a, b, c)
	pi, cs, pl := framework.NewPodInfo(owned("new", "")), framework.NewCycleState(), &Plugin{}
	pl.PreScore(context.Background(), cs, pi, snap, snap.Nodes)
	var scores []framework.NodeScore
	for _, n := range snap.Nodes {
		s, _ := pl.Score(context.Background(), cs, pi, n)
		scores = append(scores, framework.NodeScore{Name: n.Name(), Score: s})
	}
	pl.NormalizeScore(context.Background(), cs, pi, scores)
	if scores[0].Score != 0 || scores[1].Score != 50 || scores[2].Score != 100 {
		t.Errorf("scores = %v, want a=0 b=50 c=100", scores)
	}
}
