package volumerestrictions

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/orca-project/orca/internal/scheduler/framework"
	"github.com/orca-project/orca/internal/scheduler/plugins/noderesources"
	"github.com/orca-project/orca/internal/scheduler/preemption"
	tu "github.com/orca-project/orca/internal/scheduler/testutil"
)

// claims is a Lister over a map of claims in namespace "default".
type claims map[string]v1.PersistentVolumeAccessMode

func (c claims) Claim(ns, name string) (*v1.PersistentVolumeClaim, error) {
	if name == "broken" {
		return nil, errors.New("cache unavailable")
	}
	mode, ok := c[name]
	if !ok || ns != "default" {
		return nil, apierrors.NewNotFound(v1.Resource("persistentvolumeclaim"), name)
	}
	return &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       v1.PersistentVolumeClaimSpec{AccessModes: []v1.PersistentVolumeAccessMode{mode}},
	}, nil
}

var testClaims = claims{"solo": v1.ReadWriteOncePod, "solo2": v1.ReadWriteOncePod, "shared": v1.ReadWriteOnce}

func withClaims(p *v1.Pod, names ...string) *v1.Pod {
	for _, n := range names {
		p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: n, VolumeSource: v1.VolumeSource{
			PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: n}}})
	}
	return p
}

func prio(p *v1.Pod, n int32) *v1.Pod { p.Spec.Priority = &n; return p }

func snapshot(nodes []*v1.Node, pods ...*v1.Pod) *framework.Snapshot {
	infos := map[string]*framework.NodeInfo{}
	var list []*framework.NodeInfo
	for _, n := range nodes {
		infos[n.Name] = framework.NewNodeInfo(n)
		list = append(list, infos[n.Name])
	}
	for _, p := range pods {
		infos[p.Spec.NodeName].AddPod(framework.NewPodInfo(p))
	}
	return framework.NewSnapshot(list...)
}

