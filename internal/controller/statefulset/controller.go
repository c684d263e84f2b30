// Package statefulset runs StatefulSets as upstream's controller does:
// pods NAME-0..N-1 with a stable hostname under the set's headless
// service and a PVC per ordinal and claim template, created in order or
// in parallel, scaled down highest ordinal first, and rolled to a new
// template by ControllerRevisions (highest ordinal first, above the
// partition) or only when pods are deleted.
//
// The decisions are plain functions over the set, its pods and claims
// (plan, chooseUpdateRevision, revisionsToDelete, setClaimOwners); the
// Controller only reads caches, carries out the actions and writes status.
package statefulset

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	"github.com/orca-project/orca/internal/controller/controllerutil"
)

// Name is the controller's name, and ComponentName the source of its events.
const (
	Name          = "statefulset"
	ComponentName = "statefulset-controller"
)

// Controller reconciles StatefulSets. Keys are namespace/name.
type Controller struct {
	client       kubernetes.Interface
	sets         appslisters.StatefulSetLister
	pods         corelisters.PodLister
	podIndex     cache.Indexer
	revisions    appslisters.ControllerRevisionLister
	claims       corelisters.PersistentVolumeClaimLister
	synced       []cache.InformerSynced
	queue        workqueue.TypedRateLimitingInterface[string]
	expectations *controllerutil.Expectations
	podControl   controllerutil.PodControl
	events       record.EventBroadcaster
	recorder     record.EventRecorder
	log          *slog.Logger
	now          func() time.Time
}

// New builds the controller over the shared informers.
func New(client kubernetes.Interface, factory informers.SharedInformerFactory, metrics workqueue.MetricsProvider, log *slog.Logger) (*Controller, error) {
	setInf := factory.Apps().V1().StatefulSets()
	podInf := factory.Core().V1().Pods()
	revInf := factory.Apps().V1().ControllerRevisions()
	pvcInf := factory.Core().V1().PersistentVolumeClaims()
	events := record.NewBroadcaster()
	c := &Controller{
		client:    client,
		sets:      setInf.Lister(),
		pods:      podInf.Lister(),
		podIndex:  podInf.Informer().GetIndexer(),
		revisions: revInf.Lister(),
		claims:    pvcInf.Lister(),
		synced: []cache.InformerSynced{setInf.Informer().HasSynced, podInf.Informer().HasSynced,
			revInf.Informer().HasSynced, pvcInf.Informer().HasSynced},
		queue:        controllerutil.NewQueue[string](Name, metrics),
		expectations: controllerutil.NewExpectations(),
		// Events are recorded here, in upstream's StatefulSet wording,
		// rather than by PodControl, whose wording is the ReplicaSet's.
		podControl: controllerutil.PodControl{Client: client},
		events:     events,
		recorder:   events.NewRecorder(scheme.Scheme, v1.EventSource{Component: ComponentName}),
		log:        log.With("controller", Name),
		now:        time.Now,
	}
	if err := controllerutil.AddPodControllerIndex(podInf.Informer()); err != nil {
		return nil, fmt.Errorf("statefulset: pod index: %w", err)
	}
	if _, err := setInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, obj any) { c.enqueue(obj) },
		DeleteFunc: c.enqueue,
	}); err != nil {
		return nil, fmt.Errorf("statefulset: set handler: %w", err)
	}
	if _, err := podInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.podAdded,
		UpdateFunc: c.podUpdated,
		DeleteFunc: c.podDeleted,
	}); err != nil {
		return nil, fmt.Errorf("statefulset: pod handler: %w", err)
	}
	if _, err := pvcInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, obj any) { c.claimChanged(obj) },
		DeleteFunc: c.claimChanged,
	}); err != nil {
		return nil, fmt.Errorf("statefulset: claim handler: %w", err)
	}
	return c, nil
}

// Name names the controller.
func (c *Controller) Name() string { return Name }

// Run processes StatefulSets until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) error {
	return controllerutil.Loop{
		Name: "statefulset", Events: c.events, Client: c.client, Synced: c.synced,
		Workers: []controllerutil.Workers{controllerutil.NewWorkers(workers, c.queue, c.sync, c.log, "statefulset")},
	}.Run(ctx)
}

func (c *Controller) enqueue(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	if s, ok := obj.(*appsv1.StatefulSet); ok {
		c.queue.Add(s.Namespace + "/" + s.Name)
	}
}

// ownerKey is the key of the StatefulSet that controls obj, if it exists.
func (c *Controller) ownerKey(obj metav1.Object) (string, bool) {
	ref := metav1.GetControllerOf(obj)
	if ref == nil || ref.Kind != controllerKind.Kind || ref.APIVersion != controllerKind.GroupVersion().String() {
		return "", false
	}
	set, err := c.sets.StatefulSets(obj.GetNamespace()).Get(ref.Name)
	if err != nil || set.UID != ref.UID {
		return "", false
	}
	return set.Namespace + "/" + set.Name, true
}

// enqueueAdopters queues the sets that could adopt an orphan pod.
func (c *Controller) enqueueAdopters(p *v1.Pod) {
	sets, err := c.sets.StatefulSets(p.Namespace).List(labels.Everything())
	if err != nil {
		return
	}
	for _, s := range sets {
		sel, err := metav1.LabelSelectorAsSelector(s.Spec.Selector)
		if err != nil || sel.Empty() || !sel.Matches(labels.Set(p.Labels)) || !isMemberOf(s, p) {
			continue
		}
		c.queue.Add(s.Namespace + "/" + s.Name)
	}
}

func (c *Controller) podAdded(obj any) {
	p, ok := obj.(*v1.Pod)
	if !ok {
		return
	}
	if p.DeletionTimestamp != nil {
		c.podDeleted(p)
		return
	}
	if key, ok := c.ownerKey(p); ok {
		c.expectations.CreationObserved(key)
		c.queue.Add(key)
		return
	}
	if metav1.GetControllerOf(p) == nil {
		c.enqueueAdopters(p)
	}
}

func (c *Controller) podUpdated(oldObj, obj any) {
	old, ok1 := oldObj.(*v1.Pod)
	p, ok2 := obj.(*v1.Pod)
	if !ok1 || !ok2 || old.ResourceVersion == p.ResourceVersion {
		return
	}
	if oldKey, ok := c.ownerKey(old); ok {
		if key, ok := c.ownerKey(p); !ok || key != oldKey {
			c.queue.Add(oldKey)
		}
	}
	if key, ok := c.ownerKey(p); ok {
		if p.DeletionTimestamp != nil && old.DeletionTimestamp == nil {
			c.expectations.DeletionObserved(key, string(p.UID))
		}
		c.queue.Add(key)
		return
	}
	if metav1.GetControllerOf(p) == nil {
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
	if key, ok := c.ownerKey(p); ok {
		c.expectations.DeletionObserved(key, string(p.UID))
		c.queue.Add(key)
	}
}

// claimChanged queues the set a claim belongs to by name: a pod waiting
// for a stale claim to go proceeds once it has.
func (c *Controller) claimChanged(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	pvc, ok := obj.(*v1.PersistentVolumeClaim)
	if !ok {
		return
	}
	sets, err := c.sets.StatefulSets(pvc.Namespace).List(labels.Everything())
	if err != nil {
		return
	}
	for _, s := range sets {
		for _, t := range s.Spec.VolumeClaimTemplates {
			prefix := t.Name + "-" + s.Name + "-"
			if len(pvc.Name) > len(prefix) && pvc.Name[:len(prefix)] == prefix {
				c.queue.Add(s.Namespace + "/" + s.Name)
			}
		}
	}
}
