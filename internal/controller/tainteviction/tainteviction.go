// Package tainteviction deletes pods from nodes with NoExecute taints they
// do not tolerate, as upstream's taint-eviction-controller: a pod that
// tolerates every NoExecute taint of its node stays, forever when none of
// the matching tolerations has tolerationSeconds, otherwise until the
// smallest tolerationSeconds has run out; a pod that does not tolerate
// one goes at once. Before deleting, the pod gets upstream's
// DisruptionTarget condition, so that controllers (a Job's pod failure
// policy) can tell an eviction from a crash.
//
// Upstream keeps a timer per pod; this is a level-triggered loop instead,
// so each sync works the deadline out afresh from the node and the pod,
// and a pod not yet due is requeued for exactly the time it has left. To
// survive a restart the toleration clock starts at the latest TimeAdded
// of the node's NoExecute taints (the node lifecycle controller sets it),
// but never before the pod's PodScheduled condition last changed: a pod
// placed on an already tainted node gets its full tolerationSeconds. A
// taint without TimeAdded (added by hand) gives no such anchor; then the
// clock starts when this controller first saw the pod on the tainted
// node, kept in memory as upstream does, so a restart starts it again.
package tainteviction

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/orca-project/orca/internal/controller/controllerutil"
)

const (
	name = "taint-eviction-controller"

	eventReason   = "TaintManagerEviction"
	conditionWhy  = "DeletionByTaintManager"
	conditionText = "Taint manager: deleting due to NoExecute taint"
)

// Controller evicts pods from NoExecute-tainted nodes. Keys are pod
// namespace/name.
type Controller struct {
	client     kubernetes.Interface
	podLister  corelisters.PodLister
	nodeLister corelisters.NodeLister
	pods       cache.Indexer
	synced     []cache.InformerSynced
	queue      workqueue.TypedRateLimitingInterface[string]
	events     record.EventBroadcaster
	recorder   record.EventRecorder
	clock      clock.WithTicker
	log        *slog.Logger

	mu sync.Mutex
	// tracked holds what a level-triggered loop cannot read back from the
	// API: when a pod was first seen tainted, and whether its eviction was
	// announced, so that each episode gets one "Marking" event and, when
	// called off, one "Cancelling" event.
	tracked map[string]*podState
}

// podState is what the controller remembers about one pod.
type podState struct {
	// uid tells a recreated pod of the same name from the one remembered.
	uid types.UID
	// seen is when the pod was first seen on its node while the node had
	// NoExecute taints; the toleration clock falls back to it.
	seen time.Time
	// scheduled is set once the eviction was announced and not called off.
	scheduled bool
}

// New builds the controller over the shared informers, on the real clock.
func New(client kubernetes.Interface, factory informers.SharedInformerFactory, metrics workqueue.MetricsProvider, log *slog.Logger) (*Controller, error) {
	events := record.NewBroadcaster()
	recorder := events.NewRecorder(scheme.Scheme, v1.EventSource{Component: name})
	return newController(client, factory, metrics, log, clock.RealClock{}, events, recorder)
}

func newController(client kubernetes.Interface, factory informers.SharedInformerFactory, metrics workqueue.MetricsProvider, log *slog.Logger,
	clk clock.WithTicker, events record.EventBroadcaster, recorder record.EventRecorder) (*Controller, error) {
	podInf := factory.Core().V1().Pods()
	nodeInf := factory.Core().V1().Nodes()
	if err := controllerutil.AddPodNodeIndex(podInf.Informer()); err != nil {
		return nil, fmt.Errorf("%s: pod index: %w", name, err)
	}
	c := &Controller{
		client:     client,
		podLister:  podInf.Lister(),
		nodeLister: nodeInf.Lister(),
		pods:       podInf.Informer().GetIndexer(),
		synced:     []cache.InformerSynced{podInf.Informer().HasSynced, nodeInf.Informer().HasSynced},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "noexec_taint_pod", MetricsProvider: metrics, Clock: clk}),
		events:   events,
		recorder: recorder,
		clock:    clk,
		log:      log.With("controller", name),
		tracked:  map[string]*podState{},
	}
	if _, err := podInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.podChanged,
		UpdateFunc: func(_, cur any) { c.podChanged(cur) },
		// Only to drop what is remembered about the pod.
		DeleteFunc: c.podDeleted,
	}); err != nil {
		return nil, fmt.Errorf("%s: pod handler: %w", name, err)
	}
	if _, err := nodeInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.nodeChanged(nil, obj) },
		UpdateFunc: c.nodeChanged,
		DeleteFunc: c.nodeDeleted,
	}); err != nil {
		return nil, fmt.Errorf("%s: node handler: %w", name, err)
	}
	return c, nil
}

// Name names the controller.
func (c *Controller) Name() string { return name }

