// Package deployment is the Deployment controller: it rolls a
// Deployment's pod template out through ReplicaSets (one per template,
// named NAME-HASH after upstream's pod-template-hash), by RollingUpdate
// within maxSurge and maxUnavailable or by Recreate, scales them in
// proportion when the Deployment is resized mid-rollout, keeps
// revisionHistoryLimit old ReplicaSets for `kubectl rollout undo`, and
// reports progress with upstream's status fields, conditions and events.
// It never touches pods: the ReplicaSet controller does.
package deployment

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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

// controllerKind is what the ReplicaSets' owner references name.
var controllerKind = appsv1.SchemeGroupVersion.WithKind("Deployment")

// Controller reconciles Deployments. Keys are namespace/name.
type Controller struct {
	client    kubernetes.Interface
	dLister   appslisters.DeploymentLister
	rsLister  appslisters.ReplicaSetLister
	podLister corelisters.PodLister
	synced    []cache.InformerSynced
	queue     workqueue.TypedRateLimitingInterface[string]
	events    record.EventBroadcaster
	recorder  record.EventRecorder
	log       *slog.Logger
	now       func() time.Time
}

// New builds the controller over the shared informers.
func New(client kubernetes.Interface, factory informers.SharedInformerFactory, metrics workqueue.MetricsProvider, log *slog.Logger) (*Controller, error) {
	dInf := factory.Apps().V1().Deployments()
	rsInf := factory.Apps().V1().ReplicaSets()
	podInf := factory.Core().V1().Pods()
	events := record.NewBroadcaster()
	c := &Controller{
		client:    client,
		dLister:   dInf.Lister(),
		rsLister:  rsInf.Lister(),
		podLister: podInf.Lister(),
		synced:    []cache.InformerSynced{dInf.Informer().HasSynced, rsInf.Informer().HasSynced, podInf.Informer().HasSynced},
		queue:     controllerutil.NewQueue[string]("deployment", metrics),
		events:    events,
		recorder:  events.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "deployment-controller"}),
		log:       log.With("controller", "deployment"),
		now:       time.Now,
	}
	if _, err := dInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, obj any) { c.enqueue(obj) },
		DeleteFunc: c.enqueue,
	}); err != nil {
		return nil, fmt.Errorf("deployment: deployment handler: %w", err)
	}
	if _, err := rsInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.replicaSetChanged,
		UpdateFunc: c.replicaSetUpdated,
		DeleteFunc: c.replicaSetChanged,
	}); err != nil {
		return nil, fmt.Errorf("deployment: replica set handler: %w", err)
	}
	if _, err := podInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		DeleteFunc: c.podDeleted,
	}); err != nil {
		return nil, fmt.Errorf("deployment: pod handler: %w", err)
	}
	return c, nil
}

// Name names the controller.
func (c *Controller) Name() string { return "deployment" }

func (c *Controller) enqueue(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	key, err := cache.MetaNamespaceKeyFunc(obj)
	if err == nil {
		c.queue.Add(key)
	}
}

// replicaSetChanged enqueues the owner of a created or deleted
// ReplicaSet, or, for an orphan, every Deployment that could adopt it.
func (c *Controller) replicaSetChanged(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	rs, ok := obj.(*appsv1.ReplicaSet)
	if !ok {
		return
	}
	if ref := metav1.GetControllerOf(rs); ref != nil {
		c.enqueueOwner(rs.Namespace, ref)
		return
	}
	c.enqueueMatching(rs)
}

func (c *Controller) replicaSetUpdated(oldObj, newObj any) {
	old, ok1 := oldObj.(*appsv1.ReplicaSet)
	cur, ok2 := newObj.(*appsv1.ReplicaSet)
	if !ok1 || !ok2 || old.ResourceVersion == cur.ResourceVersion {
		return
	}
	oldRef, curRef := metav1.GetControllerOf(old), metav1.GetControllerOf(cur)
	if oldRef != nil && (curRef == nil || oldRef.UID != curRef.UID) {
		c.enqueueOwner(old.Namespace, oldRef)
	}
	if curRef != nil {
		c.enqueueOwner(cur.Namespace, curRef)
		return
	}
	if !labels.Equals(old.Labels, cur.Labels) || oldRef != nil {
		c.enqueueMatching(cur)
	}
}

// podDeleted wakes a Recreate Deployment waiting for its old pods to go.
func (c *Controller) podDeleted(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	ref := metav1.GetControllerOf(pod)
	if ref == nil || ref.Kind != "ReplicaSet" {
		return
	}
	rs, err := c.rsLister.ReplicaSets(pod.Namespace).Get(ref.Name)
	if err != nil || rs.UID != ref.UID {
		return
	}
	dRef := metav1.GetControllerOf(rs)
	if dRef == nil {
		return
	}
	d := c.resolve(rs.Namespace, dRef)
	if d != nil && d.Spec.Strategy.Type == appsv1.RecreateDeploymentStrategyType {
		c.enqueue(d)
	}
}

func (c *Controller) enqueueOwner(ns string, ref *metav1.OwnerReference) {
	if d := c.resolve(ns, ref); d != nil {
		c.enqueue(d)
	}
}

func (c *Controller) resolve(ns string, ref *metav1.OwnerReference) *appsv1.Deployment {
	if ref.Kind != controllerKind.Kind {
		return nil
	}
	d, err := c.dLister.Deployments(ns).Get(ref.Name)
	if err != nil || d.UID != ref.UID {
		return nil
	}
	return d
}

func (c *Controller) enqueueMatching(rs *appsv1.ReplicaSet) {
	ds, err := c.dLister.Deployments(rs.Namespace).List(labels.Everything())
	if err != nil {
		return
	}
	for _, d := range ds {
		sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
		if err != nil || sel.Empty() {
			continue
		}
		if sel.Matches(labels.Set(rs.Labels)) {
			c.enqueue(d)
		}
	}
}

// Run processes Deployments until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) error {
	return controllerutil.Loop{
		Name: "deployment", Events: c.events, Client: c.client, Synced: c.synced,
		Workers: []controllerutil.Workers{controllerutil.NewWorkers(workers, c.queue, c.sync, c.log, "deployment",
			controllerutil.Expected(apierrors.IsConflict))},
	}.Run(ctx)
}
