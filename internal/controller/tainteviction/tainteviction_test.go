package tainteviction

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/orca-project/orca/internal/controller/controllerutil"
)

var t0 = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

func taint(key string, effect v1.TaintEffect, added *time.Time) v1.Taint {
	t := v1.Taint{Key: key, Value: "v", Effect: effect}
	if added != nil {
		t.TimeAdded = ptr.To(metav1.NewTime(*added))
	}
	return t
}

func tolerate(key string, seconds *int64) v1.Toleration {
	return v1.Toleration{Key: key, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: seconds}
}

func TestDecide(t *testing.T) {
	unreachable := v1.TaintNodeUnreachable
	for _, tc := range []struct {
		name      string
		taints    []v1.Taint
		tols      []v1.Toleration
		scheduled time.Time // zero: no PodScheduled condition
		seen      time.Time
		now       time.Time
		evict     bool
		evictAt   time.Time
	}{
		{name: "no taints", now: at(0)},
		{name: "only a NoSchedule taint, untolerated", taints: []v1.Taint{taint("k", v1.TaintEffectNoSchedule, nil)}, now: at(0)},
		{name: "untolerated NoExecute: now",
			taints: []v1.Taint{taint(unreachable, v1.TaintEffectNoExecute, ptr.To(at(0)))}, now: at(time.Second), evict: true, evictAt: at(time.Second)},
		{name: "tolerated forever",
			taints: []v1.Taint{taint(unreachable, v1.TaintEffectNoExecute, ptr.To(at(0)))}, tols: []v1.Toleration{tolerate(unreachable, nil)}, now: at(time.Hour)},
		{name: "tolerationSeconds counts from TimeAdded",
			taints:    []v1.Taint{taint(unreachable, v1.TaintEffectNoExecute, ptr.To(at(0)))},
			tols:      []v1.Toleration{tolerate(unreachable, ptr.To[int64](300))},
			scheduled: at(-time.Hour), seen: at(10 * time.Second), now: at(10 * time.Second), evict: true, evictAt: at(300 * time.Second)},
		{name: "PodScheduled later than TimeAdded counts from scheduling",
			taints:    []v1.Taint{taint(unreachable, v1.TaintEffectNoExecute, ptr.To(at(0)))},
			tols:      []v1.Toleration{tolerate(unreachable, ptr.To[int64](300))},
			scheduled: at(time.Minute), seen: at(2 * time.Minute), now: at(2 * time.Minute), evict: true, evictAt: at(6 * time.Minute)},
		{name: "no TimeAdded counts from when first seen",
			taints:    []v1.Taint{taint(unreachable, v1.TaintEffectNoExecute, nil)},
			tols:      []v1.Toleration{tolerate(unreachable, ptr.To[int64](300))},
			scheduled: at(-time.Hour), seen: at(30 * time.Second), now: at(time.Minute), evict: true, evictAt: at(330 * time.Second)},
		{name: "past the deadline",
			taints: []v1.Taint{taint(unreachable, v1.TaintEffectNoExecute, ptr.To(at(0)))},
			tols:   []v1.Toleration{tolerate(unreachable, ptr.To[int64](300))},
			now:    at(time.Hour), evict: true, evictAt: at(300 * time.Second)},
		{name: "tolerationSeconds zero: now",
			taints: []v1.Taint{taint(unreachable, v1.TaintEffectNoExecute, ptr.To(at(0)))},
			tols:   []v1.Toleration{tolerate(unreachable, ptr.To[int64](0))},
			now:    at(time.Second), evict: true, evictAt: at(time.Second)},
		{name: "tolerationSeconds negative: now",
			taints: []v1.Taint{taint(unreachable, v1.TaintEffectNoExecute, ptr.To(at(0)))},
			tols:   []v1.Toleration{tolerate(unreachable, ptr.To[int64](-5))},
			now:    at(time.Second), evict: true, evictAt: at(time.Second)},
		{name: "operator Exists matches any value of its key",
			taints: []v1.Taint{{Key: "k", Value: "anything", Effect: v1.TaintEffectNoExecute, TimeAdded: ptr.To(metav1.NewTime(at(0)))}},
			tols:   []v1.Toleration{tolerate("k", ptr.To[int64](60))},
			now:    at(0), evict: true, evictAt: at(time.Minute)},
		{name: "operator Equal needs the value",
			taints: []v1.Taint{{Key: "k", Value: "other", Effect: v1.TaintEffectNoExecute, TimeAdded: ptr.To(metav1.NewTime(at(0)))}},
			tols:   []v1.Toleration{{Key: "k", Operator: v1.TolerationOpEqual, Value: "v", Effect: v1.TaintEffectNoExecute}},
			now:    at(0), evict: true, evictAt: at(0)},
		{name: "another key does not match",
			taints: []v1.Taint{taint("k", v1.TaintEffectNoExecute, ptr.To(at(0)))},
			tols:   []v1.Toleration{tolerate("other", nil)},
			now:    at(0), evict: true, evictAt: at(0)},
		{name: "a NoSchedule toleration does not tolerate NoExecute",
			taints: []v1.Taint{taint("k", v1.TaintEffectNoExecute, ptr.To(at(0)))},
			tols:   []v1.Toleration{{Key: "k", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule}},
			now:    at(0), evict: true, evictAt: at(0)},
		{name: "empty effect and key with Exists tolerates everything",
			taints: []v1.Taint{taint("a", v1.TaintEffectNoExecute, ptr.To(at(0))), taint("b", v1.TaintEffectNoExecute, ptr.To(at(0)))},
			tols:   []v1.Toleration{{Operator: v1.TolerationOpExists}},
			now:    at(time.Hour)},
		{name: "several taints: the smallest tolerationSeconds from the latest TimeAdded",
			taints: []v1.Taint{taint("a", v1.TaintEffectNoExecute, ptr.To(at(0))), taint("b", v1.TaintEffectNoExecute, ptr.To(at(10*time.Second)))},
			tols:   []v1.Toleration{tolerate("a", ptr.To[int64](120)), tolerate("b", ptr.To[int64](600))},
			now:    at(20 * time.Second), evict: true, evictAt: at(130 * time.Second)},
		{name: "several taints: one tolerated forever, one bounded",
			taints: []v1.Taint{taint("a", v1.TaintEffectNoExecute, ptr.To(at(0))), taint("b", v1.TaintEffectNoExecute, ptr.To(at(0)))},
			tols:   []v1.Toleration{tolerate("a", nil), tolerate("b", ptr.To[int64](90))},
			now:    at(0), evict: true, evictAt: at(90 * time.Second)},
		{name: "several taints: one untolerated",
			taints: []v1.Taint{taint("a", v1.TaintEffectNoExecute, ptr.To(at(0))), taint("b", v1.TaintEffectNoExecute, ptr.To(at(0)))},
			tols:   []v1.Toleration{tolerate("a", nil)},
			now:    at(5 * time.Second), evict: true, evictAt: at(5 * time.Second)},
		{name: "NoSchedule taints do not take part",
			taints: []v1.Taint{taint("a", v1.TaintEffectNoExecute, ptr.To(at(0))), taint("b", v1.TaintEffectNoSchedule, ptr.To(at(time.Hour)))},
			tols:   []v1.Toleration{tolerate("a", ptr.To[int64](60))},
			now:    at(0), evict: true, evictAt: at(time.Minute)},
		{name: "the first matching toleration counts, as upstream",
			taints: []v1.Taint{taint("a", v1.TaintEffectNoExecute, ptr.To(at(0)))},
			tols:   []v1.Toleration{tolerate("", nil), tolerate("a", ptr.To[int64](60))},
			now:    at(time.Hour)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := startOf(tc.taints, tc.scheduled, tc.seen)
			evictAt, evict := decide(tc.taints, tc.tols, start, tc.now)
			if evict != tc.evict || (evict && !evictAt.Equal(tc.evictAt)) {
				t.Errorf("decide = %v, %v; want %v, %v", evictAt, evict, tc.evictAt, tc.evict)
			}
		})
	}
}

