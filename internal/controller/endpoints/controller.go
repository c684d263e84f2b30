package endpoints

import (
	"context"
	"fmt"
	"log/slog"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	"github.com/orca-project/orca/internal/controller/controllerutil"
)

// Name is the controller's name in the manager and its queue.
const Name = "endpoint"

// Controller keeps Endpoints. Keys are the services' namespace/name.
type Controller struct {
	client    kubernetes.Interface
	services  corelisters.ServiceLister
	pods      corelisters.PodLister
	endpoints corelisters.EndpointsLister
	synced    []cache.InformerSynced
	queue     workqueue.TypedRateLimitingInterface[string]
	events    record.EventBroadcaster
	recorder  record.EventRecorder
	triggers  *TriggerTimeTracker
	writes    *ownWrites
	log       *slog.Logger
}

// New builds the controller over the shared informers.
func New(client kubernetes.Interface, factory informers.SharedInformerFactory, metrics workqueue.MetricsProvider, log *slog.Logger) (*Controller, error) {
	svcInf := factory.Core().V1().Services()
	podInf := factory.Core().V1().Pods()
	epInf := factory.Core().V1().Endpoints()
	events := record.NewBroadcaster()
	c := &Controller{
		client:    client,
		services:  svcInf.Lister(),
		pods:      podInf.Lister(),
		endpoints: epInf.Lister(),
		synced:    []cache.InformerSynced{svcInf.Informer().HasSynced, podInf.Informer().HasSynced, epInf.Informer().HasSynced},
		queue:     controllerutil.NewQueue[string](Name, metrics),
		events:    events,
		recorder:  events.NewRecorder(scheme.Scheme, v1.EventSource{Component: "endpoint-controller"}),
		triggers:  NewTriggerTimeTracker(),
		writes:    newOwnWrites(),
		log:       log.With("controller", Name),
	}
	if _, err := svcInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, obj any) { c.enqueue(obj) },
		DeleteFunc: c.enqueue,
	}); err != nil {
		return nil, fmt.Errorf("endpoints: service handler: %w", err)
	}
	if _, err := podInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.podChanged,
		UpdateFunc: c.podUpdated,
		DeleteFunc: c.podChanged,
	}); err != nil {
		return nil, fmt.Errorf("endpoints: pod handler: %w", err)
	}
	// A deleted Endpoints object of a live service is recreated, and a
	// sync that waited for the cache to show the controller's own write
	// runs once it does.
	if _, err := epInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.endpointsObserved,
		UpdateFunc: func(_, obj any) { c.endpointsObserved(obj) },
		DeleteFunc: func(obj any) {
			if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
				c.writes.observed(key, "")
				c.queue.Add(key)
			}
		},
	}); err != nil {
		return nil, fmt.Errorf("endpoints: endpoints handler: %w", err)
	}
	return c, nil
}

// Name names the controller.
func (c *Controller) Name() string { return Name }

func (c *Controller) enqueue(obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err == nil {
		c.queue.Add(key)
	}
}

func (c *Controller) endpointsObserved(obj any) {
	ep, ok := obj.(*v1.Endpoints)
	if !ok {
		return
	}
	if key := ep.Namespace + "/" + ep.Name; c.writes.observed(key, ep.ResourceVersion) {
		c.queue.Add(key)
	}
}

func (c *Controller) podChanged(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	if pod, ok := obj.(*v1.Pod); ok {
		for _, key := range ServicesSelecting(c.services, pod) {
			c.queue.Add(key)
		}
	}
}

func (c *Controller) podUpdated(oldObj, newObj any) {
	oldPod, newPod := oldObj.(*v1.Pod), newObj.(*v1.Pod)
	if oldPod.ResourceVersion == newPod.ResourceVersion {
		return
	}
	c.podChanged(newPod)
	if !labels.Equals(oldPod.Labels, newPod.Labels) {
		c.podChanged(oldPod)
	}
}

