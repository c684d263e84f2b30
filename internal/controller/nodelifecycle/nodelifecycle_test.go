package nodelifecycle

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func cond(t v1.NodeConditionType, s v1.ConditionStatus, hb time.Time) v1.NodeCondition {
	return v1.NodeCondition{Type: t, Status: s, LastHeartbeatTime: metav1.NewTime(hb), LastTransitionTime: metav1.NewTime(t0)}
}

func node(name string, conds ...v1.NodeCondition) *v1.Node {
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(t0)}, Status: v1.NodeStatus{Conditions: conds}}
}

func lease(name string, renew time.Time) *coordinationv1.Lease {
	rt := metav1.NewMicroTime(renew)
	return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: v1.NamespaceNodeLease}, Spec: coordinationv1.LeaseSpec{RenewTime: &rt}}
}

func TestObserve(t *testing.T) {
	cfg := DefaultConfig()
	ready := func(hb time.Time) *v1.Node { return node("n", cond(v1.NodeReady, v1.ConditionTrue, hb)) }
	now := t0.Add(10 * time.Minute)
	for _, tc := range []struct {
		name      string
		prev      *health
		node      *v1.Node
		lease     *coordinationv1.Lease
		wantProbe time.Time
		wantGrace time.Duration
	}{
		{"first sight of a node without Ready: its creation", nil, node("n"), nil, t0, cfg.StartupGracePeriod},
		{"first sight of a Ready node: now", nil, ready(t0), nil, now, cfg.MonitorGracePeriod},
		{"same heartbeat: unchanged", &health{status: &ready(t0).Status, probe: t0.Add(time.Minute)}, ready(t0), nil, t0.Add(time.Minute), cfg.MonitorGracePeriod},
		{"new heartbeat: now", &health{status: &ready(t0).Status, probe: t0.Add(time.Minute)}, ready(t0.Add(time.Second)), nil, now, cfg.MonitorGracePeriod},
		{"renewed lease: now", &health{status: &ready(t0).Status, probe: t0.Add(time.Minute), renew: ptrMicro(t0)}, ready(t0), lease("n", t0.Add(time.Second)), now, cfg.MonitorGracePeriod},
		{"same lease: unchanged", &health{status: &ready(t0).Status, probe: t0.Add(time.Minute), renew: ptrMicro(t0)}, ready(t0), lease("n", t0), t0.Add(time.Minute), cfg.MonitorGracePeriod},
		{"Ready condition appeared: now", &health{status: &node("n").Status, probe: t0}, ready(t0), nil, now, cfg.MonitorGracePeriod},
		{"Ready condition vanished: now, startup grace", &health{status: &ready(t0).Status, probe: t0}, node("n"), nil, now, cfg.StartupGracePeriod},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, grace := observe(tc.prev, tc.node, tc.lease, now, cfg)
			if !h.probe.Equal(tc.wantProbe) || grace != tc.wantGrace {
				t.Errorf("probe %v grace %v, want %v %v", h.probe, grace, tc.wantProbe, tc.wantGrace)
			}
		})
	}
}

func ptrMicro(t time.Time) *metav1.MicroTime { m := metav1.NewMicroTime(t); return &m }

func TestSilent(t *testing.T) {
	h := health{probe: t0}
	if silent(h, 50*time.Second, t0.Add(50*time.Second)) {
		t.Error("silent at exactly the grace period")
	}
	if !silent(h, 50*time.Second, t0.Add(51*time.Second)) {
		t.Error("not silent past the grace period")
	}
}

func TestMarkUnknown(t *testing.T) {
	now := t0.Add(time.Hour)
	n := node("n", cond(v1.NodeReady, v1.ConditionTrue, t0), cond(v1.NodeMemoryPressure, v1.ConditionFalse, t0))
	if !markUnknown(n, now) {
		t.Fatal("Ready True → Unknown reported no change")
	}
	byType := map[v1.NodeConditionType]v1.NodeCondition{}
	for _, c := range n.Status.Conditions {
		byType[c.Type] = c
	}
	r := byType[v1.NodeReady]
	if r.Status != v1.ConditionUnknown || r.Reason != "NodeStatusUnknown" || r.Message != "Kubelet stopped posting node status." || !r.LastTransitionTime.Time.Equal(now) || !r.LastHeartbeatTime.Time.Equal(t0) {
		t.Errorf("Ready = %+v", r)
	}
	if m := byType[v1.NodeMemoryPressure]; m.Status != v1.ConditionUnknown {
		t.Errorf("MemoryPressure = %+v", m)
	}
	for _, typ := range []v1.NodeConditionType{v1.NodeDiskPressure, v1.NodePIDPressure} {
		if c := byType[typ]; c.Status != v1.ConditionUnknown || c.Reason != "NodeStatusNeverUpdated" || c.Message != "Kubelet never posted node status." {
			t.Errorf("%s = %+v", typ, c)
		}
	}
	if markUnknown(n, now.Add(time.Minute)) {
		t.Error("already Unknown reported a change")
	}
	if got := readyCondition(&n.Status).LastTransitionTime.Time; !got.Equal(now) {
		t.Errorf("transition time moved to %v", got)
	}
}