type harness struct {
	t        *testing.T
	client   *fake.Clientset
	factory  informers.SharedInformerFactory
	clock    *clocktesting.FakeClock
	recorder *record.FakeRecorder
	c        *Controller
	// deleted is the pods/status conditions each pod had when deleted.
	deleted map[string][]v1.PodCondition
}

func newHarness(t *testing.T, now time.Time, objs ...runtime.Object) *harness {
	t.Helper()
	client := fake.NewSimpleClientset(objs...)
	factory := informers.NewSharedInformerFactory(client, 0)
	h := &harness{t: t, client: client, factory: factory, clock: clocktesting.NewFakeClock(now), recorder: record.NewFakeRecorder(100),
		deleted: map[string][]v1.PodCondition{}}
	// What the DisruptionTarget patch did shows only before the delete.
	client.PrependReactor("delete", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
		d := a.(clienttesting.DeleteAction)
		if obj, err := client.Tracker().Get(v1.SchemeGroupVersion.WithResource("pods"), d.GetNamespace(), d.GetName()); err == nil {
			h.deleted[d.GetNamespace()+"/"+d.GetName()] = obj.(*v1.Pod).Status.Conditions
		}
		return false, nil, nil
	})
	c, err := newController(client, factory, nil, slog.New(slog.NewTextHandler(io.Discard, nil)), h.clock, nil, h.recorder)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.queue.ShutDown)
	h.c = c
	for _, o := range objs {
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
	return h
}

