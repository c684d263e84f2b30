// Package podgc force-deletes pods that nothing else would ever remove, as
// upstream's pod garbage collector. A pod is normally deleted by its kubelet
// once it has stopped; these are the cases where that cannot happen or is
// not wanted:
//
//   - terminated pods beyond a cluster-wide threshold, so finished pods do
//     not accumulate in storage without bound;
//   - terminating pods on a node an operator has declared out of service,
//     whose kubelet is known not to come back to confirm the deletion;
//   - pods bound to a node that no longer exists, which no kubelet will
//     ever finish;
//   - terminating pods that were never scheduled, so no kubelet owns them.
//
// A node missing from the informer is quarantined before its pods go and
// then checked with a live GET: the node informer may simply lag behind the
// pod informer, and deleting the pods of a live node would kill running
// workloads.
package podgc

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	corev1apply "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"github.com/orca-project/orca/internal/controller/controllerutil"
)

const (
	// gcCheckPeriod is upstream's: cheap enough to list from the cache this
	// often, and slow enough that a pod a kubelet is about to clean up
	// usually goes on its own.
	gcCheckPeriod = 20 * time.Second
	// quarantineTime is how long a node may be missing from the informer
	// before it is looked up live; it absorbs informer lag.
	quarantineTime = 40 * time.Second
	// fieldManager owns only the phase and the DisruptionTarget condition
	// this controller applies, so it never needs to read them back.
	fieldManager = "PodGC"

	// Deletion reasons, named as upstream's metric labels so logs can be
	// compared across the two.
	reasonTerminated   = "terminated"
	reasonOutOfService = "out-of-service"
	reasonOrphaned     = "orphaned"
	reasonUnscheduled  = "unscheduled"

	// evictedReason is what the kubelet's eviction manager puts in the
	// status of a pod it evicted.
	evictedReason = "Evicted"
)

// Controller garbage-collects pods in periodic passes over the informers.
type Controller struct {
	client     kubernetes.Interface
	podLister  corelisters.PodLister
	nodeLister corelisters.NodeLister
	synced     []cache.InformerSynced
	// nodeQueue holds names of nodes missing from the informer until their
	// quarantine has passed.
	nodeQueue workqueue.TypedDelayingInterface[string]

	terminatedPodThreshold int
	gcCheckPeriod          time.Duration
	quarantineTime         time.Duration
	clock                  clock.WithTicker
	log                    *slog.Logger
}

// New builds the controller over the shared pod and node informers. A
// terminatedPodThreshold of zero or less keeps every terminated pod.
func New(client kubernetes.Interface, factory informers.SharedInformerFactory, terminatedPodThreshold int, metrics workqueue.MetricsProvider, log *slog.Logger) (*Controller, error) {
	return newController(client, factory, terminatedPodThreshold, metrics, log, clock.RealClock{})
}

func newController(client kubernetes.Interface, factory informers.SharedInformerFactory, terminatedPodThreshold int, metrics workqueue.MetricsProvider, log *slog.Logger, clk clock.WithTicker) (*Controller, error) {
	if client == nil || factory == nil || log == nil {
		return nil, fmt.Errorf("pod-garbage-collector: client, informer factory and logger are required")
	}
	pods := factory.Core().V1().Pods()
	nodes := factory.Core().V1().Nodes()
	return &Controller{
		client:     client,
		podLister:  pods.Lister(),
		nodeLister: nodes.Lister(),
		synced:     []cache.InformerSynced{pods.Informer().HasSynced, nodes.Informer().HasSynced},
		nodeQueue: workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[string]{
			Name: "orphaned_pods_nodes", MetricsProvider: metrics, Clock: clk,
		}),
		terminatedPodThreshold: terminatedPodThreshold,
		gcCheckPeriod:          gcCheckPeriod,
		quarantineTime:         quarantineTime,
		clock:                  clk,
		log:                    log.With("controller", "pod-garbage-collector"),
	}, nil
}

// Name names the controller.
func (c *Controller) Name() string { return "pod-garbage-collector" }