func TestNoScheduleTaints(t *testing.T) {
	ns := func(keys ...string) []v1.Taint {
		var out []v1.Taint
		for _, k := range keys {
			out = append(out, v1.Taint{Key: k, Effect: v1.TaintEffectNoSchedule})
		}
		return out
	}
	for _, tc := range []struct {
		name        string
		node        *v1.Node
		have        []v1.Taint
		want        []v1.Taint
		wantChanged bool
	}{
		{"ready node, nothing", node("n", cond(v1.NodeReady, v1.ConditionTrue, t0)), nil, nil, false},
		{"not ready", node("n", cond(v1.NodeReady, v1.ConditionFalse, t0)), nil, ns(v1.TaintNodeNotReady), true},
		{"unknown swaps not-ready for unreachable", node("n", cond(v1.NodeReady, v1.ConditionUnknown, t0)), ns(v1.TaintNodeNotReady), ns(v1.TaintNodeUnreachable), true},
		{"pressure conditions", node("n", cond(v1.NodeReady, v1.ConditionTrue, t0), cond(v1.NodeMemoryPressure, v1.ConditionTrue, t0), cond(v1.NodeDiskPressure, v1.ConditionTrue, t0), cond(v1.NodePIDPressure, v1.ConditionFalse, t0)),
			nil, ns(v1.TaintNodeMemoryPressure, v1.TaintNodeDiskPressure), true},
		{"user taints kept, healed condition removed", node("n", cond(v1.NodeReady, v1.ConditionTrue, t0)),
			append(ns("user", v1.TaintNodeNotReady), v1.Taint{Key: v1.TaintNodeUnreachable, Effect: v1.TaintEffectNoExecute}),
			append(ns("user"), v1.Taint{Key: v1.TaintNodeUnreachable, Effect: v1.TaintEffectNoExecute}), true},
		{"already right", node("n", cond(v1.NodeReady, v1.ConditionFalse, t0)), ns("user", v1.TaintNodeNotReady), ns("user", v1.TaintNodeNotReady), false},
		{"unschedulable", &v1.Node{Spec: v1.NodeSpec{Unschedulable: true}}, nil, ns(v1.TaintNodeUnschedulable), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, changed := reconcileNoSchedule(tc.have, noScheduleTaints(tc.node))
			if changed != tc.wantChanged || !sameTaints(got, tc.want) {
				t.Errorf("got %v changed %v, want %v %v", got, changed, tc.want, tc.wantChanged)
			}
		})
	}
}

func sameTaints(a, b []v1.Taint) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Key != b[i].Key || a[i].Effect != b[i].Effect {
			return false
		}
	}
	return true
}

func TestWithNoExecute(t *testing.T) {
	now := t0.Add(time.Hour)
	old := metav1.NewTime(t0)
	unreach := v1.Taint{Key: v1.TaintNodeUnreachable, Effect: v1.TaintEffectNoExecute, TimeAdded: &old}
	user := v1.Taint{Key: "user", Effect: v1.TaintEffectNoExecute}
	got, changed := withNoExecute([]v1.Taint{user}, v1.TaintNodeUnreachable, now)
	if !changed || len(got) != 2 || got[1].Key != v1.TaintNodeUnreachable || !got[1].TimeAdded.Time.Equal(now) {
		t.Errorf("add: %v %v", got, changed)
	}
	got, changed = withNoExecute([]v1.Taint{user, unreach}, v1.TaintNodeUnreachable, now)
	if changed || !got[1].TimeAdded.Time.Equal(t0) {
		t.Errorf("keep: %v %v", got, changed)
	}
	got, changed = withNoExecute([]v1.Taint{unreach, user}, v1.TaintNodeNotReady, now)
	if !changed || len(got) != 2 || got[0].Key != "user" || got[1].Key != v1.TaintNodeNotReady {
		t.Errorf("swap: %v %v", got, changed)
	}
	got, changed = withNoExecute([]v1.Taint{unreach, user}, "", now)
	if !changed || len(got) != 1 || got[0].Key != "user" {
		t.Errorf("remove: %v %v", got, changed)
	}
}