func (h *harness) setNode(n *v1.Node) {
	h.t.Helper()
	if _, err := h.client.CoreV1().Nodes().Update(context.Background(), n, metav1.UpdateOptions{}); err != nil {
		h.t.Fatal(err)
	}
	if err := h.factory.Core().V1().Nodes().Informer().GetIndexer().Update(n); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) setPod(p *v1.Pod) {
	h.t.Helper()
	if _, err := h.client.CoreV1().Pods(p.Namespace).Update(context.Background(), p, metav1.UpdateOptions{}); err != nil {
		h.t.Fatal(err)
	}
	if err := h.factory.Core().V1().Pods().Informer().GetIndexer().Update(p); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) sync(key string) {
	h.t.Helper()
	if err := h.c.sync(context.Background(), key); err != nil {
		h.t.Fatalf("sync %s: %v", key, err)
	}
}

// writes is the verbs and subresources of the requests that change pods,
// in order.
func (h *harness) writes() []string {
	var out []string
	for _, a := range h.client.Actions() {
		if a.GetResource().Resource != "pods" || a.GetVerb() == "get" || a.GetVerb() == "list" || a.GetVerb() == "watch" || a.GetVerb() == "update" {
			continue
		}
		s := a.GetVerb()
		if a.GetSubresource() != "" {
			s += " " + a.GetSubresource()
		}
		out = append(out, s)
	}
	return out
}

func (h *harness) events() []string {
	var out []string
	for {
		select {
		case e := <-h.recorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func (h *harness) podExists(ns, name string) bool {
	_, err := h.client.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		h.t.Fatal(err)
	}
	return err == nil
}

// waitQueued waits for the delaying queue's goroutine to hand the key over.
func (h *harness) waitQueued(key string) {
	h.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for h.c.queue.Len() == 0 {
		if time.Now().After(deadline) {
			h.t.Fatalf("%s was not requeued", key)
		}
		time.Sleep(5 * time.Millisecond)
	}
	got, _ := h.c.queue.Get()
	h.c.queue.Done(got)
	if got != key {
		h.t.Fatalf("requeued %s, want %s", got, key)
	}
}

func node(name string, taints ...v1.Taint) *v1.Node {
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1.NodeSpec{Taints: taints}}
}

func pod(name, nodeName string, tols ...v1.Toleration) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name)},
		Spec:       v1.PodSpec{NodeName: nodeName, Tolerations: tols},
		Status: v1.PodStatus{Conditions: []v1.PodCondition{
			{Type: v1.PodScheduled, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(at(-time.Hour))},
			{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(at(-time.Hour))},
		}},
	}
}

