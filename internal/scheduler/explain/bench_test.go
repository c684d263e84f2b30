package explain_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/orca-project/orca/internal/scheduler/explain"
	"github.com/orca-project/orca/internal/scheduler/framework"
	"github.com/orca-project/orca/internal/scheduler/profile"
	tu "github.com/orca-project/orca/internal/scheduler/testutil"
)

// BenchmarkDecision compares one decision over 500 nodes untraced, traced
// for the in-memory store (same nodes evaluated) and traced over every
// node as for a pod that asks, each with the explanation built.
func BenchmarkDecision(b *testing.B) {
	var nodes []*v1.Node
	for i := range 500 {
		nodes = append(nodes, tu.Node(fmt.Sprintf("n%03d", i), 32, 128, map[string]string{v1.LabelTopologyZone: fmt.Sprint("z", i%10)}))
	}
	snap := tu.Snapshot(nodes)
	pod := framework.NewPodInfo(tu.Pod("p", "100m", "128Mi"))
	for _, mode := range []string{"untraced", "store", "asked"} {
		b.Run(mode, func(b *testing.B) {
			fw := profile.Default(0)
			rng := rand.New(rand.NewPCG(1, 2))
			for b.Loop() {
				if mode == "untraced" {
					if _, err := fw.Schedule(context.Background(), framework.NewCycleState(), pod, snap, rng); err != nil {
						b.Fatal(err)
					}
					continue
				}
				res, tr, err := fw.ScheduleTraced(context.Background(), framework.NewCycleState(), pod, snap, rng, mode == "asked")
				if err != nil {
					b.Fatal(err)
				}
				explain.Build(explain.Input{Namespace: "default", Name: "p", Time: time.Now(), Node: res.Node, Trace: tr, ListCap: 20})
			}
		})
	}
}
