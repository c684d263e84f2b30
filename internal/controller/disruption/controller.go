// Package disruption keeps the status of PodDisruptionBudgets, as
// upstream's disruption controller: for each budget, the pods its
// selector matches, how many of them are healthy (ready, not being
// deleted, not just evicted), how many it expects (the pods, or its
// owners' scale for percentages and maxUnavailable), how many it wants
// healthy, and from that how many disruptions the eviction subresource
// may grant. Evictions the subresource recorded in disruptedPods are
// forgotten after DeletionTimeout, and the budget is requeued for then.
// It also resets DisruptionTarget conditions that no deletion followed.
//
// The arithmetic is in decide.go, pure and table-tested; this file is the
// informer and queue plumbing.
package disruption

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	corelisters "k8s.io/client-go/listers/core/v1"
	policylisters "k8s.io/client-go/listers/policy/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	"github.com/orca-project/orca/internal/controller/controllerutil"
)

// Controller reconciles budgets (keys namespace/name in queue) and pods
// with stale DisruptionTarget conditions (in podQueue).
type Controller struct {
	client   kubernetes.Interface
	pdbs     policylisters.PodDisruptionBudgetLister
	pods     corelisters.PodLister
	owners   *owners
	synced   []cache.InformerSynced
	queue    workqueue.TypedRateLimitingInterface[string]
	podQueue workqueue.TypedRateLimitingInterface[string]
	events   record.EventBroadcaster
	recorder record.EventRecorder
	log      *slog.Logger
	now      func() time.Time
}

// New builds the controller. scales, mapper and hasScale reach owners of
// kinds other than the built-in workloads.
func New(client kubernetes.Interface, factory informers.SharedInformerFactory, scales ScaleReader, mapper Mapper, hasScale ScaleSubresources, metrics workqueue.MetricsProvider, log *slog.Logger) (*Controller, error) {
	pdbInf := factory.Policy().V1().PodDisruptionBudgets()
	podInf := factory.Core().V1().Pods()
	rcInf := factory.Core().V1().ReplicationControllers()
	rsInf := factory.Apps().V1().ReplicaSets()
	dInf := factory.Apps().V1().Deployments()
	ssInf := factory.Apps().V1().StatefulSets()
	events := record.NewBroadcaster()
	c := &Controller{
		client: client,
		pdbs:   pdbInf.Lister(),
		pods:   podInf.Lister(),
		owners: &owners{
			rcs: rcInf.Lister(), rss: rsInf.Lister(), deployments: dInf.Lister(), statefulsets: ssInf.Lister(),
			mapper: mapper, scales: scales, hasScale: hasScale,
		},
		synced: []cache.InformerSynced{pdbInf.Informer().HasSynced, podInf.Informer().HasSynced, rcInf.Informer().HasSynced,
			rsInf.Informer().HasSynced, dInf.Informer().HasSynced, ssInf.Informer().HasSynced},
		queue:    controllerutil.NewQueue[string]("disruption", metrics),
		podQueue: controllerutil.NewQueue[string]("disruption_pods", metrics),
		events:   events,
		recorder: events.NewRecorder(scheme.Scheme, v1.EventSource{Component: "controllermanager"}),
		log:      log.With("controller", "disruption"),
		now:      time.Now,
	}
	if _, err := pdbInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, cur any) { c.enqueue(cur) },
		DeleteFunc: c.enqueue,
	}); err != nil {
		return nil, fmt.Errorf("disruption: budget handler: %w", err)
	}
	if _, err := podInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.podChanged,
		UpdateFunc: func(_, cur any) { c.podChanged(cur) },
		DeleteFunc: c.podChanged,
	}); err != nil {
		return nil, fmt.Errorf("disruption: pod handler: %w", err)
	}
	return c, nil
}

// Name names the controller as upstream's controller manager does.
func (c *Controller) Name() string { return "disruption" }

// Run works both queues until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) error {
	return controllerutil.Loop{
		Name: "disruption", Events: c.events, Client: c.client, Synced: c.synced,
		Workers: []controllerutil.Workers{
			controllerutil.NewWorkers(workers, c.queue, c.sync, c.log, "poddisruptionbudget"),
			controllerutil.NewWorkers(1, c.podQueue, c.syncStalePod, c.log, "pod"),
		},
	}.Run(ctx)
}

func unwrap(obj any) any {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return t.Obj
	}
	return obj
}

func (c *Controller) enqueue(obj any) {
	if key, err := cache.MetaNamespaceKeyFunc(unwrap(obj)); err == nil {
		c.queue.Add(key)
	}
}

// podChanged queues the budgets covering the pod, and the pod itself
// when it carries a DisruptionTarget condition that may go stale.
func (c *Controller) podChanged(obj any) {
	pod, ok := unwrap(obj).(*v1.Pod)
	if !ok {
		return
	}
	for _, pdb := range c.budgetsFor(pod) {
		c.enqueue(pdb)
	}
	if _, deleted := obj.(cache.DeletedFinalStateUnknown); deleted {
		return
	}
	if stale, after := StaleDisruptionTarget(pod, c.now()); stale {
		if key, err := cache.MetaNamespaceKeyFunc(pod); err == nil {
			c.podQueue.AddAfter(key, after)
		}
	}
}

