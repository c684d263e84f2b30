package podgc

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"
)

var t0 = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

type podOpt func(*v1.Pod)

func mkPod(name string, opts ...podOpt) *v1.Pod {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name), CreationTimestamp: metav1.NewTime(t0)},
		Status:     v1.PodStatus{Phase: v1.PodRunning},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

func phase(ph v1.PodPhase) podOpt { return func(p *v1.Pod) { p.Status.Phase = ph } }
func evicted() podOpt {
	return func(p *v1.Pod) { p.Status.Phase, p.Status.Reason = v1.PodFailed, "Evicted" }
}
func created(d time.Duration) podOpt {
	return func(p *v1.Pod) { p.CreationTimestamp = metav1.NewTime(t0.Add(d)) }
}
func onNode(n string) podOpt { return func(p *v1.Pod) { p.Spec.NodeName = n } }
func terminating() podOpt {
	return func(p *v1.Pod) { ts := metav1.NewTime(t0); p.DeletionTimestamp = &ts }
}
func generation(g int64) podOpt { return func(p *v1.Pod) { p.Generation = g } }

var outOfService = v1.Taint{Key: v1.TaintNodeOutOfService, Value: "nodeshutdown", Effect: v1.TaintEffectNoExecute}

func mkNode(name string, ready v1.ConditionStatus, taints ...v1.Taint) *v1.Node {
	n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1.NodeSpec{Taints: taints}}
	if ready != "" {
		n.Status.Conditions = []v1.NodeCondition{{Type: v1.NodeReady, Status: ready}}
	}
	return n
}

