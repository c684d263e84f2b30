package framework_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/orca-project/orca/internal/scheduler/framework"
	"github.com/orca-project/orca/internal/scheduler/profile"
	tu "github.com/orca-project/orca/internal/scheduler/testutil"
)

func TestScheduleTracedMatchesScheduleAndAccountsForEveryNode(t *testing.T) {
	// 300 nodes with the adaptive percentage (48%): an untraced search stops
	// after 144 feasible nodes.
	var nodes []*v1.Node
	for i := range 300 {
		nodes = append(nodes, tu.Node(fmt.Sprintf("n%03d", i), 4, 8, nil))
	}
	for _, tc := range []struct {
		name          string
		all           bool
		wantEvaluated int
		wantScored    int
	}{
		{"like Schedule", false, 144, 144}, // NumFeasibleNodesToFind(0, 300)
		{"every node", true, 300, 300},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fw, ref := profile.Default(0), profile.Default(0)
			// Which 144 feasible nodes a parallel search finds first
			// depends on its goroutines' timing; one worker makes both
			// searches visit the same nodes, so their decisions compare.
			fw.Parallelism, ref.Parallelism = 1, 1
			snap := tu.Snapshot(nodes)
			pod := framework.NewPodInfo(tu.Pod("p", "100m", ""))
			res, tr, err := fw.ScheduleTraced(context.Background(), framework.NewCycleState(), pod, snap, rand.New(rand.NewPCG(1, 2)), tc.all)
			if err != nil {
				t.Fatal(err)
			}
			want, err := ref.Schedule(context.Background(), framework.NewCycleState(), pod, snap, rand.New(rand.NewPCG(1, 2)))
			if err != nil {
				t.Fatal(err)
			}
			if !tc.all && (res.Node != want.Node || res.Evaluated != want.Evaluated) {
				t.Errorf("traced decision %s after %d nodes, untraced %s after %d", res.Node, res.Evaluated, want.Node, want.Evaluated)
			}
			if tr.NumAllNodes != 300 || tr.Evaluated != tc.wantEvaluated || tr.Feasible != tc.wantEvaluated || len(tr.Scored) != tc.wantScored {
				t.Errorf("trace: %d nodes, %d evaluated, %d feasible, %d scored; want 300, %d, %d, %d",
					tr.NumAllNodes, tr.Evaluated, tr.Feasible, len(tr.Scored), tc.wantEvaluated, tc.wantEvaluated, tc.wantScored)
			}
			if len(tr.ScorePlugins) != len(fw.Scores) {
				t.Fatalf("score plugins %v, want %d", tr.ScorePlugins, len(fw.Scores))
			}
			for _, n := range tr.Scored {
				var sum int64
				for _, w := range n.Weighted {
					sum += w
				}
				if sum != n.Total {
					t.Errorf("node %s: weighted scores %v add up to %d, total %d", n.Name, n.Weighted, sum, n.Total)
				}
				if n.Name == res.Node && n.Total != res.Top[0].Score {
					t.Errorf("chosen %s: total %d, Top says %d", n.Name, n.Total, res.Top[0].Score)
				}
			}
		})
	}
}

func TestScheduleTopRanksChosenFirstThenByScore(t *testing.T) {
	// a is busiest, so least-allocated scoring ranks c, b, a... with d
	// tied with c: the chosen one of the two comes first.
	nodes := []*v1.Node{tu.Node("a", 4, 8, nil), tu.Node("b", 4, 8, nil), tu.Node("c", 4, 8, nil), tu.Node("d", 4, 8, nil)}
	pods := []*v1.Pod{tu.OnNode(tu.Pod("x", "3", "6Gi"), "a"), tu.OnNode(tu.Pod("y", "1", "2Gi"), "b")}
	for i := range 20 {
		res, err := profile.Default(0).Schedule(context.Background(), framework.NewCycleState(), framework.NewPodInfo(tu.Pod("p", "100m", "100Mi")), tu.Snapshot(nodes, pods...), rand.New(rand.NewPCG(uint64(i), 3)))
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Top) != framework.TopN {
			t.Fatalf("top %v, want %d nodes", res.Top, framework.TopN)
		}
		other := map[string]string{"c": "d", "d": "c"}[res.Node]
		if other == "" || res.Top[0].Name != res.Node || res.Top[1].Name != other || res.Top[2].Name != "b" {
			t.Fatalf("chose %s, top %v: want the chosen of c/d, the other, then b", res.Node, res.Top)
		}
		if res.Top[0].Score != res.Top[1].Score || res.Top[1].Score <= res.Top[2].Score {
			t.Errorf("top scores %v: want a tie, then a lower score", res.Top)
		}
	}
}

func TestScheduleTopIsNilWhenOneNodeFits(t *testing.T) {
	nodes := []*v1.Node{tu.Node("a", 1, 8, nil), tu.Node("b", 4, 8, nil)}
	res, err := profile.Default(0).Schedule(context.Background(), framework.NewCycleState(), framework.NewPodInfo(tu.Pod("p", "2", "")), tu.Snapshot(nodes), rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	if res.Node != "b" || res.Top != nil {
		t.Errorf("node %s top %v, want b and no ranking", res.Node, res.Top)
	}
}