func (c *Controller) budgetsFor(pod *v1.Pod) []*policyv1.PodDisruptionBudget {
	if len(pod.Labels) == 0 {
		return nil
	}
	all, err := c.pdbs.PodDisruptionBudgets(pod.Namespace).List(labels.Everything())
	if err != nil {
		return nil
	}
	var out []*policyv1.PodDisruptionBudget
	for _, pdb := range all {
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err == nil && !sel.Empty() && sel.Matches(labels.Set(pod.Labels)) {
			out = append(out, pdb)
		}
	}
	return out
}

func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	pdb, err := c.pdbs.PodDisruptionBudgets(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	err = c.trySync(ctx, key, pdb)
	if err == nil || apierrors.IsConflict(err) {
		return err
	}
	c.log.Warn("sync failed; no disruptions allowed until it succeeds", "poddisruptionbudget", key, "err", err)
	// As upstream: once the budget says it allows nothing, a failed sync
	// is safe to leave until the budget's pods change.
	return c.writeStatus(ctx, pdb, FailSafe(pdb, err))
}

func (c *Controller) trySync(ctx context.Context, key string, pdb *policyv1.PodDisruptionBudget) error {
	pods, err := c.podsOf(pdb)
	if err != nil {
		c.recorder.Eventf(pdb, v1.EventTypeWarning, "NoPods", "Failed to get pods: %v", err)
		return err
	}
	if len(pods) == 0 {
		c.recorder.Eventf(pdb, v1.EventTypeNormal, "NoPods", "No matching pods found")
	}
	var scale int32
	var unmanaged []string
	if needsScale(pdb.Spec) {
		scale, unmanaged, err = ExpectedScale(pods, c.owners.find(ctx))
	}
	var expected, desired int32
	if err == nil {
		expected, desired, err = Desired(pdb.Spec, int32(len(pods)), scale)
	}
	if err != nil {
		c.recorder.Eventf(pdb, v1.EventTypeWarning, "CalculateExpectedPodCountFailed", "Failed to calculate the number of expected pods: %v", err)
		return err
	}
	if len(unmanaged) > 0 {
		c.recorder.Eventf(pdb, v1.EventTypeWarning, "UnmanagedPods", "Pods selected by this PodDisruptionBudget (selector: %v) were found "+
			"to be unmanaged. As a result, the status of the PDB cannot be calculated correctly, which may result in undefined behavior. "+
			"To account for these pods please set \".spec.minAvailable\" "+
			"field of the PDB to an integer value.", pdb.Spec.Selector)
	}
	now := c.now()
	disrupted, recheck, overdue := DisruptedPods(pods, pdb.Status.DisruptedPods, now)
	for _, pod := range overdue {
		c.recorder.Eventf(pod, v1.EventTypeWarning, "NotDeleted", "Pod was expected by PDB %s/%s to be deleted but it wasn't", pdb.Namespace, pdb.Name)
	}
	status, changed := Status(pdb, CountHealthy(pods, disrupted, now), desired, expected, disrupted)
	if changed {
		if err := c.writeStatus(ctx, pdb, status); err != nil {
			return err
		}
	}
	if recheck != nil {
		c.queue.AddAfter(key, recheck.Sub(now))
	}
	return nil
}

func (c *Controller) podsOf(pdb *policyv1.PodDisruptionBudget) ([]*v1.Pod, error) {
	sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
	if err != nil {
		return nil, err
	}
	return c.pods.Pods(pdb.Namespace).List(sel)
}

func (c *Controller) writeStatus(ctx context.Context, pdb *policyv1.PodDisruptionBudget, status policyv1.PodDisruptionBudgetStatus) error {
	next := pdb.DeepCopy()
	next.Status = status
	_, err := c.client.PolicyV1().PodDisruptionBudgets(pdb.Namespace).UpdateStatus(ctx, next, metav1.UpdateOptions{})
	return err
}

// syncStalePod sets a stale DisruptionTarget condition to False: the
// eviction or preemption that set it did not delete the pod.
func (c *Controller) syncStalePod(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	pod, err := c.pods.Pods(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	stale, after := StaleDisruptionTarget(pod, c.now())
	if !stale {
		return nil
	}
	if after > 0 {
		c.podQueue.AddAfter(key, after)
		return nil
	}
	next := pod.DeepCopy()
	for i := range next.Status.Conditions {
		if next.Status.Conditions[i].Type == v1.DisruptionTarget {
			next.Status.Conditions[i] = v1.PodCondition{Type: v1.DisruptionTarget, Status: v1.ConditionFalse, LastTransitionTime: metav1.NewTime(c.now())}
		}
	}
	_, err = c.client.CoreV1().Pods(ns).UpdateStatus(ctx, next, metav1.UpdateOptions{})
	return err
}