const (
	marking    = "Normal TaintManagerEviction Marking for deletion Pod ns/p"
	cancelling = "Normal TaintManagerEviction Cancelling deletion of Pod ns/p"
)

func TestUntoleratedPodIsMarkedThenDeleted(t *testing.T) {
	h := newHarness(t, at(time.Second), node("n1", taint(v1.TaintNodeUnreachable, v1.TaintEffectNoExecute, ptr.To(at(0)))), pod("p", "n1"))
	h.sync("ns/p")

	if got, want := h.writes(), []string{"patch status", "delete"}; !slices.Equal(got, want) {
		t.Fatalf("pod writes = %v, want %v", got, want)
	}
	var del clienttesting.DeleteAction
	for _, a := range h.client.Actions() {
		if d, ok := a.(clienttesting.DeleteAction); ok {
			del = d
		}
	}
	opts := del.GetDeleteOptions()
	if opts.GracePeriodSeconds != nil || opts.Preconditions == nil || opts.Preconditions.UID == nil || *opts.Preconditions.UID != "uid-p" {
		t.Errorf("delete options = %+v; want the pod's own grace period and a UID precondition", opts)
	}
	if h.podExists("ns", "p") {
		t.Error("pod still exists")
	}
	conds, ok := h.deleted["ns/p"]
	if !ok {
		t.Fatal("pod was not deleted")
	}
	byType := map[v1.PodConditionType]v1.PodCondition{}
	for _, c := range conds {
		byType[c.Type] = c
	}
	dt, ok := byType[v1.DisruptionTarget]
	if !ok || dt.Status != v1.ConditionTrue || dt.Reason != "DeletionByTaintManager" || dt.Message != "Taint manager: deleting due to NoExecute taint" {
		t.Errorf("conditions at deletion = %+v; want DisruptionTarget", conds)
	}
	if _, ok := byType[v1.PodReady]; !ok || len(conds) != 3 {
		t.Errorf("conditions at deletion = %+v; want the others kept", conds)
	}
	if got := h.events(); !slices.Equal(got, []string{marking}) {
		t.Errorf("events = %q", got)
	}
}

func TestTolerationSecondsDelayEviction(t *testing.T) {
	n := node("n1", taint(v1.TaintNodeNotReady, v1.TaintEffectNoExecute, ptr.To(at(0))))
	h := newHarness(t, at(100*time.Second), n, pod("p", "n1", tolerate(v1.TaintNodeNotReady, ptr.To[int64](300))))
	h.sync("ns/p")
	if w := h.writes(); len(w) != 0 {
		t.Fatalf("pod writes with 200s left = %v", w)
	}
	if got := h.events(); !slices.Equal(got, []string{marking}) {
		t.Errorf("events on scheduling = %q", got)
	}
	if h.c.queue.Len() != 0 {
		t.Fatal("requeued at once instead of after the time left")
	}
	// The requeue is due exactly at the deadline, not a moment before.
	h.clock.Step(199 * time.Second)
	time.Sleep(50 * time.Millisecond)
	if h.c.queue.Len() != 0 {
		t.Fatal("requeued a second early")
	}
	h.clock.Step(time.Second)
	h.waitQueued("ns/p")

	h.sync("ns/p")
	if got, want := h.writes(), []string{"patch status", "delete"}; !slices.Equal(got, want) {
		t.Fatalf("pod writes at the deadline = %v, want %v", got, want)
	}
	if got := h.events(); len(got) != 0 {
		t.Errorf("events on deletion of an announced eviction = %q", got)
	}
}

// A controller restarted before the deadline keeps it, because the
// taint's TimeAdded carries it.
func TestDeadlineSurvivesRestart(t *testing.T) {
	n := node("n1", taint(v1.TaintNodeNotReady, v1.TaintEffectNoExecute, ptr.To(at(0))))
	p := pod("p", "n1", tolerate(v1.TaintNodeNotReady, ptr.To[int64](300)))
	h := newHarness(t, at(299*time.Second), n, p)
	h.sync("ns/p")
	if w := h.writes(); len(w) != 0 {
		t.Fatalf("pod writes a second early = %v", w)
	}
	h = newHarness(t, at(300*time.Second), n, p)
	h.sync("ns/p")
	if got, want := h.writes(), []string{"patch status", "delete"}; !slices.Equal(got, want) {
		t.Fatalf("pod writes at the deadline = %v, want %v", got, want)
	}
}

