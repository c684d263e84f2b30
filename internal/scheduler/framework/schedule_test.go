package framework_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/orca-project/orca/internal/scheduler/framework"
	"github.com/orca-project/orca/internal/scheduler/profile"
	tu "github.com/orca-project/orca/internal/scheduler/testutil"
)

func TestFitErrorMessageIsUpstreams(t *testing.T) {
	gpu := v1.Taint{Key: "gpu", Value: "true", Effect: v1.TaintEffectNoSchedule}
	nodes := []*v1.Node{
		tu.Node("a", 1, 4, nil), tu.Node("b", 1, 4, nil),
		tu.WithTaints(tu.Node("c", 8, 4, nil), gpu), tu.WithTaints(tu.Node("d", 8, 4, nil), gpu), tu.WithTaints(tu.Node("e", 8, 4, nil), gpu),
	}
	fw := profile.Default(0)
	_, err := fw.Schedule(context.Background(), framework.NewCycleState(), framework.NewPodInfo(tu.Pod("p", "2", "")), tu.Snapshot(nodes), rand.New(rand.NewPCG(1, 2)))
	fe, ok := err.(*framework.FitError)
	if !ok {
		t.Fatalf("err = %v, want a FitError", err)
	}
	want := "0/5 nodes are available: 2 Insufficient cpu, 3 node(s) had untolerated taint {gpu: true}."
	if got := fe.Error(); got != want {
		t.Errorf("message\n got %q\nwant %q", got, want)
	}
}

func TestScheduleSpreadsByLeastAllocatedAndBreaksTiesRandomly(t *testing.T) {
	nodes := []*v1.Node{tu.Node("a", 4, 8, nil), tu.Node("b", 4, 8, nil), tu.Node("c", 4, 8, nil)}
	busy := tu.OnNode(tu.Pod("busy", "3", "6Gi"), "a")
	fw := profile.Default(0)
	seen := map[string]int{}
	for i := range 200 {
		res, err := fw.Schedule(context.Background(), framework.NewCycleState(), framework.NewPodInfo(tu.Pod("p", "100m", "100Mi")), tu.Snapshot(nodes, busy), rand.New(rand.NewPCG(uint64(i), 7)))
		if err != nil {
			t.Fatal(err)
		}
		seen[res.Node]++
	}
	if seen["a"] != 0 || seen["b"] == 0 || seen["c"] == 0 {
		t.Errorf("placements %v: want b and c (tied) and never the busy a", seen)
	}
}

func TestNumFeasibleNodesToFind(t *testing.T) {
	for _, tc := range []struct{ pct, all, want int }{
		{0, 50, 50}, {0, 100, 100}, {0, 500, 230}, {0, 1000, 420}, {0, 5000, 500}, {0, 10000, 500}, {0, 200, 100}, {100, 5000, 5000}, {30, 1000, 300},
	} {
		if got := framework.NumFeasibleNodesToFind(tc.pct, tc.all); got != tc.want {
			t.Errorf("NumFeasibleNodesToFind(%d, %d) = %d, want %d", tc.pct, tc.all, got, tc.want)
		}
	}
}

func TestCacheAssumedPodsCountUntilConfirmedOrForgotten(t *testing.T) {
	c := framework.NewCache()
	c.AddNode(tu.Node("a", 2, 4, nil))
	p := tu.OnNode(tu.Pod("p", "1", ""), "a")
	if err := c.AssumePod(framework.NewPodInfo(p)); err != nil {
		t.Fatal(err)
	}
	requested := func() int64 {
		var cpu int64
		c.WithSnapshot(func(s *framework.Snapshot) { cpu = s.Get("a").Requested.MilliCPU })
		return cpu
	}
	if got := requested(); got != 1000 {
		t.Fatalf("requested after assume = %d", got)
	}
	c.AddPod(p) // the informer confirms the binding
	if c.IsAssumed(p.UID) || requested() != 1000 {
		t.Fatalf("after confirm: assumed=%v requested=%d", c.IsAssumed(p.UID), requested())
	}
	c.ForgetPod(p.UID) // a confirmed pod is not forgotten
	if requested() != 1000 {
		t.Fatal("confirmed pod was forgotten")
	}
	c.RemovePod(p.UID)
	if requested() != 0 {
		t.Fatal("pod not removed")
	}
	q := tu.OnNode(tu.Pod("q", "1", ""), "a")
	_ = c.AssumePod(framework.NewPodInfo(q))
	c.ForgetPod(q.UID)
	if requested() != 0 {
		t.Fatal("forgotten assumed pod still counted")
	}
}

func TestRequestsCountInitContainersAndOverheadLikeUpstream(t *testing.T) {
	p := tu.Pod("p", "500m", "")
	p.Spec.Containers = append(p.Spec.Containers, p.Spec.Containers[0])
	init := p.Spec.Containers[0].DeepCopy()
	init.Resources.Requests[v1.ResourceCPU] = resourceMust("2")
	p.Spec.InitContainers = []v1.Container{*init}
	p.Spec.Overhead = v1.ResourceList{v1.ResourceCPU: resourceMust("250m")}
	if got := framework.NewPodInfo(p).Requests.MilliCPU; got != 2250 {
		t.Errorf("cpu = %dm, want max(1000, 2000) + 250 = 2250m", got)
	}
	restartable := v1.ContainerRestartPolicyAlways
	p.Spec.InitContainers[0].RestartPolicy = &restartable // a sidecar runs alongside
	if got := framework.NewPodInfo(p).Requests.MilliCPU; got != 3250 {
		t.Errorf("cpu with sidecar = %dm, want 2000 + 1000 + 250 = 3250m", got)
	}
	if !strings.Contains(framework.ReasonHistogram(map[string]*framework.Status{"a": framework.NewStatus(framework.Unschedulable, "x")}), "1 x") {
		t.Error("histogram")
	}
}