func names(pods []*v1.Pod) []string {
	out := []string{}
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

func TestTerminatedExcess(t *testing.T) {
	for _, tc := range []struct {
		name      string
		pods      []*v1.Pod
		threshold int
		want      []string
	}{
		{"threshold zero keeps all", []*v1.Pod{mkPod("a", phase(v1.PodSucceeded)), mkPod("b", phase(v1.PodFailed))}, 0, []string{}},
		{"at threshold", []*v1.Pod{mkPod("a", phase(v1.PodSucceeded)), mkPod("b", phase(v1.PodFailed))}, 2, []string{}},
		{"only Succeeded and Failed count", []*v1.Pod{
			mkPod("run"), mkPod("pend", phase(v1.PodPending)), mkPod("unk", phase(v1.PodUnknown)), mkPod("none", phase("")),
			mkPod("done", phase(v1.PodSucceeded)),
		}, 1, []string{}},
		{"oldest first", []*v1.Pod{
			mkPod("new", phase(v1.PodSucceeded), created(3*time.Minute)),
			mkPod("old", phase(v1.PodFailed), created(time.Minute)),
			mkPod("mid", phase(v1.PodSucceeded), created(2*time.Minute)),
			mkPod("running-oldest", created(-time.Hour)),
		}, 1, []string{"old", "mid"}},
		{"evicted before older pods", []*v1.Pod{
			mkPod("old", phase(v1.PodSucceeded), created(time.Minute)),
			mkPod("evicted-new", evicted(), created(time.Hour)),
			mkPod("failed-not-evicted", phase(v1.PodFailed), created(2*time.Minute)),
			mkPod("evicted-old", evicted(), created(30*time.Minute)),
		}, 1, []string{"evicted-old", "evicted-new", "old"}},
		{"same creation time: by name", []*v1.Pod{
			mkPod("c", phase(v1.PodSucceeded)), mkPod("a", phase(v1.PodSucceeded)), mkPod("b", phase(v1.PodSucceeded)),
		}, 1, []string{"a", "b"}},
	} {
		if got := names(terminatedExcess(tc.pods, tc.threshold)); !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestTerminatingOutOfService(t *testing.T) {
	noSchedule := outOfService
	noSchedule.Effect = v1.TaintEffectNoSchedule
	nodes := []*v1.Node{
		mkNode("down", v1.ConditionFalse, outOfService),
		mkNode("unknown", v1.ConditionUnknown, outOfService),
		mkNode("silent", "", outOfService),
		mkNode("ready-tainted", v1.ConditionTrue, outOfService),
		mkNode("notready-untainted", v1.ConditionFalse, v1.Taint{Key: "other", Effect: v1.TaintEffectNoExecute}),
		mkNode("down-noschedule", v1.ConditionFalse, noSchedule),
	}
	for _, tc := range []struct {
		name string
		pod  *v1.Pod
		want bool
	}{
		{"terminating on not-ready out-of-service node", mkPod("p", terminating(), onNode("down")), true},
		{"Ready Unknown counts as not ready", mkPod("p", terminating(), onNode("unknown")), true},
		{"no Ready condition counts as not ready", mkPod("p", terminating(), onNode("silent")), true},
		{"already terminal pods too", mkPod("p", terminating(), onNode("down"), phase(v1.PodSucceeded)), true},
		{"taint matched by key, as upstream", mkPod("p", terminating(), onNode("down-noschedule")), true},
		{"not terminating", mkPod("p", onNode("down")), false},
		{"node ready", mkPod("p", terminating(), onNode("ready-tainted")), false},
		{"node not tainted", mkPod("p", terminating(), onNode("notready-untainted")), false},
		{"node unknown to the informer", mkPod("p", terminating(), onNode("nowhere")), false},
		{"unscheduled", mkPod("p", terminating()), false},
	} {
		got := len(terminatingOutOfService([]*v1.Pod{tc.pod}, nodes)) == 1
		if got != tc.want {
			t.Errorf("%s: selected = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestOrphanSelection(t *testing.T) {
	existing := sets.New("here")
	pods := []*v1.Pod{
		mkPod("on-here", onNode("here")),
		mkPod("on-gone-1", onNode("gone")),
		mkPod("on-gone-2", onNode("gone"), phase(v1.PodSucceeded)),
		mkPod("on-other", onNode("other")),
		mkPod("unscheduled"),
		mkPod("unscheduled-terminating", terminating()),
	}
	if got, want := missingNodes(pods, existing), []string{"gone", "other"}; !slices.Equal(got, want) {
		t.Errorf("missingNodes = %v, want %v", got, want)
	}
	if got, want := missingNodes(pods, sets.New("here", "gone", "other")), []string{}; len(got) != 0 {
		t.Errorf("missingNodes with every node present = %v, want %v", got, want)
	}
	if got, want := names(podsOnNodes(pods, sets.New("gone"))), []string{"on-gone-1", "on-gone-2"}; !slices.Equal(got, want) {
		t.Errorf("podsOnNodes = %v, want %v", got, want)
	}
	if got := podsOnNodes(pods, sets.New[string]()); len(got) != 0 {
		t.Errorf("podsOnNodes of no nodes = %v", names(got))
	}
}

func TestUnscheduledTerminating(t *testing.T) {
	pods := []*v1.Pod{
		mkPod("scheduled-terminating", terminating(), onNode("n")),
		mkPod("unscheduled"),
		mkPod("unscheduled-terminating", terminating(), phase(v1.PodPending)),
		mkPod("unscheduled-terminating-done", terminating(), phase(v1.PodFailed)),
	}
	if got, want := names(unscheduledTerminating(pods)), []string{"unscheduled-terminating", "unscheduled-terminating-done"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// appliedPod decodes an apply configuration as the pod it describes.
func appliedPod(t *testing.T, data []byte) *v1.Pod {
	t.Helper()
	p := &v1.Pod{}
	if err := json.Unmarshal(data, p); err != nil {
		t.Fatalf("decode applied configuration %s: %v", data, err)
	}
	return p
}

func orphanCondition() *v1.PodCondition {
	return &v1.PodCondition{Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: "DeletionByPodGC", Message: "PodGC: node no longer exists"}
}

func TestStatusApply(t *testing.T) {
	now := metav1.NewTime(t0.Add(time.Hour))
	earlier := metav1.NewTime(t0)
	withOld := func(status v1.ConditionStatus) podOpt {
		return func(p *v1.Pod) {
			p.Status.Conditions = []v1.PodCondition{{Type: v1.DisruptionTarget, Status: status, LastTransitionTime: earlier}}
		}
	}
	for _, tc := range []struct {
		name      string
		pod       *v1.Pod
		cond      *v1.PodCondition
		wantNil   bool
		wantPhase v1.PodPhase
		wantGen   int64
		wantLTT   *metav1.Time // nil: no condition applied
	}{
		{name: "running, no condition: phase only", pod: mkPod("p", generation(2)), wantPhase: v1.PodFailed, wantGen: 2},
		{name: "pending, no generation", pod: mkPod("p", phase(v1.PodPending)), wantPhase: v1.PodFailed},
		{name: "running with condition", pod: mkPod("p", generation(2)), cond: orphanCondition(), wantPhase: v1.PodFailed, wantGen: 2, wantLTT: &now},
		{name: "succeeded, no condition: nothing", pod: mkPod("p", phase(v1.PodSucceeded)), wantNil: true},
		{name: "failed, no condition: nothing", pod: mkPod("p", phase(v1.PodFailed)), wantNil: true},
		{name: "succeeded with condition: condition only", pod: mkPod("p", phase(v1.PodSucceeded)), cond: orphanCondition(), wantLTT: &now},
		{name: "condition already true keeps its time", pod: mkPod("p", withOld(v1.ConditionTrue)), cond: orphanCondition(), wantPhase: v1.PodFailed, wantLTT: &earlier},
		{name: "condition flipping status gets a new time", pod: mkPod("p", withOld(v1.ConditionFalse)), cond: orphanCondition(), wantPhase: v1.PodFailed, wantLTT: &now},
	} {
		ac := statusApply(tc.pod, tc.cond, now)
		if tc.wantNil {
			if ac != nil {
				t.Errorf("%s: got an apply, want none", tc.name)
			}
			continue
		}
		if ac == nil {
			t.Errorf("%s: got no apply", tc.name)
			continue
		}
		data, err := json.Marshal(ac)
		if err != nil {
			t.Fatal(err)
		}
		got := appliedPod(t, data)
		if got.Name != "p" || got.Namespace != "ns" || got.UID != "uid-p" {
			t.Errorf("%s: applied identity %s/%s uid %q", tc.name, got.Namespace, got.Name, got.UID)
		}
		if got.Status.Phase != tc.wantPhase || got.Status.ObservedGeneration != tc.wantGen {
			t.Errorf("%s: phase %q observedGeneration %d, want %q %d", tc.name, got.Status.Phase, got.Status.ObservedGeneration, tc.wantPhase, tc.wantGen)
		}
		if tc.wantLTT == nil {
			if len(got.Status.Conditions) != 0 {
				t.Errorf("%s: applied conditions %+v, want none", tc.name, got.Status.Conditions)
			}
			continue
		}
		if len(got.Status.Conditions) != 1 {
			t.Errorf("%s: applied conditions %+v, want one", tc.name, got.Status.Conditions)
			continue
		}
		c := got.Status.Conditions[0]
		if !c.LastTransitionTime.Equal(tc.wantLTT) {
			t.Errorf("%s: lastTransitionTime %v, want %v", tc.name, c.LastTransitionTime, tc.wantLTT)
		}
		if c.ObservedGeneration != tc.wantGen {
			t.Errorf("%s: condition observedGeneration %d, want %d", tc.name, c.ObservedGeneration, tc.wantGen)
		}
		c.LastTransitionTime, c.ObservedGeneration = metav1.Time{}, 0
		if c != *orphanCondition() {
			t.Errorf("%s: condition %+v", tc.name, c)
		}
	}
}

// harness is a controller whose informer caches are filled by hand, so a
// test decides exactly what a pass sees, while the fake clientset (which
// serves the live node GET) may know more than the caches.
type harness struct {
	c       *Controller
	client  *fake.Clientset
	clk     *clocktesting.FakeClock
	factory informers.SharedInformerFactory
}

func newHarness(t *testing.T, threshold int, cached []runtime.Object, apiOnly ...runtime.Object) *harness {
	t.Helper()
	client := fake.NewClientset(append(slices.Clone(cached), apiOnly...)...)
	factory := informers.NewSharedInformerFactory(client, 0)
	clk := clocktesting.NewFakeClock(t0)
	c, err := newController(client, factory, threshold, nil, slog.New(slog.NewTextHandler(io.Discard, nil)), clk)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.nodeQueue.ShutDown)
	for _, o := range cached {
		var err error
		switch o := o.(type) {
		case *v1.Pod:
			err = factory.Core().V1().Pods().Informer().GetIndexer().Add(o)
		case *v1.Node:
			err = factory.Core().V1().Nodes().Informer().GetIndexer().Add(o)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return &harness{c: c, client: client, clk: clk, factory: factory}
}

// podWrite is one write the controller made to a pod.
type podWrite struct {
	verb  string // "apply" or "delete"
	name  string
	apply *v1.Pod // the applied status, decoded
	opts  any     // metav1.PatchOptions or metav1.DeleteOptions
}

func podWrites(t *testing.T, actions []clienttesting.Action) []podWrite {
	t.Helper()
	var out []podWrite
	for _, a := range actions {
		if a.GetResource().Resource != "pods" {
			continue
		}
		switch a := a.(type) {
		case clienttesting.PatchActionImpl:
			if a.GetPatchType() != types.ApplyPatchType || a.GetSubresource() != "status" {
				t.Errorf("pod %s patched with %s on %q, want an apply on status", a.Name, a.GetPatchType(), a.GetSubresource())
			}
			out = append(out, podWrite{verb: "apply", name: a.Name, apply: appliedPod(t, a.Patch), opts: a.PatchOptions})
		case clienttesting.DeleteActionImpl:
			out = append(out, podWrite{verb: "delete", name: a.Name, opts: a.DeleteOptions})
		}
	}
	return out
}

func deleted(ws []podWrite) []string {
	var out []string
	for _, w := range ws {
		if w.verb == "delete" {
			out = append(out, w.name)
		}
	}
	slices.Sort(out)
	return out
}

func nodeGets(actions []clienttesting.Action) []string {
	var out []string
	for _, a := range actions {
		if g, ok := a.(clienttesting.GetActionImpl); ok && a.GetResource().Resource == "nodes" {
			out = append(out, g.Name)
		}
	}
	slices.Sort(out)
	return out
}

// checkWrites checks every delete is forced and conditional on the UID,
// every apply is PodGC's forced apply, and each applied pod was applied
// before it was deleted. It returns the applies by pod.
func checkWrites(t *testing.T, ws []podWrite) map[string]*v1.Pod {
	t.Helper()
	applied := map[string]*v1.Pod{}
	for _, w := range ws {
		switch w.verb {
		case "apply":
			opts := w.opts.(metav1.PatchOptions)
			if opts.FieldManager != "PodGC" || opts.Force == nil || !*opts.Force {
				t.Errorf("apply to %s: options %+v, want field manager PodGC, force", w.name, opts)
			}
			if w.apply.UID != types.UID("uid-"+w.name) {
				t.Errorf("apply to %s: uid %q, want it as a precondition", w.name, w.apply.UID)
			}
			applied[w.name] = w.apply
		case "delete":
			opts := w.opts.(metav1.DeleteOptions)
			if opts.GracePeriodSeconds == nil || *opts.GracePeriodSeconds != 0 {
				t.Errorf("delete of %s: grace period %v, want 0", w.name, opts.GracePeriodSeconds)
			}
			if opts.Preconditions == nil || opts.Preconditions.UID == nil || *opts.Preconditions.UID != types.UID("uid-"+w.name) {
				t.Errorf("delete of %s: preconditions %+v, want its UID", w.name, opts.Preconditions)
			}
		}
	}
	for i, w := range ws {
		if w.verb != "apply" {
			continue
		}
		if !slices.ContainsFunc(ws[i+1:], func(d podWrite) bool { return d.verb == "delete" && d.name == w.name }) {
			t.Errorf("%s was applied but not deleted after", w.name)
		}
	}
	return applied
}

func TestPassDeletesTerminatedOverThreshold(t *testing.T) {
	h := newHarness(t, 2, []runtime.Object{
		mkPod("old", phase(v1.PodSucceeded), created(time.Minute)),
		mkPod("mid", phase(v1.PodFailed), created(2*time.Minute)),
		mkPod("new", phase(v1.PodSucceeded), created(3*time.Minute)),
		mkPod("evicted", evicted(), created(time.Hour)),
		mkPod("running", created(-time.Hour)),
		mkPod("pending", phase(v1.PodPending), created(-time.Hour)),
	})
	h.c.gc(context.Background(), 2)
	ws := podWrites(t, h.client.Actions())
	if got, want := deleted(ws), []string{"evicted", "old"}; !slices.Equal(got, want) {
		t.Errorf("deleted %v, want %v", got, want)
	}
	if applied := checkWrites(t, ws); len(applied) != 0 {
		t.Errorf("applied status to terminal pods %v; their phase must stay", applied)
	}
	if _, err := h.client.CoreV1().Pods("ns").Get(context.Background(), "mid", metav1.GetOptions{}); err != nil {
		t.Errorf("mid should survive: %v", err)
	}
}

func TestPassOutOfServiceAndUnscheduled(t *testing.T) {
	h := newHarness(t, 0, []runtime.Object{
		mkNode("down", v1.ConditionFalse, outOfService),
		mkNode("ready-tainted", v1.ConditionTrue, outOfService),
		mkNode("notready", v1.ConditionFalse),
		mkPod("oos-running", terminating(), onNode("down")),
		mkPod("oos-done", terminating(), onNode("down"), phase(v1.PodSucceeded)),
		mkPod("oos-not-terminating", onNode("down")),
		mkPod("ready-terminating", terminating(), onNode("ready-tainted")),
		mkPod("notready-terminating", terminating(), onNode("notready")),
		mkPod("unsched-terminating", terminating(), phase(v1.PodPending)),
		mkPod("unsched-pending", phase(v1.PodPending)),
		mkPod("done-no-threshold", onNode("notready"), phase(v1.PodSucceeded)),
	})
	h.c.gc(context.Background(), 1)
	ws := podWrites(t, h.client.Actions())
	if got, want := deleted(ws), []string{"oos-done", "oos-running", "unsched-terminating"}; !slices.Equal(got, want) {
		t.Errorf("deleted %v, want %v", got, want)
	}
	applied := checkWrites(t, ws)
	if got, want := slices.Sorted(maps.Keys(applied)), []string{"oos-running", "unsched-terminating"}; !slices.Equal(got, want) {
		t.Errorf("applied status to %v, want %v (terminal pods keep their phase)", got, want)
	}
	for name, p := range applied {
		if p.Status.Phase != v1.PodFailed || len(p.Status.Conditions) != 0 {
			t.Errorf("%s: applied phase %q conditions %+v, want Failed and no condition", name, p.Status.Phase, p.Status.Conditions)
		}
	}
	if gets := nodeGets(h.client.Actions()); len(gets) != 0 {
		t.Errorf("looked up nodes %v though every node was cached", gets)
	}
}

// waitReady steps the fake clock a little until n nodes are out of
// quarantine: the delaying queue moves them on its own goroutine.
func (h *harness) waitReady(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for h.c.nodeQueue.Len() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d nodes out of quarantine, want %d", h.c.nodeQueue.Len(), n)
		}
		time.Sleep(5 * time.Millisecond)
		h.clk.Step(time.Millisecond)
	}
}

func TestPassOrphansAfterQuarantine(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, 0, []runtime.Object{
		mkNode("here", v1.ConditionTrue),
		mkPod("on-here", onNode("here")),
		mkPod("on-gone", onNode("gone"), generation(3)),
		mkPod("on-gone-done", onNode("gone"), phase(v1.PodSucceeded)),
		mkPod("on-back", onNode("back")),
		mkPod("on-late", onNode("late")),
	}, mkNode("back", v1.ConditionTrue), mkNode("late", v1.ConditionTrue)) // not yet in the informer, but the API server has them

	h.c.gc(ctx, 2)
	h.clk.Step(39 * time.Second)
	// Give the delaying queue time to release anything it (wrongly) would.
	time.Sleep(50 * time.Millisecond)
	h.c.gc(ctx, 2)
	if ws := podWrites(t, h.client.Actions()); len(ws) != 0 {
		t.Fatalf("wrote %+v within the quarantine", ws)
	}
	if gets := nodeGets(h.client.Actions()); len(gets) != 0 {
		t.Fatalf("looked up %v within the quarantine", gets)
	}

	// The informer catches up with one node during the quarantine: that
	// one needs no lookup.
	if err := h.factory.Core().V1().Nodes().Informer().GetIndexer().Add(mkNode("late", v1.ConditionTrue)); err != nil {
		t.Fatal(err)
	}
	h.clk.Step(time.Second)
	h.waitReady(t, 3)
	h.c.gc(ctx, 2)
	if got, want := nodeGets(h.client.Actions()), []string{"back", "gone"}; !slices.Equal(got, want) {
		t.Errorf("looked up %v, want %v", got, want)
	}
	ws := podWrites(t, h.client.Actions())
	if got, want := deleted(ws), []string{"on-gone", "on-gone-done"}; !slices.Equal(got, want) {
		t.Errorf("deleted %v, want %v", got, want)
	}
	applied := checkWrites(t, ws)
	// The apply is JSON, which keeps whole seconds.
	now := metav1.NewTime(h.clk.Now()).Rfc3339Copy()
	for _, tc := range []struct {
		pod       string
		wantPhase v1.PodPhase
		wantGen   int64
	}{
		{"on-gone", v1.PodFailed, 3},
		{"on-gone-done", "", 0}, // already terminal: condition only
	} {
		p := applied[tc.pod]
		if p == nil {
			t.Errorf("%s: no status applied", tc.pod)
			continue
		}
		if p.Status.Phase != tc.wantPhase || p.Status.ObservedGeneration != tc.wantGen {
			t.Errorf("%s: applied phase %q observedGeneration %d, want %q %d", tc.pod, p.Status.Phase, p.Status.ObservedGeneration, tc.wantPhase, tc.wantGen)
		}
		if len(p.Status.Conditions) != 1 {
			t.Errorf("%s: applied conditions %+v, want DisruptionTarget", tc.pod, p.Status.Conditions)
			continue
		}
		c := p.Status.Conditions[0]
		if !c.LastTransitionTime.Equal(&now) || c.ObservedGeneration != tc.wantGen {
			t.Errorf("%s: condition time %v generation %d, want %v %d", tc.pod, c.LastTransitionTime, c.ObservedGeneration, now, tc.wantGen)
		}
		c.LastTransitionTime, c.ObservedGeneration = metav1.Time{}, 0
		if c != *orphanCondition() {
			t.Errorf("%s: condition %+v", tc.pod, c)
		}
	}
	for _, name := range []string{"on-back", "on-here", "on-late"} {
		if _, err := h.client.CoreV1().Pods("ns").Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Errorf("%s should survive: %v", name, err)
		}
	}

	// The node that came back is quarantined afresh, not looked up on
	// every pass while the informer catches up.
	h.client.ClearActions()
	h.c.gc(ctx, 2)
	if gets := nodeGets(h.client.Actions()); len(gets) != 0 {
		t.Errorf("looked up %v again right away", gets)
	}
}

func TestMarkFailedAndDeleteErrors(t *testing.T) {
	boom := apierrors.NewInternalError(errors.New("boom"))
	podsGR := schema.GroupResource{Resource: "pods"}
	for _, tc := range []struct {
		name       string
		applyErr   error
		deleteErr  error
		wantErr    bool
		wantDelete bool
	}{
		{name: "both succeed", wantDelete: true},
		{name: "already deleted", deleteErr: apierrors.NewNotFound(podsGR, "p"), wantDelete: true},
		{name: "delete precondition fails: replaced", deleteErr: apierrors.NewConflict(podsGR, "p", errors.New("uid")), wantDelete: true},
		{name: "delete fails", deleteErr: boom, wantErr: true, wantDelete: true},
		{name: "gone before the apply", applyErr: apierrors.NewNotFound(podsGR, "p")},
		{name: "replaced before the apply", applyErr: apierrors.NewConflict(podsGR, "p", errors.New("uid"))},
		{name: "apply fails: no delete", applyErr: boom, wantErr: true},
	} {
		h := newHarness(t, 0, []runtime.Object{mkPod("p")})
		react := func(err error) clienttesting.ReactionFunc {
			return func(clienttesting.Action) (bool, runtime.Object, error) { return err != nil, nil, err }
		}
		h.client.PrependReactor("patch", "pods", react(tc.applyErr))
		h.client.PrependReactor("delete", "pods", react(tc.deleteErr))
		err := h.c.markFailedAndDelete(context.Background(), mkPod("p"), nil, reasonTerminated)
		if (err != nil) != tc.wantErr {
			t.Errorf("%s: err = %v, want error %v", tc.name, err, tc.wantErr)
		}
		if got := len(deleted(podWrites(t, h.client.Actions()))) == 1; got != tc.wantDelete {
			t.Errorf("%s: deleted = %v, want %v", tc.name, got, tc.wantDelete)
		}
	}
}

func TestRunPassesEachPeriod(t *testing.T) {
	client := fake.NewClientset(
		mkPod("old", phase(v1.PodSucceeded), created(time.Minute)),
		mkPod("mid", phase(v1.PodSucceeded), created(2*time.Minute)),
	)
	factory := informers.NewSharedInformerFactory(client, 0)
	clk := clocktesting.NewFakeClock(t0)
	c, err := newController(client, factory, 1, nil, slog.New(slog.NewTextHandler(io.Discard, nil)), clk)
	if err != nil {
		t.Fatal(err)
	}
	if c.Name() != "pod-garbage-collector" || c.gcCheckPeriod != 20*time.Second || c.quarantineTime != 40*time.Second {
		t.Fatalf("name %q period %v quarantine %v", c.Name(), c.gcCheckPeriod, c.quarantineTime)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	factory.Start(ctx.Done())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, 2) }()

	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	deletes := func() []string { return deleted(podWrites(t, client.Actions())) }

	waitFor("the first pass", func() bool { return len(deletes()) == 1 })
	if got := deletes(); got[0] != "old" {
		t.Fatalf("first pass deleted %v, want old", got)
	}
	if _, err := client.CoreV1().Pods("ns").Create(ctx, mkPod("new", phase(v1.PodSucceeded), created(3*time.Minute)), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor("the informer to see new", func() bool {
		p, _ := c.podLister.Pods("ns").Get("new")
		_, err := c.podLister.Pods("ns").Get("old")
		return p != nil && apierrors.IsNotFound(err)
	})
	// By now the first pass is long over and waits on the fake clock.
	time.Sleep(100 * time.Millisecond)
	clk.Step(c.gcCheckPeriod - time.Second)
	time.Sleep(100 * time.Millisecond)
	if got := deletes(); len(got) != 1 {
		t.Fatalf("deleted %v before the period passed", got)
	}
	waitFor("the next pass", func() bool {
		clk.Step(time.Second)
		return len(deletes()) == 2
	})
	if got, want := deletes(), []string{"mid", "old"}; !slices.Equal(got, want) {
		t.Errorf("deleted %v, want %v", got, want)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
}

func TestRunFailsWithoutSync(t *testing.T) {
	client := fake.NewClientset()
	factory := informers.NewSharedInformerFactory(client, 0)
	c, err := New(client, factory, 0, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the factory is never started, so only ctx can end the wait
	if err := c.Run(ctx, 1); err == nil || !strings.Contains(err.Error(), "did not sync") {
		t.Errorf("Run = %v, want a sync error", err)
	}
}
