package podtopologyspread

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/orca-project/orca/internal/scheduler/framework"
	tu "github.com/orca-project/orca/internal/scheduler/testutil"
)

// twoKeys spreads web pods over zones and racks, both DoNotSchedule.
func twoKeys() *v1.Pod {
	p := spreadPod("zone", 1, v1.DoNotSchedule)
	p.Spec.TopologySpreadConstraints = append(p.Spec.TopologySpreadConstraints, v1.TopologySpreadConstraint{
		MaxSkew: 2, TopologyKey: "rack", WhenUnsatisfiable: v1.DoNotSchedule,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
	})
	return p
}

// checkAgainstScan runs the kept plugin's PreFilter on snap and compares
// its counts with a from-scratch scan of every node, and its per-node
// rejection test with Filter on each node.
func checkAgainstScan(t *testing.T, step string, kept *Plugin, pod *v1.Pod, snap *framework.Snapshot) {
	t.Helper()
	pi := framework.NewPodInfo(pod)
	cs := framework.NewCycleState()
	if st := kept.PreFilter(context.Background(), cs, pi, snap); !st.IsSuccess() {
		t.Fatalf("%s: prefilter: %s", step, st.Message())
	}
	v, _ := cs.Read(filterKey)
	got := v.(*filterState)

	cons, _ := constraints(pod, v1.DoNotSchedule)
	want := &filterState{constraints: cons, counts: make([]map[string]int, len(cons))}
	for i := range cons {
		want.counts[i] = map[string]int{}
	}
	(&Plugin{}).prefilterScan(want, pi, nodeaffinity.GetRequiredNodeAffinity(pod), false, cons, snap)
	want.setMinMatch()
	if !reflect.DeepEqual(got.counts, want.counts) || !reflect.DeepEqual(got.minMatch, want.minMatch) {
		t.Fatalf("%s: kept counts %v min %v, from scratch %v min %v", step, got.counts, got.minMatch, want.counts, want.minMatch)
	}
	reject := kept.Rejecter(cs)
	if reject == nil {
		t.Fatalf("%s: no rejection test from kept counts", step)
	}
	for i, n := range snap.Nodes {
		filtered := !kept.Filter(context.Background(), cs, pi, n).IsSuccess()
		if reject(i) != filtered {
			t.Fatalf("%s: node %s: rejection test says %v, Filter rejects: %v", step, n.Name(), reject(i), filtered)
		}
	}
}

// TestKeptCountsFollowEveryCacheChange walks a table of cache changes and
// after each compares the counts kept across cycles with a fresh count.
func TestKeptCountsFollowEveryCacheChange(t *testing.T) {
	c := framework.NewCache()
	kept := &Plugin{}
	w1, w2, w3 := web("w1", "n0"), web("w2", "n2"), web("w3", "n1")
	assumed := framework.NewPodInfo(web("assumed", "n3"))
	db := tu.OnNode(tu.WithLabels(tu.Pod("db", "", ""), map[string]string{"app": "db"}), "n3")
	steps := []struct {
		name string
		do   func()
	}{
		{"nodes in three zones", func() {
			for i, z := range []string{"z1", "z1", "z2", "z3"} {
				c.AddNode(tu.Node(fmt.Sprintf("n%d", i), 4, 8, map[string]string{"zone": z, "rack": fmt.Sprintf("r%d", i%2)}))
			}
		}},
		{"bound pod", func() { c.AddPod(w1) }},
		{"second bound pod", func() { c.AddPod(w2) }},
		{"pod the selector does not match", func() { c.AddPod(db) }},
		{"assumed pod", func() { _ = c.AssumePod(assumed) }},
		{"assumed pod forgotten", func() { c.ForgetPod(assumed.Pod.UID) }},
		{"pod being deleted no longer counts", func() {
			d := w2.DeepCopy()
			d.DeletionTimestamp = &metav1.Time{}
			c.UpdatePod(d)
		}},
		{"pod deleted", func() { c.RemovePod(w2.UID) }},
		{"pod on a node that moves zone", func() {
			c.AddPod(w3)
			c.UpdateNode(tu.Node("n1", 4, 8, map[string]string{"zone": "z3", "rack": "r1"}))
		}},
		{"node loses a key", func() { c.UpdateNode(tu.Node("n2", 4, 8, map[string]string{"zone": "z2"})) }},
		{"node without the keys added", func() { c.AddNode(tu.Node("n4", 4, 8, nil)) }},
		{"node with pods removed", func() { c.RemoveNode("n0") }},
		{"node comes back", func() {
			c.AddNode(tu.Node("n0", 4, 8, map[string]string{"zone": "z4", "rack": "r0"}))
		}},
	}
	for _, s := range steps {
		s.do()
		c.WithSnapshot(func(snap *framework.Snapshot) { checkAgainstScan(t, s.name, kept, twoKeys(), snap) })
	}
}

// TestKeptCountsRandomSequences is the property behind the table: after
// any sequence of cache changes the kept counts equal a fresh count.
func TestKeptCountsRandomSequences(t *testing.T) {
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 99))
		c := framework.NewCache()
		kept := &Plugin{}
		var bound []*v1.Pod
		var assumed []*framework.PodInfo
		nodeName := func() string { return fmt.Sprintf("n%d", rng.IntN(8)) }
		for step := range 150 {
			var what string
			switch op := rng.IntN(8); op {
			case 0, 1:
				labels := map[string]string{}
				if rng.IntN(6) > 0 {
					labels["zone"] = fmt.Sprintf("z%d", rng.IntN(3))
				}
				if rng.IntN(6) > 0 {
					labels["rack"] = fmt.Sprintf("r%d", rng.IntN(4))
				}
				n := nodeName()
				what = "add or relabel " + n
				c.AddNode(tu.Node(n, 4, 8, labels))
			case 2:
				n := nodeName()
				what = "remove node " + n
				c.RemoveNode(n)
			case 3:
				app := []string{"web", "db"}[rng.IntN(2)]
				p := tu.OnNode(tu.WithLabels(tu.Pod("p", "", ""), map[string]string{"app": app}), nodeName())
				what = "bind a pod on " + p.Spec.NodeName
				c.AddPod(p)
				bound = append(bound, p)
			case 4:
				pi := framework.NewPodInfo(web("a", nodeName()))
				what = "assume a pod on " + pi.Pod.Spec.NodeName
				if c.AssumePod(pi) == nil {
					assumed = append(assumed, pi)
				}
			case 5:
				if len(assumed) == 0 {
					continue
				}
				i := rng.IntN(len(assumed))
				what = "forget an assumed pod"
				c.ForgetPod(assumed[i].Pod.UID)
				assumed = append(assumed[:i], assumed[i+1:]...)
			case 6:
				if len(bound) == 0 {
					continue
				}
				i := rng.IntN(len(bound))
				what = "delete a pod"
				c.RemovePod(bound[i].UID)
				bound = append(bound[:i], bound[i+1:]...)
			case 7:
				if len(bound) == 0 {
					continue
				}
				p := bound[rng.IntN(len(bound))].DeepCopy()
				p.DeletionTimestamp = &metav1.Time{}
				what = "start deleting a pod"
				c.UpdatePod(p)
			}
			// Not every change is followed by a cycle: the log must carry
			// several changes, and repeats of one node, between cycles.
			if rng.IntN(3) == 0 {
				continue
			}
			c.WithSnapshot(func(snap *framework.Snapshot) {
				checkAgainstScan(t, fmt.Sprintf("seed %d step %d (%s)", seed, step, what), kept, twoKeys(), snap)
			})
		}
	}
}
