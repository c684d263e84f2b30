package explain_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/orca-project/orca/internal/scheduler/explain"
	"github.com/orca-project/orca/internal/scheduler/framework"
	"github.com/orca-project/orca/internal/scheduler/profile"
	tu "github.com/orca-project/orca/internal/scheduler/testutil"
)

// explainPod schedules pod over nodes, traced over every node, and
// explains the decision as the scheduler does.
func explainPod(t *testing.T, nodes []*v1.Node, pod *v1.Pod, listCap int) *explain.Explanation {
	t.Helper()
	res, tr, err := profile.Default(0).ScheduleTraced(context.Background(), framework.NewCycleState(), framework.NewPodInfo(pod), tu.Snapshot(nodes), rand.New(rand.NewPCG(1, 2)), true)
	var fe *framework.FitError
	if err != nil && !errors.As(err, &fe) {
		t.Fatal(err)
	}
	return explain.Build(explain.Input{
		Namespace: pod.Namespace, Name: pod.Name, UID: string(pod.UID), Time: time.Unix(0, 0),
		Node: res.Node, Err: err, Unschedulable: fe != nil, Trace: tr, ListCap: listCap,
	})
}

// The seed's example: a blue and a green node tainted and labelled with
// their colour, a gray node with neither. Taints keep other pods off the
// coloured nodes; affinity keeps a coloured pod off the gray one.
func colourNodes() []*v1.Node {
	coloured := func(c string) *v1.Node {
		return tu.WithTaints(tu.Node(c, 4, 8, map[string]string{"color": c}), v1.Taint{Key: "color", Value: c, Effect: v1.TaintEffectNoSchedule})
	}
	return []*v1.Node{coloured("blue"), coloured("green"), tu.Node("gray", 4, 8, nil)}
}

func colourPod(name, colour string) *v1.Pod {
	p := tu.Pod(name, "100m", "")
	if colour == "" {
		return p
	}
	p.Spec.Tolerations = []v1.Toleration{{Key: "color", Operator: v1.TolerationOpEqual, Value: colour, Effect: v1.TaintEffectNoSchedule}}
	p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
		NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "color", Operator: v1.NodeSelectorOpIn, Values: []string{colour}}}}},
	}}}
	return p
}

const (
	affinityReason = "node(s) didn't match Pod's node affinity/selector"
	blueTaint      = "node(s) had untolerated taint {color: blue}"
	greenTaint     = "node(s) had untolerated taint {color: green}"
)

func TestBuildExplainsTheColourExample(t *testing.T) {
	for _, tc := range []struct {
		name      string
		pod       *v1.Pod
		wantNode  string
		wantRej   []explain.Verdict
		wantCount []explain.ReasonCount
	}{
		{
			name: "blue pod goes to blue", pod: colourPod("blue-pod", "blue"), wantNode: "blue",
			// NodeAffinity runs after TaintToleration: gray came closer.
			wantRej: []explain.Verdict{
				{Node: "gray", Plugin: "NodeAffinity", Code: "UnschedulableAndUnresolvable", Reason: affinityReason},
				{Node: "green", Plugin: "TaintToleration", Code: "UnschedulableAndUnresolvable", Reason: greenTaint},
			},
			wantCount: []explain.ReasonCount{{Reason: affinityReason, Count: 1}, {Reason: greenTaint, Count: 1}},
		},
		{
			name: "gray pod goes to gray", pod: colourPod("gray-pod", ""), wantNode: "gray",
			wantRej: []explain.Verdict{
				{Node: "blue", Plugin: "TaintToleration", Code: "UnschedulableAndUnresolvable", Reason: blueTaint},
				{Node: "green", Plugin: "TaintToleration", Code: "UnschedulableAndUnresolvable", Reason: greenTaint},
			},
			wantCount: []explain.ReasonCount{{Reason: blueTaint, Count: 1}, {Reason: greenTaint, Count: 1}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := explainPod(t, colourNodes(), tc.pod, explain.DefaultListCap)
			if e.Result != explain.Scheduled || e.Node != tc.wantNode || e.Message != "" {
				t.Errorf("result %s node %q message %q, want Scheduled to %s", e.Result, e.Node, e.Message, tc.wantNode)
			}
			if e.Nodes != 3 || e.Evaluated != 3 || e.Feasible != 1 {
				t.Errorf("nodes %d evaluated %d feasible %d, want 3 3 1", e.Nodes, e.Evaluated, e.Feasible)
			}
			if fmt.Sprint(e.Rejected) != fmt.Sprint(tc.wantRej) {
				t.Errorf("rejected\n got %v\nwant %v", e.Rejected, tc.wantRej)
			}
			if fmt.Sprint(e.Reasons) != fmt.Sprint(tc.wantCount) {
				t.Errorf("reasons %v, want %v", e.Reasons, tc.wantCount)
			}
			// An explained pod is scored even when one node fits.
			if len(e.Scored) != 1 || e.Scored[0].Node != tc.wantNode || e.Scored[0].Rank != 1 || len(e.Scored[0].Weighted) != len(e.ScorePlugins) {
				t.Errorf("scored %+v, want %s ranked 1 with a score per plugin", e.Scored, tc.wantNode)
			}
		})
	}
}