func TestZones(t *testing.T) {
	cfg := DefaultConfig()
	r := func(s ...v1.ConditionStatus) []*v1.NodeCondition {
		var out []*v1.NodeCondition
		for _, st := range s {
			out = append(out, &v1.NodeCondition{Type: v1.NodeReady, Status: st})
		}
		return out
	}
	T, F, U := v1.ConditionTrue, v1.ConditionFalse, v1.ConditionUnknown
	for _, tc := range []struct {
		name  string
		conds []*v1.NodeCondition
		want  zoneState
	}{
		{"all ready", r(T, T, T), stateNormal},
		{"one of three down", r(T, T, U), stateNormal},
		{"all down", r(U, F), stateFullDisruption},
		{"no condition counts as down", append(r(U), nil), stateFullDisruption},
		{"two of three down: not more than two", r(T, U, U), stateNormal},
		{"three of five down", r(T, T, U, U, F), statePartialDisruption},
		{"three of six down (0.5 < 0.55)", r(T, T, T, U, U, U), stateNormal},
	} {
		if got := computeZoneState(tc.conds, cfg.UnhealthyZoneThreshold); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
	if got := zoneRate(statePartialDisruption, 10, cfg); got != 0 {
		t.Errorf("partial, small: %v", got)
	}
	if got := zoneRate(statePartialDisruption, 51, cfg); got != cfg.SecondaryNodeEvictionRate {
		t.Errorf("partial, large: %v", got)
	}
	if got := zoneRate(stateFullDisruption, 3, cfg); got != cfg.NodeEvictionRate {
		t.Errorf("full: %v", got)
	}
	for _, tc := range []struct {
		name     string
		old, cur map[string]zoneState
		want     disruption
	}{
		{"normal", map[string]zoneState{"a": stateNormal}, map[string]zoneState{"a": stateNormal}, perZone},
		{"the only zone goes down", map[string]zoneState{"a": stateNormal}, map[string]zoneState{"a": stateFullDisruption}, enterMaster},
		{"one of two zones down", map[string]zoneState{"a": stateNormal, "b": stateNormal}, map[string]zoneState{"a": stateFullDisruption, "b": stateNormal}, perZone},
		{"still all down", map[string]zoneState{"a": stateFullDisruption}, map[string]zoneState{"a": stateFullDisruption}, unchanged},
		{"one comes back", map[string]zoneState{"a": stateFullDisruption, "b": stateFullDisruption}, map[string]zoneState{"a": stateNormal, "b": stateFullDisruption}, exitMaster},
		{"new zone joins a healthy cluster", map[string]zoneState{"a": stateNormal, "b": stateInitial}, map[string]zoneState{"a": stateNormal, "b": stateNormal}, perZone},
		{"no nodes", map[string]zoneState{}, map[string]zoneState{}, unchanged},
	} {
		if got := decideDisruption(tc.old, tc.cur); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	if got := zoneKey(&v1.Node{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{v1.LabelTopologyRegion: "r", v1.LabelTopologyZone: "z"}}}); got != "r:\x00:z" {
		t.Errorf("zone key %q", got)
	}
}

// harness drives the controller by hand over a fake clientset: the
// informers' stores are refreshed from the clientset between passes.
type harness struct {
	t       *testing.T
	client  *fake.Clientset
	factory informers.SharedInformerFactory
	c       *Controller
	clock   *clocktesting.FakeClock
	events  *record.FakeRecorder
}

func newHarness(t *testing.T, cfg Config, objs ...any) *harness {
	client := fake.NewClientset()
	factory := informers.NewSharedInformerFactory(client, 0)
	clk := clocktesting.NewFakeClock(t0)
	rec := record.NewFakeRecorder(100)
	c, err := newController(client, factory, cfg, nil, slog.New(slog.NewTextHandler(io.Discard, nil)), clk, nil, rec)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, client: client, factory: factory, c: c, clock: clk, events: rec}
	ctx := context.Background()
	for _, o := range objs {
		var err error
		switch o := o.(type) {
		case *v1.Node:
			_, err = client.CoreV1().Nodes().Create(ctx, o, metav1.CreateOptions{})
		case *v1.Pod:
			_, err = client.CoreV1().Pods(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *coordinationv1.Lease:
			_, err = client.CoordinationV1().Leases(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	h.refresh()
	return h
}

// refresh copies the clientset's objects into the informers' stores.
func (h *harness) refresh() {
	ctx := context.Background()
	nodes, _ := h.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	pods, _ := h.client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	leases, _ := h.client.CoordinationV1().Leases("").List(ctx, metav1.ListOptions{})
	var n, p, l []any
	for i := range nodes.Items {
		n = append(n, &nodes.Items[i])
	}
	for i := range pods.Items {
		p = append(p, &pods.Items[i])
	}
	for i := range leases.Items {
		l = append(l, &leases.Items[i])
	}
	must := func(err error) {
		if err != nil {
			h.t.Fatal(err)
		}
	}
	must(h.factory.Core().V1().Nodes().Informer().GetStore().Replace(n, ""))
	must(h.factory.Core().V1().Pods().Informer().GetStore().Replace(p, ""))
	must(h.factory.Coordination().V1().Leases().Informer().GetStore().Replace(l, ""))
}

// pass advances the clock and runs a monitor pass and a taint pass.
func (h *harness) pass(d time.Duration) {
	h.clock.Step(d)
	h.c.monitor(context.Background())
	h.refresh()
	h.c.taintPass(context.Background())
	h.refresh()
}

func (h *harness) node(name string) *v1.Node {
	n, err := h.client.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	return n
}

func (h *harness) renew(name string) {
	l, err := h.client.CoordinationV1().Leases(v1.NamespaceNodeLease).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	rt := metav1.NewMicroTime(h.clock.Now())
	l.Spec.RenewTime = &rt
	if _, err := h.client.CoordinationV1().Leases(v1.NamespaceNodeLease).Update(context.Background(), l, metav1.UpdateOptions{}); err != nil {
		h.t.Fatal(err)
	}
	h.refresh()
}

func readyPod(name, nodeName string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Spec: v1.PodSpec{NodeName: nodeName},
		Status: v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue}}}}
}