// Run evicts pods until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) error {
	return controllerutil.Loop{
		Name: name, Events: c.events, Client: c.client, Synced: c.synced,
		Workers: []controllerutil.Workers{controllerutil.NewWorkers(workers, c.queue, c.sync, c.log, "pod")},
	}.Run(ctx)
}

func (c *Controller) podChanged(obj any) {
	p, ok := obj.(*v1.Pod)
	if !ok || p.Spec.NodeName == "" {
		return
	}
	if key, err := cache.MetaNamespaceKeyFunc(p); err == nil {
		c.queue.Add(key)
	}
}

func (c *Controller) podDeleted(obj any) {
	if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
		c.queue.Add(key)
	}
}

// nodeChanged requeues the node's pods when its NoExecute taints changed;
// other node updates (heartbeats, mostly) cannot change any decision.
func (c *Controller) nodeChanged(old, cur any) {
	n, ok := cur.(*v1.Node)
	if !ok {
		return
	}
	var before []v1.Taint
	if o, ok := old.(*v1.Node); ok {
		before = noExecute(o.Spec.Taints)
	}
	if apiequality.Semantic.DeepEqual(before, noExecute(n.Spec.Taints)) {
		return
	}
	c.enqueueNode(n.Name)
}

func (c *Controller) nodeDeleted(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	if n, ok := obj.(*v1.Node); ok {
		c.enqueueNode(n.Name)
	}
}

func (c *Controller) enqueueNode(node string) {
	objs, err := c.pods.ByIndex(controllerutil.PodNodeIndex, node)
	if err != nil {
		c.log.Error("list pods on node", "node", node, "err", err)
		return
	}
	for _, obj := range objs {
		if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
			c.queue.Add(key)
		}
	}
}

// noExecute is the taints that evict; the others only steer scheduling.
func noExecute(taints []v1.Taint) []v1.Taint {
	var out []v1.Taint
	for _, t := range taints {
		if t.Effect == v1.TaintEffectNoExecute {
			out = append(out, t)
		}
	}
	return out
}

// maxSeconds keeps start + tolerationSeconds from overflowing a Duration.
const maxSeconds = math.MaxInt64 / int64(time.Second)

// decide is upstream's processPodOnNode as a pure function: evict=false
// calls any eviction off; otherwise the pod goes at evictAt, which at or
// before now means at once. Each taint counts the first toleration that
// matches it, as upstream's GetMatchingTolerations.
func decide(taints []v1.Taint, tolerations []v1.Toleration, start time.Time, now time.Time) (evictAt time.Time, evict bool) {
	taints = noExecute(taints)
	if len(taints) == 0 {
		return time.Time{}, false
	}
	minSeconds, bounded := int64(0), false
	for i := range taints {
		tol := matching(&taints[i], tolerations)
		if tol == nil {
			return now, true
		}
		if tol.TolerationSeconds == nil {
			continue
		}
		if s := *tol.TolerationSeconds; !bounded || s < minSeconds {
			minSeconds, bounded = s, true
		}
	}
	switch {
	case !bounded:
		return time.Time{}, false
	case minSeconds <= 0:
		return now, true
	}
	return start.Add(time.Duration(min(minSeconds, maxSeconds)) * time.Second), true
}

func matching(taint *v1.Taint, tolerations []v1.Toleration) *v1.Toleration {
	for i := range tolerations {
		// Comparison operators (Lt, Gt) are an alpha feature, off as in
		// the scheduler's TaintToleration plugin.
		if tolerations[i].ToleratesTaint(klog.Background(), taint, false) {
			return &tolerations[i]
		}
	}
	return nil
}

// startOf is when the toleration clock started: the latest TimeAdded of
// the NoExecute taints, or seen when none has one, and not before the pod
// was scheduled (zero: unknown).
func startOf(taints []v1.Taint, scheduled time.Time, seen time.Time) time.Time {
	var start time.Time
	for _, t := range noExecute(taints) {
		if t.TimeAdded != nil && t.TimeAdded.Time.After(start) {
			start = t.TimeAdded.Time
		}
	}
	if start.IsZero() {
		start = seen
	}
	if scheduled.After(start) {
		start = scheduled
	}
	return start
}