func TestReferences(t *testing.T) {
	solo := sets.New("solo", "solo2")
	other := tu.Pod("other", "", "")
	other.Namespace = "other"
	self := withClaims(tu.Pod("self", "", ""), "solo")
	for _, tc := range []struct {
		name string
		pod  *v1.Pod
		want int
	}{
		{"uses one", withClaims(tu.Pod("a", "", ""), "solo"), 1},
		{"uses both", withClaims(tu.Pod("a", "", ""), "solo", "shared", "solo2"), 2},
		{"uses others", withClaims(tu.Pod("a", "", ""), "shared"), 0},
		{"no claims", tu.Pod("a", "", ""), 0},
		{"a claim of that name in another namespace", withClaims(other, "solo"), 0},
		{"the pod itself", self, 0},
	} {
		if got := References(tc.pod, "default", solo, self.UID); got != tc.want {
			t.Errorf("%s: References = %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestPreFilterAndFilter runs the plugin alone over a two-node cluster.
func TestPreFilterAndFilter(t *testing.T) {
	nodes := []*v1.Node{tu.Node("a", 4, 8, nil), tu.Node("b", 4, 8, nil)}
	reader := withClaims(tu.Pod("reader", "", ""), "shared")
	for _, tc := range []struct {
		name      string
		pod       *v1.Pod
		existing  []*v1.Pod
		preFilter framework.Code
		preMsg    string
		state     bool
		filter    framework.Code // on every node
	}{
		{"no claims", tu.Pod("p", "", ""), nil, framework.Success, "", false, framework.Success},
		{"a ReadWriteOnce claim in use", withClaims(tu.Pod("p", "", ""), "shared"),
			[]*v1.Pod{tu.OnNode(reader, "a")}, framework.Success, "", false, framework.Success},
		{"a ReadWriteOncePod claim nobody uses", withClaims(tu.Pod("p", "", ""), "solo"),
			[]*v1.Pod{tu.OnNode(withClaims(tu.Pod("q", "", ""), "solo2"), "a")}, framework.Success, "", false, framework.Success},
		{"a ReadWriteOncePod claim in use", withClaims(tu.Pod("p", "", ""), "shared", "solo"),
			[]*v1.Pod{tu.OnNode(withClaims(tu.Pod("q", "", ""), "solo"), "a")}, framework.Success, "", true, framework.Unschedulable},
		{"missing claim", withClaims(tu.Pod("p", "", ""), "gone"), nil,
			framework.UnschedulableAndUnresolvable, `persistentvolumeclaim "gone" not found`, false, framework.Success},
		{"lister failure", withClaims(tu.Pod("p", "", ""), "broken"), nil,
			framework.Error, `get persistentvolumeclaim "broken": cache unavailable`, false, framework.Success},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pl := &Plugin{Lister: testClaims}
			snap := snapshot(nodes, tc.existing...)
			cs := framework.NewCycleState()
			pi := framework.NewPodInfo(tc.pod)
			st := pl.PreFilter(context.Background(), cs, pi, snap)
			if st.Code() != tc.preFilter || st.Message() != tc.preMsg {
				t.Fatalf("PreFilter = %v %q, want %v %q", st.Code(), st.Message(), tc.preFilter, tc.preMsg)
			}
			if _, ok := cs.Read(stateKey); ok != tc.state {
				t.Errorf("state stored: %v, want %v", ok, tc.state)
			}
			if !st.IsSuccess() {
				return
			}
			for _, n := range snap.Nodes {
				st := pl.Filter(context.Background(), cs, pi, n)
				if st.Code() != tc.filter {
					t.Errorf("Filter on %s = %v, want %v", n.Name(), st.Code(), tc.filter)
				}
				if !st.IsSuccess() && st.Message() != ErrReasonReadWriteOncePodConflict {
					t.Errorf("Filter reason %q", st.Message())
				}
			}
		})
	}
}

// TestFilterCountsTheNodeAsGiven: a copy of the node without the claim's
// user (a preemption dry run) passes; one with a nominated user added
// does not.
func TestFilterCountsTheNodeAsGiven(t *testing.T) {
	nodes := []*v1.Node{tu.Node("a", 4, 8, nil), tu.Node("b", 4, 8, nil)}
	user := tu.OnNode(withClaims(tu.Pod("user", "", ""), "solo"), "a")
	snap := snapshot(nodes, user)
	pl := &Plugin{Lister: testClaims}
	pod := framework.NewPodInfo(withClaims(tu.Pod("p", "", ""), "solo"))
	cs := framework.NewCycleState()
	if st := pl.PreFilter(context.Background(), cs, pod, snap); !st.IsSuccess() {
		t.Fatal(st.Message())
	}
	without := snap.Get("a").Clone()
	without.RemovePod(user.UID)
	if st := pl.Filter(context.Background(), cs, pod, without); !st.IsSuccess() {
		t.Errorf("node a without the user: %v", st.Message())
	}
	if st := pl.Filter(context.Background(), cs, pod, snap.Get("b")); st.Code() != framework.Unschedulable {
		t.Errorf("node b while a's pod uses the claim: %v", st.Code())
	}
	withNominee := snap.Get("b").Clone()
	withNominee.AddPod(framework.NewPodInfo(withClaims(tu.Pod("nominee", "", ""), "solo")))
	if st := pl.Filter(context.Background(), cs, pod, withNominee); st.Code() != framework.Unschedulable {
		t.Errorf("node b with a nominated user: %v", st.Code())
	}
}

// fitAndRestrictions is a framework of NodeResourcesFit and the plugin.
func fitAndRestrictions(pl *Plugin) *framework.Framework {
	fit := &noderesources.Fit{}
	return &framework.Framework{
		PreFilters: []framework.PreFilterPlugin{pl},
		Filters:    []framework.FilterPlugin{fit, pl},
	}
}

// TestScheduleAndPreempt: the claim's user of lower priority is the
// victim, on its node only; one of higher priority is not.
func TestScheduleAndPreempt(t *testing.T) {
	nodes := []*v1.Node{tu.Node("a", 4, 8, nil), tu.Node("b", 4, 8, nil)}
	bystander := tu.OnNode(prio(tu.Pod("bystander", "1", ""), 1), "b")
	for _, tc := range []struct {
		name    string
		user    *v1.Pod
		victims []string
		msg     string
	}{
		{"lower-priority user", tu.OnNode(prio(withClaims(tu.Pod("user", "1", ""), "solo"), 10), "a"), []string{"user"}, ""},
		{"higher-priority user", tu.OnNode(prio(withClaims(tu.Pod("user", "1", ""), "solo"), 1000), "a"), nil,
			"preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := snapshot(nodes, tc.user, bystander)
			fw := fitAndRestrictions(&Plugin{Lister: testClaims})
			pod := framework.NewPodInfo(prio(withClaims(tu.Pod("p", "1", ""), "solo"), 100))
			_, err := fw.Schedule(context.Background(), framework.NewCycleState(), pod, snap, rand.New(rand.NewPCG(1, 1)))
			var fe *framework.FitError
			if !errors.As(err, &fe) {
				t.Fatalf("Schedule: %v, want a FitError", err)
			}
			const want = "0/2 nodes are available: 2 node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode."
			if fe.Error() != want {
				t.Errorf("FitError %q\nwant %q", fe.Error(), want)
			}
			c, msg := preemption.Find(context.Background(), fw, pod, snap, fe.Diagnosis, nil)
			if tc.victims == nil {
				if c != nil || msg != tc.msg {
					t.Errorf("candidate %+v, msg %q; want none, %q", c, msg, tc.msg)
				}
				return
			}
			if c == nil {
				t.Fatalf("no candidate: %s", msg)
			}
			if c.Node != "a" || len(c.Victims) != 1 || c.Victims[0].Name != "user" {
				t.Errorf("candidate on %s evicting %d pods, want node a evicting the user", c.Node, len(c.Victims))
			}
		})
	}
}