func TestBuildPendingMatchesFailedSchedulingMessage(t *testing.T) {
	// A green pod in a cluster of blue and gray only, one of them full.
	nodes := colourNodes()
	nodes = []*v1.Node{nodes[0], nodes[2], tu.Node("small", 0, 8, map[string]string{"color": "green"})}
	e := explainPod(t, nodes, colourPod("green-pod", "green"), explain.DefaultListCap)
	want := "0/3 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) had untolerated taint {color: blue}."
	if e.Result != explain.Unschedulable || e.Node != "" || e.Message != want {
		t.Fatalf("result %s node %q message %q, want Unschedulable with %q", e.Result, e.Node, e.Message, want)
	}
	if got := "0/3 nodes are available: " + e.ReasonsText() + "."; got != e.Message {
		t.Errorf("counts render %q, message %q", got, e.Message)
	}
	// small fails only on resources (Fit runs after affinity, and
	// preemption could help), gray on affinity, blue on its taint.
	if fmt.Sprint(e.Closest) != "[small gray blue]" {
		t.Errorf("closest %v, want [small gray blue]", e.Closest)
	}
	if e.Rejected[0].Plugin != "NodeResourcesFit" || e.Rejected[0].Code != "Unschedulable" {
		t.Errorf("closest verdict %+v, want NodeResourcesFit Unschedulable", e.Rejected[0])
	}
	if len(e.Scored) != 0 {
		t.Errorf("scored %v, want none", e.Scored)
	}
}

func TestBuildCapsListsAndCountsTheRest(t *testing.T) {
	var nodes []*v1.Node
	for i := range 30 {
		nodes = append(nodes, tu.Node(fmt.Sprintf("big-%02d", i), 4, 8, nil), tu.Node(fmt.Sprintf("small-%02d", i), 1, 8, nil))
	}
	e := explainPod(t, nodes, tu.Pod("p", "2", ""), 10)
	if len(e.Rejected) != 10 || e.RejectedOmitted != 20 || len(e.Scored) != 10 || e.ScoredOmitted != 20 {
		t.Errorf("rejected %d (+%d), scored %d (+%d); want 10 (+20) each", len(e.Rejected), e.RejectedOmitted, len(e.Scored), e.ScoredOmitted)
	}
	if e.Reasons[0].Count != 30 {
		t.Errorf("counts %v: want all 30 rejections counted", e.Reasons)
	}
	for i, s := range e.Scored {
		if s.Rank != i+1 || (i > 0 && s.Total > e.Scored[i-1].Total) {
			t.Errorf("scored[%d] = %+v: want ranks in order of total", i, s)
		}
	}
}

func TestEncodeStaysWithinBoundAndRoundTrips(t *testing.T) {
	var nodes []*v1.Node
	for i := range 400 {
		nodes = append(nodes, tu.Node(fmt.Sprintf("a-rather-long-node-name-%04d", i), int64(1+i%4), 8, nil))
	}
	e := explainPod(t, nodes, tu.Pod("p", "2", ""), 0)
	for _, max := range []int{explain.MaxBytes, 8 << 10} {
		b, err := explain.Encode(e, max)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > max {
			t.Errorf("encoded %d bytes, bound %d", len(b), max)
		}
		got, err := explain.Decode(string(b))
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Rejected)+got.RejectedOmitted != 100 || len(got.Scored)+got.ScoredOmitted != 300 {
			t.Errorf("bound %d: %d+%d rejected, %d+%d scored; want 100 and 300 in all", max, len(got.Rejected), got.RejectedOmitted, len(got.Scored), got.ScoredOmitted)
		}
		if got.Node != e.Node || fmt.Sprint(got.Reasons) != fmt.Sprint(e.Reasons) || got.Version != explain.Version {
			t.Errorf("round trip lost the verdict: %+v", got)
		}
	}
	if _, err := explain.Decode(`{"v":2}`); err == nil {
		t.Error("decoded a schema version this build does not know")
	}
}

