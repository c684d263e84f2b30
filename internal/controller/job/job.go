// Package job runs Jobs to completion, as upstream's job controller: it
// keeps up to parallelism pods running until completions succeed (or, with
// no completions, until one succeeds and the rest end), in NonIndexed or
// Indexed mode; replaces failed pods with exponential back-off until the
// back-off limit; applies the pod failure policy, the active deadline and
// suspension; and counts every finished pod exactly once through the
// job-tracking finalizer and status.uncountedTerminatedPods.
package job

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	batchlisters "k8s.io/client-go/listers/batch/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"github.com/orca-project/orca/internal/controller/controllerutil"
)

var controllerKind = batchv1.SchemeGroupVersion.WithKind("Job")

// orphanPrefix marks queue keys of pods whose Job is gone but whose
// tracking finalizer is still on; nobody else would ever remove it.
const orphanPrefix = "orphan-pod/"

// managedBy is the spec.managedBy value (or its absence) this controller
// honours; Jobs managed elsewhere are left alone, as upstream.
const managedBy = "kubernetes.io/job-controller"

// Controller reconciles Jobs. Keys are namespace/name.
type Controller struct {
	client    kubernetes.Interface
	jobLister batchlisters.JobLister
	podLister corelisters.PodLister
	// podIndex finds a Job's pods by controller (PodControllerIndex).
	podIndex cache.Indexer
	synced   []cache.InformerSynced
	queue    workqueue.TypedRateLimitingInterface[string]

	expectations *controllerutil.Expectations
	podControl   controllerutil.PodControl
	events       record.EventBroadcaster
	recorder     record.EventRecorder
	clock        clock.PassiveClock
	log          *slog.Logger
}

// New builds the controller over the shared informers.
func New(client kubernetes.Interface, factory informers.SharedInformerFactory, metrics workqueue.MetricsProvider, log *slog.Logger) (*Controller, error) {
	jobInf := factory.Batch().V1().Jobs()
	podInf := factory.Core().V1().Pods()
	events := record.NewBroadcaster()
	recorder := events.NewRecorder(scheme.Scheme, v1.EventSource{Component: "job-controller"})
	c := &Controller{
		client:       client,
		jobLister:    jobInf.Lister(),
		podLister:    podInf.Lister(),
		podIndex:     podInf.Informer().GetIndexer(),
		synced:       []cache.InformerSynced{jobInf.Informer().HasSynced, podInf.Informer().HasSynced},
		queue:        controllerutil.NewQueue[string]("job", metrics),
		expectations: controllerutil.NewExpectations(),
		podControl:   controllerutil.PodControl{Client: client, Recorder: recorder},
		events:       events,
		recorder:     recorder,
		clock:        clock.RealClock{},
		log:          log.With("controller", "job"),
	}
	if err := controllerutil.AddPodControllerIndex(podInf.Informer()); err != nil {
		return nil, fmt.Errorf("job: pod index: %w", err)
	}
	if _, err := jobInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, cur any) { c.enqueue(cur) },
		DeleteFunc: c.jobDeleted,
	}); err != nil {
		return nil, fmt.Errorf("job: job handler: %w", err)
	}
	if _, err := podInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.podAdded,
		UpdateFunc: c.podUpdated,
		DeleteFunc: c.podDeleted,
	}); err != nil {
		return nil, fmt.Errorf("job: pod handler: %w", err)
	}
	return c, nil
}

// Name names the controller.
func (c *Controller) Name() string { return "job" }

// Run processes Jobs until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) error {
	return controllerutil.Loop{
		Name: "job", Events: c.events, Client: c.client, Synced: c.synced,
		Workers: []controllerutil.Workers{controllerutil.NewWorkers(workers, c.queue, c.syncKey, c.log, "key")},
	}.Run(ctx)
}

// syncKey tells the orphan pods the queue carries from the Jobs.
func (c *Controller) syncKey(ctx context.Context, key string) error {
	if name, ok := strings.CutPrefix(key, orphanPrefix); ok {
		return c.syncOrphanPod(ctx, name)
	}
	return c.sync(ctx, key)
}

func (c *Controller) enqueue(obj any) {
	if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
		c.queue.Add(key)
	}
}

func (c *Controller) jobDeleted(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	j, ok := obj.(*batchv1.Job)
	if !ok {
		return
	}
	key, _ := cache.MetaNamespaceKeyFunc(j)
	c.expectations.Delete(key)
	// Its pods may still carry the tracking finalizer.
	pods, err := controllerutil.ControlledPods(c.podIndex, j, false)
	if err != nil {
		return
	}
	for _, p := range pods {
		if ref := metav1.GetControllerOf(p); ref != nil && ref.UID == j.UID && hasTrackingFinalizer(p) {
			c.queue.Add(orphanPrefix + p.Namespace + "/" + p.Name)
		}
	}
}