// ServicesSelecting lists the keys of the services whose selector matches
// pod.
func ServicesSelecting(lister corelisters.ServiceLister, pod *v1.Pod) []string {
	svcs, err := lister.Services(pod.Namespace).List(labels.Everything())
	if err != nil {
		return nil
	}
	var keys []string
	for _, s := range svcs {
		if s.Spec.Selector == nil {
			continue
		}
		if labels.SelectorFromValidatedSet(s.Spec.Selector).Matches(labels.Set(pod.Labels)) {
			keys = append(keys, s.Namespace+"/"+s.Name)
		}
	}
	return keys
}

// Run processes services until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) error {
	return controllerutil.Loop{
		Name: "endpoints", Events: c.events, Client: c.client, Synced: c.synced,
		Start:   func(context.Context) error { c.checkLeftovers(); return nil },
		Workers: []controllerutil.Workers{controllerutil.NewWorkers(workers, c.queue, c.sync, c.log, "service")},
	}.Run(ctx)
}

// checkLeftovers queues every Endpoints object once, so that those whose
// service was deleted while no controller ran are removed too.
func (c *Controller) checkLeftovers() {
	eps, err := c.endpoints.List(labels.Everything())
	if err != nil {
		return
	}
	for _, ep := range eps {
		c.queue.Add(ep.Namespace + "/" + ep.Name)
	}
}

func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	svc, err := c.services.Services(ns).Get(name)
	if apierrors.IsNotFound(err) {
		err := c.client.CoreV1().Endpoints(ns).Delete(ctx, name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete endpoints %s: %w", key, err)
		}
		c.triggers.Forget(ns, name)
		c.writes.forget(key)
		return nil
	}
	if err != nil {
		return err
	}
	// Services without a selector have user-managed Endpoints, and
	// ExternalName services have none.
	if svc.Spec.Type == v1.ServiceTypeExternalName || svc.Spec.Selector == nil {
		return nil
	}
	pods, err := c.pods.Pods(ns).List(labels.SelectorFromValidatedSet(svc.Spec.Selector))
	if err != nil {
		return err
	}
	// Read before the cache: see ownWrites.
	staleVersion, waiting := c.writes.staleVersion(key)
	current, err := c.endpoints.Endpoints(ns).Get(name)
	if apierrors.IsNotFound(err) {
		current = nil
	} else if err != nil {
		return err
	}
	cachedVersion := ""
	if current != nil {
		cachedVersion = current.ResourceVersion
	}
	if waiting && cachedVersion == staleVersion {
		c.log.Debug("cache does not show the last write yet; waiting", "service", key)
		if c.writes.waiting(key) {
			// The informer's event for that write queues the key again;
			// this is for a write it never shows (see ownWritesTimeout).
			c.queue.AddAfter(key, ownWritesTimeout)
		}
		return nil
	}
	trigger, seen := c.triggers.Compute(svc, pods)
	subsets, ready, notReady := Subsets(svc, pods)
	next := Desired(svc, subsets, current, trigger)
	if next == nil {
		c.triggers.Commit(seen)
		return nil
	}
	c.log.Debug("updating endpoints", "service", key, "ready", ready, "notReady", notReady)
	var written *v1.Endpoints
	if current == nil {
		written, err = c.client.CoreV1().Endpoints(ns).Create(ctx, next, metav1.CreateOptions{})
	} else {
		written, err = c.client.CoreV1().Endpoints(ns).Update(ctx, next, metav1.UpdateOptions{})
	}
	if err == nil {
		c.writes.wrote(key, cachedVersion, written.ResourceVersion)
		c.triggers.Commit(seen)
		return nil
	}
	if current == nil && apierrors.IsForbidden(err) && apierrors.HasStatusCause(err, v1.NamespaceTerminatingCause) {
		return nil
	}
	if current == nil {
		c.recorder.Eventf(next, v1.EventTypeWarning, "FailedToCreateEndpoint", "Failed to create endpoint for service %v/%v: %v", ns, name, err)
	} else {
		c.recorder.Eventf(next, v1.EventTypeWarning, "FailedToUpdateEndpoint", "Failed to update endpoint %v/%v: %v", ns, name, err)
	}
	return fmt.Errorf("write endpoints %s: %w", key, err)
}