func TestStoreKeepsTheLatestPerPodWithinItsSize(t *testing.T) {
	s := explain.NewStore(2)
	put := func(pod, node string) { s.Put(&explain.Explanation{Pod: pod, Node: node}) }
	put("ns/a", "n1")
	put("ns/b", "n1")
	put("ns/a", "n2") // a again: the latest wins
	put("ns/c", "n3") // forgets b, the least recently put
	for _, tc := range []struct {
		name, node string
		ok         bool
	}{{"a", "n2", true}, {"b", "", false}, {"c", "n3", true}} {
		e, ok := s.Get("ns", tc.name)
		if ok != tc.ok || (ok && e.Node != tc.node) {
			t.Errorf("Get(%s) = %v, %v; want %s, %v", tc.name, e, ok, tc.node, tc.ok)
		}
	}
	if s.Len() > 2 {
		t.Errorf("store holds %d pods, size 2", s.Len())
	}
	var off *explain.Store = explain.NewStore(0)
	off.Put(&explain.Explanation{Pod: "ns/a"})
	if _, ok := off.Get("ns", "a"); ok {
		t.Error("a store of size 0 kept an explanation")
	}
}

func TestTopSuffix(t *testing.T) {
	for _, tc := range []struct {
		top  []framework.NodeScore
		want string
	}{
		{[]framework.NodeScore{{Name: "n3", Score: 312}, {Name: "n1", Score: 298}, {Name: "n7", Score: 290}}, " (top: n3 312, n1 298, n7 290)"},
		{[]framework.NodeScore{{Name: "n3", Score: 5}, {Name: "n1", Score: 2}}, " (top: n3 5, n1 2)"},
		{nil, " (the only feasible node)"},
	} {
		if got := explain.TopSuffix(tc.top); got != tc.want {
			t.Errorf("TopSuffix(%v) = %q, want %q", tc.top, got, tc.want)
		}
	}
}

func TestPrintShowsVerdictReasonsRejectedAndScores(t *testing.T) {
	e := explainPod(t, colourNodes(), colourPod("blue-pod", "blue"), explain.DefaultListCap)
	var buf bytes.Buffer
	if err := explain.Print(&buf, e, 10); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"Pod:      default/blue-pod\n",
		"Result:   Scheduled to blue\n",
		"Nodes:    3 in the cluster, 3 evaluated, 1 feasible\n",
		"Reasons:  1 node(s) didn't match Pod's node affinity/selector, 1 node(s) had untolerated taint {color: green}\n",
		"REJECTED NODE  PLUGIN           REASON\n",
		"gray           NodeAffinity     node(s) didn't match Pod's node affinity/selector\n",
		"green          TaintToleration  node(s) had untolerated taint {color: green}\n",
		"RANK  NODE  TaintToleration×3",
		"\n1     blue  ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestListCapReadsTheRequest(t *testing.T) {
	for _, tc := range []struct {
		value   string
		set     bool
		wantCap int
		wantOK  bool
	}{
		{"true", true, explain.DefaultListCap, true},
		{"True", true, explain.DefaultListCap, true},
		{"full", true, 0, true},
		{"false", true, 0, false},
		{"", false, 0, false},
	} {
		ann := map[string]string{}
		if tc.set {
			ann[explain.RequestAnnotation] = tc.value
		}
		if c, ok := explain.ListCap(ann); c != tc.wantCap || ok != tc.wantOK {
			t.Errorf("ListCap(%q) = %d, %v; want %d, %v", tc.value, c, ok, tc.wantCap, tc.wantOK)
		}
	}
}

func TestSameVerdictIgnoresOnlyTheTime(t *testing.T) {
	base := explain.Explanation{Version: explain.Version, Pod: "ns/p", UID: "u1", Result: explain.Unschedulable, Message: "0/3 nodes are available: 3 Insufficient cpu.", Time: time.Unix(10, 0)}
	enc := func(e explain.Explanation) string {
		b, err := explain.Encode(&e, explain.MaxBytes)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	later := base
	later.Time = time.Unix(99, 0)
	changed := base
	changed.Message = "0/4 nodes are available: 4 Insufficient cpu."
	placed := base
	placed.Result, placed.Node, placed.Message = explain.Scheduled, "n1", ""
	other := base
	other.UID = "u2"
	for _, tc := range []struct {
		name       string
		annotation string
		e          explain.Explanation
		want       bool
	}{
		{"same verdict later", enc(base), later, true},
		{"new message", enc(base), changed, false},
		{"now placed", enc(base), placed, false},
		{"another pod of the name", enc(base), other, false},
		{"unreadable annotation", "{", base, false},
	} {
		if got := explain.SameVerdict(tc.annotation, &tc.e); got != tc.want {
			t.Errorf("%s: SameVerdict = %v, want %v", tc.name, got, tc.want)
		}
	}
}