func noExecuteTaint(n *v1.Node) string {
	for _, t := range n.Spec.Taints {
		if isNoExecuteHealthTaint(t) {
			return t.Key
		}
	}
	return ""
}

func TestSilentNodeIsMarkedUnknownTaintedAndItsPodsNotReady(t *testing.T) {
	h := newHarness(t, DefaultConfig(),
		node("a", cond(v1.NodeReady, v1.ConditionTrue, t0)), lease("a", t0),
		node("b", cond(v1.NodeReady, v1.ConditionTrue, t0)), lease("b", t0),
		readyPod("on-a", "a"), readyPod("on-b", "b"))
	h.pass(0)
	// b keeps renewing its lease; a falls silent.
	for elapsed := time.Duration(0); elapsed < 50*time.Second; elapsed += 5 * time.Second {
		h.renew("b")
		h.pass(5 * time.Second)
		if r := readyCondition(&h.node("a").Status); r.Status != v1.ConditionTrue {
			t.Fatalf("a marked %s after %v, within the grace period", r.Status, elapsed+5*time.Second)
		}
	}
	h.renew("b")
	h.pass(5 * time.Second)
	a := h.node("a")
	if r := readyCondition(&a.Status); r.Status != v1.ConditionUnknown || r.Reason != "NodeStatusUnknown" {
		t.Fatalf("a's Ready after 55 s of silence: %+v", r)
	}
	if r := readyCondition(&h.node("b").Status); r.Status != v1.ConditionTrue {
		t.Fatalf("b, renewing its lease, became %s", r.Status)
	}
	pod, _ := h.client.CoreV1().Pods("default").Get(context.Background(), "on-a", metav1.GetOptions{})
	if pod.Status.Conditions[0].Status != v1.ConditionFalse {
		t.Errorf("pod on a still Ready: %+v", pod.Status.Conditions)
	}
	pod, _ = h.client.CoreV1().Pods("default").Get(context.Background(), "on-b", metav1.GetOptions{})
	if pod.Status.Conditions[0].Status != v1.ConditionTrue {
		t.Errorf("pod on b marked not Ready")
	}
	// The NoExecute taint comes on the next pass, through the zone queue.
	h.renew("b")
	h.pass(5 * time.Second)
	a = h.node("a")
	if got := noExecuteTaint(a); got != v1.TaintNodeUnreachable {
		t.Fatalf("a's NoExecute taint %q, taints %v", got, a.Spec.Taints)
	}
	if got := noExecuteTaint(h.node("b")); got != "" {
		t.Errorf("b tainted %q", got)
	}
	// The NoSchedule condition taint follows from the node update.
	if err := h.c.syncNoSchedule(context.Background(), "a"); err != nil {
		t.Fatal(err)
	}
	if !hasTaint(h.node("a"), v1.TaintNodeUnreachable, v1.TaintEffectNoSchedule) {
		t.Errorf("no unreachable NoSchedule taint: %v", h.node("a").Spec.Taints)
	}

	// a's kubelet comes back: Ready with a new heartbeat.
	a = h.node("a")
	for i := range a.Status.Conditions {
		a.Status.Conditions[i] = cond(a.Status.Conditions[i].Type, map[bool]v1.ConditionStatus{true: v1.ConditionTrue, false: v1.ConditionFalse}[a.Status.Conditions[i].Type == v1.NodeReady], h.clock.Now())
	}
	if _, err := h.client.CoreV1().Nodes().UpdateStatus(context.Background(), a, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.refresh()
	h.renew("b")
	h.pass(5 * time.Second)
	if got := noExecuteTaint(h.node("a")); got != "" {
		t.Errorf("a still tainted %q after it came back", got)
	}
	if err := h.c.syncNoSchedule(context.Background(), "a"); err != nil {
		t.Fatal(err)
	}
	if hasTaint(h.node("a"), v1.TaintNodeUnreachable, v1.TaintEffectNoSchedule) {
		t.Errorf("unreachable NoSchedule taint kept: %v", h.node("a").Spec.Taints)
	}
}

func hasTaint(n *v1.Node, key string, effect v1.TaintEffect) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == key && t.Effect == effect {
			return true
		}
	}
	return false
}

