package framework_test

import (
	"context"
	"math/rand/v2"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/orca-project/orca/internal/scheduler/framework"
	"github.com/orca-project/orca/internal/scheduler/profile"
	tu "github.com/orca-project/orca/internal/scheduler/testutil"
)

func withPriority(p *v1.Pod, prio int32) *v1.Pod {
	p.Spec.Priority = &prio
	return p
}

// TestNominatedPodsReserveRoom: node a has 2 cpu free, promised to a
// nominated pod of priority 100 that asks for 2 cpu; node b has 1 cpu.
func TestNominatedPodsReserveRoom(t *testing.T) {
	nodes := []*v1.Node{tu.Node("a", 2, 4, nil), tu.Node("b", 1, 4, nil)}
	preemptor := withPriority(tu.Pod("preemptor", "2", ""), 100)
	schedule := func(pod *v1.Pod, nominate bool) (string, error) {
		c := framework.NewCache()
		for _, n := range nodes {
			c.AddNode(n)
		}
		if nominate {
			c.Nominate(preemptor, "a")
		}
		var node string
		var err error
		c.WithSnapshot(func(snap *framework.Snapshot) {
			var res framework.Result
			res, err = profile.Default(0).Schedule(context.Background(), framework.NewCycleState(), framework.NewPodInfo(pod), snap, rand.New(rand.NewPCG(1, 2)))
			node = res.Node
		})
		return node, err
	}
	for _, tc := range []struct {
		name     string
		pod      *v1.Pod
		nominate bool
		want     string // "" for unschedulable
	}{
		{"without nominations the big pod takes a", withPriority(tu.Pod("p", "2", ""), 10), false, "a"},
		{"a lower-priority pod does not take the promised room", withPriority(tu.Pod("p", "2", ""), 10), true, ""},
		{"an equal-priority pod does not either", withPriority(tu.Pod("p", "2", ""), 100), true, ""},
		{"a higher-priority pod may", withPriority(tu.Pod("p", "2", ""), 1000), true, "a"},
		{"the nominated pod itself fits there", preemptor, true, "a"},
		{"a small lower-priority pod goes where room is left", withPriority(tu.Pod("p", "1", ""), 10), true, "b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := schedule(tc.pod, tc.nominate)
			if tc.want == "" {
				if err == nil {
					t.Fatalf("placed on %s, want unschedulable", got)
				}
				if want := "0/2 nodes are available: 2 Insufficient cpu."; err.Error() != want {
					t.Errorf("message %q, want %q", err.Error(), want)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("placed on %q (%v), want %q", got, err, tc.want)
			}
		})
	}
}

func TestNominationsEndWhenRemovedOrMoved(t *testing.T) {
	c := framework.NewCache()
	p := withPriority(tu.Pod("p", "1", ""), 5)
	c.Nominate(p, "a")
	c.Nominate(p, "b")
	if got := c.NominatedNode(p.UID); got != "b" {
		t.Errorf("nominated to %q after moving, want b", got)
	}
	c.WithSnapshot(func(s *framework.Snapshot) {
		if s.Nominated.Len() != 1 {
			t.Errorf("snapshot has %d nominations, want 1", s.Nominated.Len())
		}
	})
	c.RemoveNomination(p.UID)
	if got := c.NominatedNode(p.UID); got != "" {
		t.Errorf("nominated to %q after removal", got)
	}
	c.WithSnapshot(func(s *framework.Snapshot) {
		if s.Nominated != nil {
			t.Error("snapshot still carries nominations")
		}
	})
}