func scheduledAt(p *v1.Pod) time.Time {
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodScheduled {
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{}
}

func (c *Controller) sync(ctx context.Context, key string) error {
	ns, podName, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	p, err := c.podLister.Pods(ns).Get(podName)
	if apierrors.IsNotFound(err) {
		c.forget(key)
		return nil
	}
	if err != nil {
		return err
	}
	// A pod already going is upstream's to leave alone: its grace period
	// is its own, whoever started it.
	if p.Spec.NodeName == "" || p.DeletionTimestamp != nil {
		c.forget(key)
		return nil
	}
	taints, err := c.nodeTaints(p.Spec.NodeName)
	if err != nil {
		return err
	}
	if len(taints) == 0 {
		c.cancel(key, p)
		return nil
	}
	now := c.clock.Now()
	evictAt, evict := decide(taints, p.Spec.Tolerations, startOf(taints, scheduledAt(p), c.seen(key, p.UID, now)), now)
	switch {
	case !evict:
		c.cancel(key, p)
		return nil
	case evictAt.After(now):
		c.announce(key, p)
		c.queue.AddAfter(key, evictAt.Sub(now))
		return nil
	}
	return c.evict(ctx, key, p, taints, now)
}

// nodeTaints is the node's NoExecute taints; a deleted node has none,
// and its pods are the pod garbage collector's.
func (c *Controller) nodeTaints(node string) ([]v1.Taint, error) {
	n, err := c.nodeLister.Get(node)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return noExecute(n.Spec.Taints), nil
}

// evict is upstream's addConditionAndDeletePod.
func (c *Controller) evict(ctx context.Context, key string, cached *v1.Pod, taints []v1.Taint, now time.Time) error {
	pods := c.client.CoreV1().Pods(cached.Namespace)
	// The cache may be behind a toleration just added or a deletion just
	// started: decide again on the live pod before deleting it.
	p, err := pods.Get(ctx, cached.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get pod %s: %w", key, err)
	}
	if p.UID != cached.UID || p.DeletionTimestamp != nil {
		return nil
	}
	if at, evict := decide(taints, p.Spec.Tolerations, startOf(taints, scheduledAt(p), c.seen(key, p.UID, now)), now); !evict || at.After(now) {
		return nil
	}
	c.announce(key, p)
	if patch := disruptionPatch(p, now); patch != nil {
		_, err := pods.Patch(ctx, p.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("mark pod %s as a disruption target: %w", key, err)
		}
	}
	err = pods.Delete(ctx, p.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &p.UID}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete pod %s: %w", key, err)
	}
	c.log.Info("evicted pod", "pod", key, "node", p.Spec.NodeName)
	return nil
}

// disruptionPatch is the strategic merge patch of pods/status giving p
// the DisruptionTarget condition, or nil when it already has it. The
// whole list goes, merged by type, so the other conditions stay; the uid
// makes the patch fail on a pod recreated under the same name.
func disruptionPatch(p *v1.Pod, now time.Time) []byte {
	cond := v1.PodCondition{
		Type:               v1.DisruptionTarget,
		Status:             v1.ConditionTrue,
		Reason:             conditionWhy,
		Message:            conditionText,
		LastTransitionTime: metav1.NewTime(now),
		ObservedGeneration: p.Generation,
	}
	conds := append([]v1.PodCondition(nil), p.Status.Conditions...)
	found := false
	for i, old := range conds {
		if old.Type != v1.DisruptionTarget {
			continue
		}
		if old.Status == cond.Status && old.Reason == cond.Reason && old.Message == cond.Message {
			return nil
		}
		if old.Status == cond.Status {
			cond.LastTransitionTime = old.LastTransitionTime
		}
		conds[i], found = cond, true
	}
	if !found {
		conds = append(conds, cond)
	}
	b, _ := json.Marshal(map[string]any{
		"metadata": map[string]any{"uid": p.UID},
		"status":   map[string]any{"conditions": conds},
	})
	return b
}

// seen is when the pod was first seen tainted, now if just now.
func (c *Controller) seen(key string, uid types.UID, now time.Time) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.tracked[key]
	if st == nil || st.uid != uid {
		st = &podState{uid: uid, seen: now}
		c.tracked[key] = st
	}
	return st.seen
}

// announce sends the "Marking" event the first time an eviction of p is
// scheduled or done.
func (c *Controller) announce(key string, p *v1.Pod) {
	c.mu.Lock()
	st := c.tracked[key]
	if st == nil || st.uid != p.UID {
		st = &podState{uid: p.UID, seen: c.clock.Now()}
		c.tracked[key] = st
	}
	first := !st.scheduled
	st.scheduled = true
	c.mu.Unlock()
	if first {
		c.log.Info("marking pod for deletion", "pod", key, "node", p.Spec.NodeName)
		c.recorder.Eventf(p, v1.EventTypeNormal, eventReason, "Marking for deletion Pod %s", key)
	}
}

// cancel ends the pod's episode, with the "Cancelling" event when an
// eviction had been announced; a later taint starts the clock afresh.
func (c *Controller) cancel(key string, p *v1.Pod) {
	c.mu.Lock()
	st := c.tracked[key]
	delete(c.tracked, key)
	c.mu.Unlock()
	if st != nil && st.uid == p.UID && st.scheduled {
		c.log.Info("cancelling deletion of pod", "pod", key, "node", p.Spec.NodeName)
		c.recorder.Eventf(p, v1.EventTypeNormal, eventReason, "Cancelling deletion of Pod %s", key)
	}
}

// forget drops the pod without a word: it is gone or going anyway.
func (c *Controller) forget(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.tracked, key)
}
