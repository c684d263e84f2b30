package interpodaffinity

import (
	"context"
	"testing"

	"github.com/orca-project/orca/internal/scheduler/framework"
	tu "github.com/orca-project/orca/internal/scheduler/testutil"
)

// TestHardPodAffinityWeight: a running pod's required affinity to the
// incoming pod draws it with hardPodAffinityWeight (upstream's
// InterPodAffinityArgs); 0 turns that pull off.
func TestHardPodAffinityWeight(t *testing.T) {
	w := func(n int64) *int64 { return &n }
	for _, tc := range []struct {
		name   string
		weight *int64
		// want is the raw score on nodes a, b and c.
		want [3]int64
	}{
		{"default weight 1", nil, [3]int64{1, 1, 0}},
		{"weight 5", w(5), [3]int64{5, 5, 0}},
		{"weight 0", w(0), [3]int64{0, 0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A running pod on a wants "web" pods in its zone (z1: a and b).
			snap := cluster(tu.OnNode(podWith("friend", "db", affinity("web", "zone")), "a"))
			pi, cs, pl := framework.NewPodInfo(podWith("w", "web", nil)), framework.NewCycleState(), &Plugin{HardPodAffinityWeight: tc.weight}
			pl.PreScore(context.Background(), cs, pi, snap, snap.Nodes)
			var got [3]int64
			for i, n := range snap.Nodes {
				got[i], _ = pl.Score(context.Background(), cs, pi, n)
			}
			if got != tc.want {
				t.Errorf("scores = %v, want %v", got, tc.want)
			}
		})
	}
}
