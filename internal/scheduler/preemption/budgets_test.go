package preemption

import (
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orca-project/orca/internal/scheduler/framework"
	tu "github.com/orca-project/orca/internal/scheduler/testutil"
)

func labelled(p *v1.Pod, app string) *v1.Pod {
	p.Labels = map[string]string{"app": app}
	return p
}

func pdbFor(app string, allowed int32, disrupted ...string) *policyv1.PodDisruptionBudget {
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: app, Namespace: "default"},
		Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}},
		Status:     policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: allowed},
	}
	for _, d := range disrupted {
		if pdb.Status.DisruptedPods == nil {
			pdb.Status.DisruptedPods = map[string]metav1.Time{}
		}
		pdb.Status.DisruptedPods[d] = metav1.Now()
	}
	return pdb
}

func TestSplitByBudgets(t *testing.T) {
	pods := func() []*framework.PodInfo {
		return []*framework.PodInfo{
			framework.NewPodInfo(labelled(tu.Pod("web-1", "1", ""), "web")),
			framework.NewPodInfo(labelled(tu.Pod("web-2", "1", ""), "web")),
			framework.NewPodInfo(labelled(tu.Pod("db-1", "1", ""), "db")),
			framework.NewPodInfo(tu.Pod("bare", "1", "")),
		}
	}
	otherNS := pdbFor("web", 0)
	otherNS.Namespace = "elsewhere"
	everything := pdbFor("all", 0)
	everything.Spec.Selector = &metav1.LabelSelector{}
	tests := []struct {
		name      string
		pdbs      []*policyv1.PodDisruptionBudget
		violating []string
	}{
		{"no budgets", nil, nil},
		{"one disruption to spend goes to the first pod", []*policyv1.PodDisruptionBudget{pdbFor("web", 1)}, []string{"web-2"}},
		{"none to spend", []*policyv1.PodDisruptionBudget{pdbFor("web", 0)}, []string{"web-1", "web-2"}},
		{"enough for both", []*policyv1.PodDisruptionBudget{pdbFor("web", 2)}, nil},
		{"already evicted pods spend nothing", []*policyv1.PodDisruptionBudget{pdbFor("web", 1, "web-1")}, nil},
		{"two budgets", []*policyv1.PodDisruptionBudget{pdbFor("web", 1), pdbFor("db", 0)}, []string{"web-2", "db-1"}},
		{"other namespace", []*policyv1.PodDisruptionBudget{otherNS}, nil},
		{"empty selector covers nothing", []*policyv1.PodDisruptionBudget{everything}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			violating, nonViolating := splitByBudgets(pods(), tc.pdbs)
			var got []string
			for _, p := range violating {
				got = append(got, p.Pod.Name)
			}
			if !slices.Equal(got, tc.violating) || len(violating)+len(nonViolating) != 4 {
				t.Errorf("violating = %v, want %v", got, tc.violating)
			}
		})
	}
}

func TestPreemptionRespectsBudgets(t *testing.T) {
	one := func(name string) []*v1.Node { return []*v1.Node{tu.Node(name, 2, 8, nil)} }
	tests := []struct {
		name           string
		nodes          []*v1.Node
		pods           func() []*v1.Pod
		pdbs           []*policyv1.PodDisruptionBudget
		wantNode       string
		wantVictims    []string
		wantViolations int
	}{{
		// Without budgets the higher-priority pod is reprieved first.
		name: "no budget: lowest priority goes", nodes: one("a"),
		pods: func() []*v1.Pod {
			return []*v1.Pod{tu.OnNode(labelled(prio(tu.Pod("guarded", "1", ""), 10), "web"), "a"), tu.OnNode(prio(tu.Pod("free", "1", ""), 20), "a")}
		},
		wantNode: "a", wantVictims: []string{"guarded"},
	}, {
		name: "budget exhausted: the unprotected pod goes instead", nodes: one("a"),
		pods: func() []*v1.Pod {
			return []*v1.Pod{tu.OnNode(labelled(prio(tu.Pod("guarded", "1", ""), 10), "web"), "a"), tu.OnNode(prio(tu.Pod("free", "1", ""), 20), "a")}
		},
		pdbs:     []*policyv1.PodDisruptionBudget{pdbFor("web", 0)},
		wantNode: "a", wantVictims: []string{"free"},
	}, {
		name: "budget with room: priorities decide", nodes: one("a"),
		pods: func() []*v1.Pod {
			return []*v1.Pod{tu.OnNode(labelled(prio(tu.Pod("guarded", "1", ""), 10), "web"), "a"), tu.OnNode(prio(tu.Pod("free", "1", ""), 20), "a")}
		},
		pdbs:     []*policyv1.PodDisruptionBudget{pdbFor("web", 1)},
		wantNode: "a", wantVictims: []string{"guarded"},
	}, {
		name: "no other way: the budget is broken and counted", nodes: one("a"),
		pods: func() []*v1.Pod {
			return []*v1.Pod{tu.OnNode(labelled(prio(tu.Pod("guarded", "2", ""), 10), "web"), "a")}
		},
		pdbs:     []*policyv1.PodDisruptionBudget{pdbFor("web", 0)},
		wantNode: "a", wantVictims: []string{"guarded"}, wantViolations: 1,
	}, {
		// Node a's victim is less important, but evicting it breaks a
		// budget: the fewest violations comes first.
		name: "node choice: fewest violations before priorities", nodes: []*v1.Node{tu.Node("a", 1, 8, nil), tu.Node("b", 1, 8, nil)},
		pods: func() []*v1.Pod {
			return []*v1.Pod{tu.OnNode(labelled(prio(tu.Pod("a-guarded", "1", ""), 10), "web"), "a"), tu.OnNode(prio(tu.Pod("b-free", "1", ""), 50), "b")}
		},
		pdbs:     []*policyv1.PodDisruptionBudget{pdbFor("web", 0)},
		wantNode: "b", wantVictims: []string{"b-free"},
	}, {
		name: "node choice without budgets", nodes: []*v1.Node{tu.Node("a", 1, 8, nil), tu.Node("b", 1, 8, nil)},
		pods: func() []*v1.Pod {
			return []*v1.Pod{tu.OnNode(labelled(prio(tu.Pod("a-guarded", "1", ""), 10), "web"), "a"), tu.OnNode(prio(tu.Pod("b-free", "1", ""), 50), "b")}
		},
		wantNode: "a", wantVictims: []string{"a-guarded"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, msg := runWith(t, prio(tu.Pod("new", "1", ""), 100), tc.nodes, nil, tc.pdbs, tc.pods()...)
			if c == nil {
				t.Fatalf("no candidate: %s", msg)
			}
			if c.Node != tc.wantNode || !slices.Equal(names(c.Victims), tc.wantVictims) || c.NumPDBViolations != tc.wantViolations {
				t.Errorf("candidate %s %v (%d violations), want %s %v (%d)", c.Node, names(c.Victims), c.NumPDBViolations, tc.wantNode, tc.wantVictims, tc.wantViolations)
			}
		})
	}
}