func TestEveryNodeDownStopsEvictions(t *testing.T) {
	h := newHarness(t, DefaultConfig(),
		node("a", cond(v1.NodeReady, v1.ConditionTrue, t0)), lease("a", t0),
		node("b", cond(v1.NodeReady, v1.ConditionTrue, t0)), lease("b", t0))
	h.pass(0)
	for range 15 {
		h.pass(5 * time.Second)
	}
	for _, name := range []string{"a", "b"} {
		n := h.node(name)
		if r := readyCondition(&n.Status); r.Status != v1.ConditionUnknown {
			t.Errorf("%s: Ready %s", name, r.Status)
		}
		if got := noExecuteTaint(n); got != "" {
			t.Errorf("%s tainted %q while every node is down (full disruption)", name, got)
		}
	}
	// One comes back: the other is tainted, after a fresh grace period.
	h.renew("a")
	a := h.node("a")
	for i := range a.Status.Conditions {
		if a.Status.Conditions[i].Type == v1.NodeReady {
			a.Status.Conditions[i] = cond(v1.NodeReady, v1.ConditionTrue, h.clock.Now())
		}
	}
	if _, err := h.client.CoreV1().Nodes().UpdateStatus(context.Background(), a, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.refresh()
	h.pass(5 * time.Second)
	h.renew("a")
	h.pass(5 * time.Second)
	if got := noExecuteTaint(h.node("b")); got != v1.TaintNodeUnreachable {
		t.Errorf("b not tainted after a came back: %q", got)
	}
}

func TestEvictionRateLimitsTaintingPerZone(t *testing.T) {
	cfg := DefaultConfig()
	objs := []any{node("ok", cond(v1.NodeReady, v1.ConditionTrue, t0)), lease("ok", t0)}
	for _, n := range []string{"x", "y"} {
		objs = append(objs, node(n, cond(v1.NodeReady, v1.ConditionFalse, t0)))
	}
	h := newHarness(t, cfg, objs...)
	h.pass(0)
	h.renew("ok")
	h.pass(time.Second)
	tainted := 0
	for _, n := range []string{"x", "y"} {
		if noExecuteTaint(h.node(n)) == v1.TaintNodeNotReady {
			tainted++
		}
	}
	if tainted != 1 {
		t.Fatalf("%d nodes tainted at once; the rate (0.1/s, burst 1) allows one", tainted)
	}
	// Ten seconds later the bucket has a token again.
	h.renew("ok")
	h.pass(10 * time.Second)
	h.c.taintPass(context.Background())
	h.refresh()
	for _, n := range []string{"x", "y"} {
		if noExecuteTaint(h.node(n)) != v1.TaintNodeNotReady {
			t.Errorf("%s not tainted not-ready after 11 s", n)
		}
	}
}