// Run makes a pass every gc period until ctx ends. Passes never overlap, so
// a pod is not deleted twice at once; workers bounds how many node lookups
// and pod deletions one pass has in flight.
func (c *Controller) Run(ctx context.Context, workers int) error {
	// The node queue is a delaying queue drained by each pass, not a
	// rate-limited one with workers of its own.
	defer c.nodeQueue.ShutDown()
	return controllerutil.Loop{
		Name: "pod-garbage-collector", Synced: c.synced,
		Alongside: []func(context.Context){func(ctx context.Context) { c.passes(ctx, max(workers, 1)) }},
	}.Run(ctx)
}

// passes runs gc, then again a period after each pass ends, as upstream's
// wait.Until, so that a slow pass is not followed by another at once.
func (c *Controller) passes(ctx context.Context, workers int) {
	c.log.Info("starting", "terminatedPodThreshold", c.terminatedPodThreshold, "period", c.gcCheckPeriod)
	for {
		c.gc(ctx, workers)
		t := c.clock.NewTimer(c.gcCheckPeriod)
		select {
		case <-ctx.Done():
			t.Stop()
			c.log.Info("stopping")
			return
		case <-t.C():
		}
	}
}

// gc is one pass, in upstream's order.
func (c *Controller) gc(ctx context.Context, workers int) {
	pods, err := c.podLister.List(labels.Everything())
	if err != nil {
		c.log.Error("list pods", "err", err)
		return
	}
	nodes, err := c.nodeLister.List(labels.Everything())
	if err != nil {
		c.log.Error("list nodes", "err", err)
		return
	}
	if c.terminatedPodThreshold > 0 {
		if excess := terminatedExcess(pods, c.terminatedPodThreshold); len(excess) > 0 {
			c.log.Info("terminated pods over threshold", "count", len(excess), "threshold", c.terminatedPodThreshold)
			c.deleteAll(ctx, workers, excess, nil, reasonTerminated)
		}
	}
	c.deleteAll(ctx, workers, terminatingOutOfService(pods, nodes), nil, reasonOutOfService)
	c.gcOrphaned(ctx, workers, pods, nodes)
	c.deleteAll(ctx, workers, unscheduledTerminating(pods), nil, reasonUnscheduled)
}

// gcOrphaned quarantines the nodes pods name but the informer lacks, and
// deletes the pods of those whose quarantine is over and that a live GET
// confirms gone.
func (c *Controller) gcOrphaned(ctx context.Context, workers int, pods []*v1.Pod, nodes []*v1.Node) {
	existing := nodeNames(nodes)
	for _, name := range missingNodes(pods, existing) {
		// A name already waiting keeps its earlier deadline.
		c.nodeQueue.AddAfter(name, c.quarantineTime)
	}
	gone := c.discoverDeletedNodes(ctx, workers, existing)
	if gone.Len() == 0 {
		return
	}
	cond := &v1.PodCondition{
		Type:    v1.DisruptionTarget,
		Status:  v1.ConditionTrue,
		Reason:  "DeletionByPodGC",
		Message: "PodGC: node no longer exists",
	}
	c.deleteAll(ctx, workers, podsOnNodes(pods, gone), cond, reasonOrphaned)
}

// discoverDeletedNodes takes every node whose quarantine is over and keeps
// those the API server no longer has. A node that failed to look up is
// dropped: if its pods are still there, the next pass quarantines it again.
func (c *Controller) discoverDeletedNodes(ctx context.Context, workers int, existing sets.Set[string]) sets.Set[string] {
	// Only the pass takes from the queue, so Get cannot block here.
	var due []string
	for c.nodeQueue.Len() > 0 {
		name, quit := c.nodeQueue.Get()
		if quit {
			break
		}
		due = append(due, name)
	}
	gone := make([]bool, len(due))
	workqueue.ParallelizeUntil(ctx, workers, len(due), func(i int) {
		if existing.Has(due[i]) {
			return
		}
		_, err := c.client.CoreV1().Nodes().Get(ctx, due[i], metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			gone[i] = true
		case err != nil:
			c.log.Warn("get quarantined node", "node", due[i], "err", err)
		}
	})
	out := sets.New[string]()
	for i, name := range due {
		if gone[i] {
			out.Insert(name)
		}
		c.nodeQueue.Done(name)
	}
	return out
}