// Without TimeAdded the clock starts when the controller first sees the
// pod tainted, and later syncs must not restart it.
func TestDeadlineWithoutTimeAddedCountsFromFirstSight(t *testing.T) {
	h := newHarness(t, at(0), node("n1", taint("maintenance", v1.TaintEffectNoExecute, nil)), pod("p", "n1", tolerate("maintenance", ptr.To[int64](60))))
	h.sync("ns/p")
	h.clock.Step(59 * time.Second)
	h.sync("ns/p")
	if w := h.writes(); len(w) != 0 {
		t.Fatalf("pod writes a second early = %v", w)
	}
	h.clock.Step(time.Second)
	h.sync("ns/p")
	if got, want := h.writes(), []string{"patch status", "delete"}; !slices.Equal(got, want) {
		t.Fatalf("pod writes at the deadline = %v, want %v", got, want)
	}
	if got := h.events(); !slices.Equal(got, []string{marking}) {
		t.Errorf("events = %q", got)
	}
}

func TestRemovingTheTaintCancels(t *testing.T) {
	n := node("n1", taint(v1.TaintNodeNotReady, v1.TaintEffectNoExecute, ptr.To(at(0))))
	h := newHarness(t, at(10*time.Second), n, pod("p", "n1", tolerate(v1.TaintNodeNotReady, ptr.To[int64](300))))
	h.sync("ns/p")
	if got := h.events(); !slices.Equal(got, []string{marking}) {
		t.Fatalf("events on scheduling = %q", got)
	}

	h.setNode(node("n1"))
	h.sync("ns/p")
	if got := h.events(); !slices.Equal(got, []string{cancelling}) {
		t.Errorf("events on taint removal = %q", got)
	}
	h.clock.Step(time.Hour)
	h.sync("ns/p")
	if w := h.writes(); len(w) != 0 {
		t.Errorf("pod writes after the taint went = %v", w)
	}
	if !h.podExists("ns", "p") {
		t.Error("pod deleted")
	}
	if got := h.events(); len(got) != 0 {
		t.Errorf("events later = %q", got)
	}
}

func TestToleratingForeverCancels(t *testing.T) {
	n := node("n1", taint(v1.TaintNodeNotReady, v1.TaintEffectNoExecute, ptr.To(at(0))))
	p := pod("p", "n1", tolerate(v1.TaintNodeNotReady, ptr.To[int64](300)))
	h := newHarness(t, at(10*time.Second), n, p)
	h.sync("ns/p")
	p = p.DeepCopy()
	p.Spec.Tolerations = []v1.Toleration{tolerate(v1.TaintNodeNotReady, nil)}
	h.setPod(p)
	h.sync("ns/p")
	h.clock.Step(time.Hour)
	h.sync("ns/p")
	if w := h.writes(); len(w) != 0 {
		t.Errorf("pod writes = %v", w)
	}
	if got := h.events(); !slices.Equal(got, []string{marking, cancelling}) {
		t.Errorf("events = %q", got)
	}
}

func TestPodBeingDeletedIsLeftAlone(t *testing.T) {
	n := node("n1", taint(v1.TaintNodeUnreachable, v1.TaintEffectNoExecute, nil))

	// Seen terminating in the cache.
	p := pod("p", "n1")
	p.DeletionTimestamp = ptr.To(metav1.NewTime(at(0)))
	h := newHarness(t, at(0), n, p)
	h.sync("ns/p")
	if a := h.client.Actions(); len(a) != 0 {
		t.Errorf("API requests for a pod already terminating: %v", a)
	}

	// Terminating only in the API: the cache is behind.
	h = newHarness(t, at(0), n, pod("p", "n1"))
	live := pod("p", "n1")
	live.DeletionTimestamp = ptr.To(metav1.NewTime(at(0)))
	if err := h.client.Tracker().Update(v1.SchemeGroupVersion.WithResource("pods"), live, "ns"); err != nil {
		t.Fatal(err)
	}
	h.sync("ns/p")
	if w := h.writes(); len(w) != 0 {
		t.Errorf("pod writes = %v", w)
	}
}

