package framework_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orca-project/orca/internal/scheduler/framework"
	"github.com/orca-project/orca/internal/scheduler/profile"
	tu "github.com/orca-project/orca/internal/scheduler/testutil"
)

func names(nodes []*framework.NodeInfo) []string {
	out := make([]string, 0, len(nodes))
	for _, n := range nodes {
		out = append(out, n.Name())
	}
	slices.Sort(out)
	return out
}

func TestChangedSince(t *testing.T) {
	c := framework.NewCache()
	c.AddNode(tu.Node("a", 4, 8, nil))
	c.AddNode(tu.Node("b", 4, 8, nil))
	var mark framework.Mark
	for _, tc := range []struct {
		name   string
		change func()
		want   []string
		ok     bool
	}{
		{"first read asks for a full count", func() {}, nil, false},
		{"nothing changed", func() {}, []string{}, true},
		{"a pod bound", func() { c.AddPod(tu.OnNode(tu.Pod("p1", "", ""), "a")) }, []string{"a"}, true},
		{"a pod assumed and a node relabelled", func() {
			_ = c.AssumePod(framework.NewPodInfo(tu.OnNode(tu.Pod("p2", "", ""), "b")))
			c.UpdateNode(tu.Node("a", 4, 8, map[string]string{"zone": "z"}))
		}, []string{"a", "b"}, true},
		{"a node added moves positions", func() { c.AddNode(tu.Node("c", 4, 8, nil)) }, nil, false},
		{"after the recount", func() { c.AddPod(tu.OnNode(tu.Pod("p3", "", ""), "c")) }, []string{"c"}, true},
	} {
		tc.change()
		c.WithSnapshot(func(s *framework.Snapshot) {
			changed, now, ok := s.ChangedSince(mark)
			mark = now
			if ok != tc.ok {
				t.Fatalf("%s: ok = %v, want %v", tc.name, ok, tc.ok)
			}
			if ok && !slices.Equal(names(changed), tc.want) {
				t.Errorf("%s: changed %v, want %v", tc.name, names(changed), tc.want)
			}
			for i, n := range s.Nodes {
				if s.Index(n) != i {
					t.Errorf("%s: Index(%s) = %d, want %d", tc.name, n.Name(), s.Index(n), i)
				}
			}
		})
	}
	// A snapshot built without a cache has no log.
	if _, _, ok := framework.NewSnapshot(framework.NewNodeInfo(tu.Node("x", 1, 1, nil))).ChangedSince(framework.Mark{}); ok {
		t.Error("a snapshot without a cache answered from a log")
	}
}

// TestAffinityListsFollowTheCache checks the snapshot's lists of nodes with
// affinity pods, kept up to date from the change log, against a snapshot
// built from scratch over the same nodes after random changes.
func TestAffinityListsFollowTheCache(t *testing.T) {
	term := func(key string) v1.PodAffinityTerm {
		return v1.PodAffinityTerm{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, TopologyKey: key}
	}
	kinds := []func(*v1.Pod){
		func(*v1.Pod) {},
		func(p *v1.Pod) {
			p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{term(v1.LabelHostname)}}}
		},
		func(p *v1.Pod) {
			p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{term("zone")}}}
		},
		func(p *v1.Pod) {
			p.Spec.Affinity = &v1.Affinity{PodAffinity: &v1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{{Weight: 1, PodAffinityTerm: term("zone")}}}}
		},
	}
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 3))
		c := framework.NewCache()
		var pods []*v1.Pod
		for step := range 120 {
			node := fmt.Sprintf("n%d", rng.IntN(6))
			switch rng.IntN(5) {
			case 0:
				c.AddNode(tu.Node(node, 4, 8, map[string]string{"zone": fmt.Sprintf("z%d", rng.IntN(2))}))
			case 1:
				c.RemoveNode(node)
			case 2, 3:
				p := tu.OnNode(tu.WithLabels(tu.Pod("p", "", ""), map[string]string{"app": "web"}), node)
				kinds[rng.IntN(len(kinds))](p)
				if rng.IntN(2) == 0 {
					c.AddPod(p)
				} else if c.AssumePod(framework.NewPodInfo(p)) != nil {
					continue
				}
				pods = append(pods, p)
			case 4:
				if len(pods) == 0 {
					continue
				}
				i := rng.IntN(len(pods))
				c.RemovePod(pods[i].UID)
				pods = append(pods[:i], pods[i+1:]...)
			}
			if rng.IntN(2) == 0 {
				continue
			}
			c.WithSnapshot(func(s *framework.Snapshot) {
				fresh := framework.NewSnapshot(s.Nodes...)
				for _, l := range []struct {
					name      string
					got, want []*framework.NodeInfo
				}{
					{"affinity", s.NodesWithAffinityPods(), fresh.NodesWithAffinityPods()},
					{"required anti-affinity", s.NodesWithRequiredAntiAffinityPods(), fresh.NodesWithRequiredAntiAffinityPods()},
					{"non-local anti-affinity", s.NodesWithNonLocalAntiAffinityPods(), fresh.NodesWithNonLocalAntiAffinityPods()},
				} {
					if !slices.Equal(names(l.got), names(l.want)) {
						t.Fatalf("seed %d step %d: nodes with %s pods %v, from scratch %v", seed, step, l.name, names(l.got), names(l.want))
					}
				}
			})
		}
	}
}

// TestFitErrorWithSkippedNodes: nodes the spread plugin rejects by domain
// are skipped during the search, yet the message names, for each node,
// the first filter that rejects it, as the full chain does.
func TestFitErrorWithSkippedNodes(t *testing.T) {
	gpu := v1.Taint{Key: "gpu", Value: "true", Effect: v1.TaintEffectNoSchedule}
	nodes := []*v1.Node{
		tu.Node("a", 4, 8, map[string]string{"zone": "z1"}),
		tu.WithTaints(tu.Node("b", 4, 8, map[string]string{"zone": "z1"}), gpu),
		tu.Node("c", 1, 8, map[string]string{"zone": "z2"}),
	}
	web := tu.OnNode(tu.WithLabels(tu.Pod("w", "", ""), map[string]string{"app": "web"}), "a")
	p := tu.WithLabels(tu.Pod("new", "2", ""), map[string]string{"app": "web"})
	p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{
		MaxSkew: 1, TopologyKey: "zone", WhenUnsatisfiable: v1.DoNotSchedule,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
	}}
	fw := profile.Default(0)
	var err error
	c := framework.NewCache()
	for _, n := range nodes {
		c.AddNode(n)
	}
	c.AddPod(web)
	// Twice: the second cycle reads the counts kept from the first.
	for range 2 {
		c.WithSnapshot(func(s *framework.Snapshot) {
			_, err = fw.Schedule(context.Background(), framework.NewCycleState(), framework.NewPodInfo(p), s, rand.New(rand.NewPCG(1, 2)))
		})
		want := "0/3 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match pod topology spread constraints, 1 node(s) had untolerated taint {gpu: true}."
		if err == nil || err.Error() != want {
			t.Fatalf("error\n got %v\nwant %s", err, want)
		}
		fe := err.(*framework.FitError)
		if st := fe.Diagnosis.NodeToStatus["a"]; st.Code() != framework.Unschedulable || st.Plugin() != "PodTopologySpread" {
			t.Errorf("node a: %v from %s, want Unschedulable from PodTopologySpread", st.Code(), st.Plugin())
		}
	}
}