// deleteAll marks pods Failed and deletes them, workers at a time. A
// failure is logged and left to the next pass, which will select the pod
// again if it still qualifies.
func (c *Controller) deleteAll(ctx context.Context, workers int, pods []*v1.Pod, cond *v1.PodCondition, reason string) {
	workqueue.ParallelizeUntil(ctx, workers, len(pods), func(i int) {
		if err := c.markFailedAndDelete(ctx, pods[i], cond, reason); err != nil {
			c.log.Warn("force-delete pod", "pod", podKey(pods[i]), "node", pods[i].Spec.NodeName, "reason", reason, "err", err)
		}
	})
}

// markFailedAndDelete is upstream's markFailedAndDeletePodWithCondition.
// The phase goes to Failed first because an orphaned pod has no kubelet
// left to move it out of Running, and whoever watches the pod (the Job
// controller, for one) must see how it ended before it disappears.
func (c *Controller) markFailedAndDelete(ctx context.Context, pod *v1.Pod, cond *v1.PodCondition, reason string) error {
	key := podKey(pod)
	if ac := statusApply(pod, cond, metav1.NewTime(c.clock.Now())); ac != nil {
		_, err := c.client.CoreV1().Pods(pod.Namespace).ApplyStatus(ctx, ac, metav1.ApplyOptions{FieldManager: fieldManager, Force: true})
		switch {
		case apierrors.IsNotFound(err):
			c.log.Debug("pod already gone", "pod", key, "reason", reason)
			return nil
		case apierrors.IsConflict(err):
			// The UID in the applied configuration no longer matches: the
			// name now belongs to another pod, which the next pass judges.
			c.log.Debug("pod replaced before it was marked failed", "pod", key, "reason", reason)
			return nil
		case err != nil:
			return fmt.Errorf("mark pod %s failed: %w", key, err)
		}
	}
	opts := metav1.NewDeleteOptions(0)
	if pod.UID != "" {
		opts.Preconditions = metav1.NewUIDPreconditions(string(pod.UID))
	}
	err := c.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, *opts)
	switch {
	case apierrors.IsNotFound(err):
		c.log.Debug("pod already gone", "pod", key, "reason", reason)
		return nil
	case apierrors.IsConflict(err):
		c.log.Debug("pod replaced before it was deleted", "pod", key, "reason", reason)
		return nil
	case err != nil:
		return fmt.Errorf("delete pod %s: %w", key, err)
	}
	c.log.Info("force-deleted pod", "pod", key, "node", pod.Spec.NodeName, "reason", reason)
	return nil
}

// statusApply is the pods/status apply that precedes a force deletion, or
// nil when there is nothing to apply: a pod already terminal keeps its
// phase, since rewriting Succeeded as Failed would lie about how it ended,
// but still gets the condition saying why it went.
func statusApply(pod *v1.Pod, cond *v1.PodCondition, now metav1.Time) *corev1apply.PodApplyConfiguration {
	terminal := isTerminated(pod)
	if terminal && cond == nil {
		return nil
	}
	status := corev1apply.PodStatus()
	if !terminal {
		status.WithPhase(v1.PodFailed)
		if pod.Generation != 0 {
			status.WithObservedGeneration(pod.Generation)
		}
	}
	if cond != nil {
		// As upstream's UpdatePodCondition: the transition time moves only
		// when the condition's status does.
		since := now
		for _, old := range pod.Status.Conditions {
			if old.Type == cond.Type && old.Status == cond.Status && !old.LastTransitionTime.IsZero() {
				since = old.LastTransitionTime
			}
		}
		ac := corev1apply.PodCondition().
			WithType(cond.Type).
			WithStatus(cond.Status).
			WithReason(cond.Reason).
			WithMessage(cond.Message).
			WithLastTransitionTime(since)
		if pod.Generation != 0 {
			ac.WithObservedGeneration(pod.Generation)
		}
		status.WithConditions(ac)
	}
	out := corev1apply.Pod(pod.Name, pod.Namespace).WithStatus(status)
	if pod.UID != "" {
		// The UID makes the apply conditional: a pod recreated under the
		// same name is refused with a conflict instead of being failed.
		out.WithUID(pod.UID)
	}
	return out
}