// resolve returns the Job a controller reference names, if it is still
// the same object.
func (c *Controller) resolve(namespace string, ref *metav1.OwnerReference) *batchv1.Job {
	if ref == nil || ref.Kind != controllerKind.Kind || ref.APIVersion != controllerKind.GroupVersion().String() {
		return nil
	}
	j, err := c.jobLister.Jobs(namespace).Get(ref.Name)
	if err != nil || j.UID != ref.UID {
		return nil
	}
	return j
}

// routePod wakes the pod's Job, or queues the pod itself when its Job is
// gone and only the finalizer is left to remove.
func (c *Controller) routePod(p *v1.Pod) (string, bool) {
	ref := metav1.GetControllerOf(p)
	if ref == nil || ref.Kind != controllerKind.Kind {
		return "", false
	}
	if j := c.resolve(p.Namespace, ref); j != nil {
		key, _ := cache.MetaNamespaceKeyFunc(j)
		c.queue.Add(key)
		return key, true
	}
	if hasTrackingFinalizer(p) {
		c.queue.Add(orphanPrefix + p.Namespace + "/" + p.Name)
	}
	return "", false
}

// enqueueAdopters wakes the Jobs whose selector matches an orphan pod, so
// that one of them adopts it, and queues the pod itself when it still
// carries the tracking finalizer: if nobody adopts it, nobody else would
// ever remove that.
func (c *Controller) enqueueAdopters(p *v1.Pod) {
	if hasTrackingFinalizer(p) {
		c.queue.Add(orphanPrefix + p.Namespace + "/" + p.Name)
	}
	if len(p.Labels) == 0 {
		return
	}
	jobs, err := c.jobLister.Jobs(p.Namespace).List(labelsEverything)
	if err != nil {
		return
	}
	for _, j := range jobs {
		sel, err := metav1.LabelSelectorAsSelector(j.Spec.Selector)
		if err != nil || sel.Empty() || !sel.Matches(labels.Set(p.Labels)) {
			continue
		}
		c.enqueue(j)
	}
}

func (c *Controller) podAdded(obj any) {
	p, ok := obj.(*v1.Pod)
	if !ok {
		return
	}
	if key, ok := c.routePod(p); ok {
		if p.DeletionTimestamp != nil {
			c.expectations.DeletionObserved(key, string(p.UID))
		} else {
			c.expectations.CreationObserved(key)
		}
		return
	}
	if metav1.GetControllerOf(p) == nil && p.DeletionTimestamp == nil {
		c.enqueueAdopters(p)
	}
}

func (c *Controller) podUpdated(oldObj, obj any) {
	old, ok1 := oldObj.(*v1.Pod)
	p, ok2 := obj.(*v1.Pod)
	if !ok1 || !ok2 {
		return
	}
	oldRef, curRef := metav1.GetControllerOf(old), metav1.GetControllerOf(p)
	if oldRef != nil && (curRef == nil || curRef.UID != oldRef.UID) {
		// The Job that lost the pod counts it out.
		c.routePod(old)
	}
	if key, ok := c.routePod(p); ok {
		if p.DeletionTimestamp != nil {
			c.expectations.DeletionObserved(key, string(p.UID))
		}
		return
	}
	if curRef == nil && (oldRef != nil || !labels.Equals(old.Labels, p.Labels) || hasTrackingFinalizer(p)) {
		c.enqueueAdopters(p)
	}
}

func (c *Controller) podDeleted(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	p, ok := obj.(*v1.Pod)
	if !ok {
		return
	}
	if key, ok := c.routePod(p); ok {
		c.expectations.DeletionObserved(key, string(p.UID))
	}
}

// syncOrphanPod removes the tracking finalizer from a pod whose Job no
// longer exists or that has no controller at all.
func (c *Controller) syncOrphanPod(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	p, err := c.podLister.Pods(ns).Get(name)
	if err != nil || !hasTrackingFinalizer(p) {
		return nil
	}
	ref := metav1.GetControllerOf(p)
	if ref != nil {
		if j := c.resolve(ns, ref); j != nil {
			c.enqueue(j)
			return nil
		}
		return c.removeFinalizer(ctx, p)
	}
	// A Job may be adopting this orphan right now (adoption puts the
	// finalizer back anyway): the removal holds only for the version
	// read here, so it never strips an adopted pod.
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{
		"$deleteFromPrimitiveList/finalizers": []string{batchv1.JobTrackingFinalizer},
		"uid":                                 p.UID,
		"resourceVersion":                     p.ResourceVersion,
	}})
	_, err = c.client.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("remove tracking finalizer from orphan pod %s: %w", key, err)
	}
	return nil
}
