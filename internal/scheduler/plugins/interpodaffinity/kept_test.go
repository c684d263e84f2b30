package interpodaffinity

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orca-project/orca/internal/scheduler/framework"
	tu "github.com/orca-project/orca/internal/scheduler/testutil"
)

// checkRejecter compares the kept per-node verdicts with Filter on every
// node, and Filter with a plugin that keeps nothing.
func checkRejecter(t *testing.T, step string, kept *Plugin, pod *v1.Pod, snap *framework.Snapshot) {
	t.Helper()
	pi := framework.NewPodInfo(pod)
	cs, fresh := framework.NewCycleState(), framework.NewCycleState()
	kept.PreFilter(context.Background(), cs, pi, snap)
	(&Plugin{}).PreFilter(context.Background(), fresh, pi, snap)
	reject := kept.Rejecter(cs)
	if reject == nil {
		t.Fatalf("%s: no rejection test for hostname anti-affinity", step)
	}
	for i, n := range snap.Nodes {
		filtered := !kept.Filter(context.Background(), fresh, pi, n).IsSuccess()
		if reject(i) != filtered {
			t.Fatalf("%s: node %s: kept verdict rejects %v, Filter rejects %v", step, n.Name(), reject(i), filtered)
		}
	}
}

// TestKeptVerdictsFollowTheCache: after random binds, assumptions,
// forgotten and deleted pods, pods being deleted, relabelled, added and
// removed nodes, the verdicts kept across cycles equal Filter's.
func TestKeptVerdictsFollowTheCache(t *testing.T) {
	host := v1.LabelHostname
	group := func(name, g, node string, withAnti bool) *v1.Pod {
		p := tu.OnNode(tu.WithLabels(tu.Pod(name, "", ""), map[string]string{"group": g}), node)
		if withAnti {
			p.Spec.Affinity = anti("x", host)
			p.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].LabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"group": g}}
		}
		return p
	}
	incoming := func(g string) *v1.Pod { return group("new", g, "", true) }
	for seed := range uint64(30) {
		rng := rand.New(rand.NewPCG(seed, 5))
		c := framework.NewCache()
		kept := &Plugin{}
		var bound []*v1.Pod
		var assumed []*framework.PodInfo
		for step := range 150 {
			node := fmt.Sprintf("n%d", rng.IntN(8))
			g := fmt.Sprintf("g%d", rng.IntN(3))
			switch rng.IntN(8) {
			case 0:
				c.AddNode(tu.Node(node, 4, 8, map[string]string{"zone": fmt.Sprintf("z%d", rng.IntN(2))}))
			case 1:
				c.RemoveNode(node)
			case 2, 3:
				p := group("p", g, node, rng.IntN(2) == 0)
				c.AddPod(p)
				bound = append(bound, p)
			case 4:
				pi := framework.NewPodInfo(group("a", g, node, true))
				if c.AssumePod(pi) == nil {
					assumed = append(assumed, pi)
				}
			case 5:
				if len(assumed) > 0 {
					i := rng.IntN(len(assumed))
					c.ForgetPod(assumed[i].Pod.UID)
					assumed = append(assumed[:i], assumed[i+1:]...)
				}
			case 6:
				if len(bound) > 0 {
					i := rng.IntN(len(bound))
					c.RemovePod(bound[i].UID)
					bound = append(bound[:i], bound[i+1:]...)
				}
			case 7:
				if len(bound) > 0 {
					p := bound[rng.IntN(len(bound))].DeepCopy()
					p.DeletionTimestamp = &metav1.Time{}
					c.UpdatePod(p)
				}
			}
			if rng.IntN(3) == 0 {
				continue
			}
			c.WithSnapshot(func(snap *framework.Snapshot) {
				checkRejecter(t, fmt.Sprintf("seed %d step %d", seed, step), kept, incoming(fmt.Sprintf("g%d", rng.IntN(3))), snap)
			})
		}
	}
}

// TestNoVerdictWhenFilterWeighsMore: terms over other keys, or required
// affinity, leave Filter to decide node by node.
func TestNoVerdictWhenFilterWeighsMore(t *testing.T) {
	c := framework.NewCache()
	c.AddNode(tu.Node("a", 4, 8, map[string]string{"zone": "z1"}))
	c.AddPod(tu.OnNode(podWith("w1", "web", nil), "a"))
	for _, tc := range []struct {
		name string
		pod  *v1.Pod
	}{
		{"anti-affinity per zone", podWith("w", "web", anti("web", "zone"))},
		{"required affinity", podWith("w", "web", affinity("web", v1.LabelHostname))},
	} {
		c.WithSnapshot(func(snap *framework.Snapshot) {
			pl, cs := &Plugin{}, framework.NewCycleState()
			pl.PreFilter(context.Background(), cs, framework.NewPodInfo(tc.pod), snap)
			if pl.Rejecter(cs) != nil {
				t.Errorf("%s: a per-node verdict was offered", tc.name)
			}
		})
	}
}