// isTerminated is a pod whose containers will not run again.
func isTerminated(pod *v1.Pod) bool {
	return pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed
}

// isEvicted is a pod the kubelet's eviction manager stopped.
func isEvicted(pod *v1.Pod) bool {
	return pod.Status.Phase == v1.PodFailed && pod.Status.Reason == evictedReason
}

// terminatedExcess is the terminated pods beyond threshold, in deletion
// order; none when threshold is zero or less, which disables the limit.
func terminatedExcess(pods []*v1.Pod, threshold int) []*v1.Pod {
	if threshold <= 0 {
		return nil
	}
	var terminated []*v1.Pod
	for _, p := range pods {
		if isTerminated(p) {
			terminated = append(terminated, p)
		}
	}
	n := len(terminated) - threshold
	if n <= 0 {
		return nil
	}
	slices.SortFunc(terminated, byEvictionAndCreation)
	return terminated[:n]
}

// byEvictionAndCreation orders evicted pods first, as upstream: they were
// stopped by the node, not finished by their owner, so they carry the least
// information a controller or user may still want; then oldest first.
func byEvictionAndCreation(a, b *v1.Pod) int {
	if ea, eb := isEvicted(a), isEvicted(b); ea != eb {
		if ea {
			return -1
		}
		return 1
	}
	if d := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); d != 0 {
		return d
	}
	return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Namespace, b.Namespace))
}

// terminatingOutOfService is the terminating pods on nodes that are not
// Ready and carry the out-of-service taint. The taint is an operator's
// statement that the node is down for good, so the kubelet's confirmation
// will never come. As upstream, the taint is matched by key only.
func terminatingOutOfService(pods []*v1.Pod, nodes []*v1.Node) []*v1.Pod {
	outOfService := sets.New[string]()
	for _, n := range nodes {
		if !nodeReady(n) && hasTaintKey(n, v1.TaintNodeOutOfService) {
			outOfService.Insert(n.Name)
		}
	}
	var out []*v1.Pod
	for _, p := range pods {
		if p.DeletionTimestamp != nil && p.Spec.NodeName != "" && outOfService.Has(p.Spec.NodeName) {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, byEvictionAndCreation)
	return out
}

// nodeReady is a node whose Ready condition is True; a node that has not
// reported one is not ready.
func nodeReady(n *v1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == v1.NodeReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

func hasTaintKey(n *v1.Node, key string) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == key {
			return true
		}
	}
	return false
}

func nodeNames(nodes []*v1.Node) sets.Set[string] {
	out := sets.New[string]()
	for _, n := range nodes {
		out.Insert(n.Name)
	}
	return out
}

// missingNodes is the sorted names of nodes pods are bound to that are
// not among existing.
func missingNodes(pods []*v1.Pod, existing sets.Set[string]) []string {
	missing := sets.New[string]()
	for _, p := range pods {
		if p.Spec.NodeName != "" && !existing.Has(p.Spec.NodeName) {
			missing.Insert(p.Spec.NodeName)
		}
	}
	return sets.List(missing)
}

// podsOnNodes is the pods bound to one of nodes.
func podsOnNodes(pods []*v1.Pod, nodes sets.Set[string]) []*v1.Pod {
	var out []*v1.Pod
	for _, p := range pods {
		if p.Spec.NodeName != "" && nodes.Has(p.Spec.NodeName) {
			out = append(out, p)
		}
	}
	return out
}

// unscheduledTerminating is the terminating pods bound to no node: no
// kubelet will confirm their deletion, so without this they would stay
// terminating forever.
func unscheduledTerminating(pods []*v1.Pod) []*v1.Pod {
	var out []*v1.Pod
	for _, p := range pods {
		if p.DeletionTimestamp != nil && p.Spec.NodeName == "" {
			out = append(out, p)
		}
	}
	return out
}

func podKey(p *v1.Pod) string { return p.Namespace + "/" + p.Name }