func TestGoneAndUnboundPodsAreIgnored(t *testing.T) {
	n := node("n1", taint(v1.TaintNodeUnreachable, v1.TaintEffectNoExecute, nil))
	h := newHarness(t, at(0), n, pod("unbound", ""))
	h.sync("ns/unbound")
	h.sync("ns/gone")
	if w := h.writes(); len(w) != 0 {
		t.Errorf("pod writes = %v", w)
	}
}

func TestNodeTaintChangesRequeueItsPods(t *testing.T) {
	h := newHarness(t, at(0), node("n1"), node("n2"), pod("a", "n1"), pod("b", "n1"), pod("c", "n2"), pod("unbound", ""))
	drain := func() []string {
		var keys []string
		for h.c.queue.Len() > 0 {
			k, _ := h.c.queue.Get()
			h.c.queue.Done(k)
			keys = append(keys, k)
		}
		slices.Sort(keys)
		return keys
	}

	h.c.nodeChanged(node("n1"), node("n1", taint("k", v1.TaintEffectNoSchedule, nil)))
	if got := drain(); len(got) != 0 {
		t.Errorf("a NoSchedule taint requeued %v", got)
	}
	h.c.nodeChanged(node("n1"), node("n1", taint("k", v1.TaintEffectNoExecute, nil)))
	if got, want := drain(), []string{"ns/a", "ns/b"}; !slices.Equal(got, want) {
		t.Errorf("a new NoExecute taint requeued %v, want %v", got, want)
	}
	same := node("n1", taint("k", v1.TaintEffectNoExecute, nil))
	h.c.nodeChanged(same, same.DeepCopy())
	if got := drain(); len(got) != 0 {
		t.Errorf("an unchanged NoExecute taint requeued %v", got)
	}
	h.c.nodeChanged(nil, node("n2", taint("k", v1.TaintEffectNoExecute, nil)))
	if got, want := drain(), []string{"ns/c"}; !slices.Equal(got, want) {
		t.Errorf("a tainted new node requeued %v, want %v", got, want)
	}
	h.c.nodeDeleted(cache.DeletedFinalStateUnknown{Key: "n1", Obj: node("n1")})
	if got, want := drain(), []string{"ns/a", "ns/b"}; !slices.Equal(got, want) {
		t.Errorf("a node deletion requeued %v, want %v", got, want)
	}
	h.c.podChanged(pod("unbound", ""))
	if got := drain(); len(got) != 0 {
		t.Errorf("an unbound pod was queued: %v", got)
	}
}

// Another controller may register the nodeName index on the shared pod
// informer first.
func TestNodeNameIndexMayAlreadyExist(t *testing.T) {
	factory := informers.NewSharedInformerFactory(fake.NewSimpleClientset(), 0)
	if err := controllerutil.AddPodNodeIndex(factory.Core().V1().Pods().Informer()); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := New(fake.NewSimpleClientset(), factory, nil, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
			t.Fatal(err)
		}
	}
}

func TestDisruptionPatch(t *testing.T) {
	p := pod("p", "n1")
	var got struct {
		Metadata struct{ UID string }
		Status   struct{ Conditions []v1.PodCondition }
	}
	if err := json.Unmarshal(disruptionPatch(p, at(0)), &got); err != nil {
		t.Fatal(err)
	}
	if got.Metadata.UID != "uid-p" || len(got.Status.Conditions) != 3 || got.Status.Conditions[2].Type != v1.DisruptionTarget ||
		!got.Status.Conditions[2].LastTransitionTime.Time.Equal(at(0)) {
		t.Errorf("patch = %+v", got)
	}
	p.Status.Conditions = append(p.Status.Conditions, got.Status.Conditions[2])
	if b := disruptionPatch(p, at(time.Hour)); b != nil {
		t.Errorf("patch for a pod already marked = %s", b)
	}
}
