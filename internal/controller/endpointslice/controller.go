package endpointslice

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	"github.com/orca-project/orca/internal/controller/controllerutil"
	"github.com/orca-project/orca/internal/controller/endpoints"
)

// Name is the controller's name in the manager and its queue.
const Name = "endpointslice"

// Controller keeps EndpointSlices. Keys are the services' namespace/name.
type Controller struct {
	client   kubernetes.Interface
	services corelisters.ServiceLister
	pods     corelisters.PodLister
	nodes    corelisters.NodeLister
	slices   discoverylisters.EndpointSliceLister
	synced   []cache.InformerSynced
	queue    workqueue.TypedRateLimitingInterface[string]
	events   record.EventBroadcaster
	recorder record.EventRecorder
	triggers *endpoints.TriggerTimeTracker
	writer   *Writer
	// MaxEndpointsPerSlice caps endpoints per slice.
	MaxEndpointsPerSlice int
	log                  *slog.Logger
}

// New builds the controller over the shared informers.
func New(client kubernetes.Interface, factory informers.SharedInformerFactory, metrics workqueue.MetricsProvider, log *slog.Logger) (*Controller, error) {
	svcInf := factory.Core().V1().Services()
	podInf := factory.Core().V1().Pods()
	nodeInf := factory.Core().V1().Nodes()
	sliceInf := factory.Discovery().V1().EndpointSlices()
	events := record.NewBroadcaster()
	c := &Controller{
		client:   client,
		services: svcInf.Lister(),
		pods:     podInf.Lister(),
		nodes:    nodeInf.Lister(),
		slices:   sliceInf.Lister(),
		synced: []cache.InformerSynced{svcInf.Informer().HasSynced, podInf.Informer().HasSynced,
			nodeInf.Informer().HasSynced, sliceInf.Informer().HasSynced},
		queue:                controllerutil.NewQueue[string](Name, metrics),
		events:               events,
		recorder:             events.NewRecorder(scheme.Scheme, v1.EventSource{Component: "endpoint-slice-controller"}),
		triggers:             endpoints.NewTriggerTimeTracker(),
		writer:               NewWriter(client),
		MaxEndpointsPerSlice: MaxEndpointsPerSlice,
		log:                  log.With("controller", Name),
	}
	handlers := []struct {
		inf cache.SharedIndexInformer
		h   cache.ResourceEventHandler
	}{
		{svcInf.Informer(), cache.ResourceEventHandlerFuncs{
			AddFunc:    c.enqueue,
			UpdateFunc: func(_, obj any) { c.enqueue(obj) },
			DeleteFunc: c.enqueue,
		}},
		{podInf.Informer(), cache.ResourceEventHandlerFuncs{
			AddFunc:    c.podChanged,
			UpdateFunc: c.podUpdated,
			DeleteFunc: c.podChanged,
		}},
		{nodeInf.Informer(), cache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { c.enqueueAll() },
			UpdateFunc: c.nodeUpdated,
		}},
		{sliceInf.Informer(), cache.ResourceEventHandlerFuncs{
			AddFunc:    c.sliceAdded,
			UpdateFunc: func(_, obj any) { c.sliceChanged(obj) },
			DeleteFunc: c.sliceDeleted,
		}},
	}
	for _, h := range handlers {
		if _, err := h.inf.AddEventHandler(h.h); err != nil {
			return nil, fmt.Errorf("endpointslice: event handler: %w", err)
		}
	}
	return c, nil
}

// Name names the controller.
func (c *Controller) Name() string { return Name }

func (c *Controller) enqueue(obj any) {
	if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
		c.queue.Add(key)
	}
}

func (c *Controller) enqueueAll() {
	svcs, err := c.services.List(labels.Everything())
	if err != nil {
		return
	}
	for _, s := range svcs {
		if s.Spec.Selector != nil {
			c.queue.Add(s.Namespace + "/" + s.Name)
		}
	}
}

func (c *Controller) podChanged(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	if pod, ok := obj.(*v1.Pod); ok {
		for _, key := range endpoints.ServicesSelecting(c.services, pod) {
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

// nodeUpdated resyncs every service when a node's zone changes: endpoints
// carry their node's zone. Status heartbeats change nothing.
func (c *Controller) nodeUpdated(oldObj, newObj any) {
	o, n := oldObj.(*v1.Node), newObj.(*v1.Node)
	if o.Labels[v1.LabelTopologyZone] != n.Labels[v1.LabelTopologyZone] {
		c.enqueueAll()
	}
}

// serviceKeyOf is the key of the service a managed slice belongs to.
func serviceKeyOf(obj any) (string, *discoveryv1.EndpointSlice, bool) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	s, ok := obj.(*discoveryv1.EndpointSlice)
	if !ok || s.Labels[discoveryv1.LabelManagedBy] != ControllerName || s.Labels[discoveryv1.LabelServiceName] == "" {
		return "", nil, false
	}
	return s.Namespace + "/" + s.Labels[discoveryv1.LabelServiceName], s, true
}

func (c *Controller) sliceAdded(obj any) {
	if key, _, ok := serviceKeyOf(obj); ok {
		c.writer.SliceAdded(key)
		c.queue.Add(key)
	}
}

func (c *Controller) sliceChanged(obj any) {
	if key, _, ok := serviceKeyOf(obj); ok {
		c.queue.Add(key)
	}
}

func (c *Controller) sliceDeleted(obj any) {
	if key, s, ok := serviceKeyOf(obj); ok {
		c.writer.SliceDeleted(s.UID)
		c.queue.Add(key)
	}
}

// Run processes services until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) error {
	return controllerutil.Loop{
		Name: "endpointslice", Events: c.events, Client: c.client, Synced: c.synced,
		Workers: []controllerutil.Workers{controllerutil.NewWorkers(workers, c.queue, c.sync, c.log, "service")},
	}.Run(ctx)
}

func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	svc, err := c.services.Services(ns).Get(name)
	if apierrors.IsNotFound(err) {
		// The garbage collector deletes the slices the service owned.
		c.triggers.Forget(ns, name)
		c.writer.Forget(key)
		return nil
	}
	if err != nil {
		return err
	}
	if svc.Spec.Type == v1.ServiceTypeExternalName || svc.Spec.Selector == nil {
		return nil
	}
	existing, err := c.slices.EndpointSlices(ns).List(labels.SelectorFromSet(labels.Set{
		discoveryv1.LabelServiceName: name, discoveryv1.LabelManagedBy: ControllerName,
	}))
	if err != nil {
		return err
	}
	if !c.writer.UpToDate(key, existing) {
		// The informer's events for our own writes will queue the
		// service again.
		return nil
	}
	pods, err := c.pods.Pods(ns).List(labels.SelectorFromValidatedSet(svc.Spec.Selector))
	if err != nil {
		return err
	}
	trigger, seen := c.triggers.Compute(svc, pods)
	desired := map[discoveryv1.AddressType]map[string]*Group{}
	for _, t := range AddressTypes(svc) {
		desired[t] = DesiredEndpoints(svc, pods, t, c.zone)
	}
	plan := Reconcile(ServiceOwner(svc), existing, desired, c.MaxEndpointsPerSlice)
	if plan.Empty() {
		c.triggers.Commit(seen)
		return nil
	}
	if err := c.apply(ctx, key, plan, trigger); err != nil {
		if apierrors.IsForbidden(err) && apierrors.HasStatusCause(err, v1.NamespaceTerminatingCause) {
			return nil
		}
		c.recorder.Eventf(svc, v1.EventTypeWarning, "FailedToUpdateEndpointSlices", "Error updating Endpoint Slices for Service %s/%s: %v", ns, name, err)
		return err
	}
	c.triggers.Commit(seen)
	return nil
}

func (c *Controller) zone(node string) string {
	n, err := c.nodes.Get(node)
	if err != nil {
		return ""
	}
	return n.Labels[v1.LabelTopologyZone]
}

func (c *Controller) apply(ctx context.Context, key string, plan Plan, trigger time.Time) error {
	return c.writer.Apply(ctx, key, plan, func(s *discoveryv1.EndpointSlice) {
		if s.Annotations == nil {
			s.Annotations = map[string]string{}
		}
		if !trigger.IsZero() {
			s.Annotations[v1.EndpointsLastChangeTriggerTime] = trigger.UTC().Format(time.RFC3339Nano)
		} else {
			delete(s.Annotations, v1.EndpointsLastChangeTriggerTime)
		}
	})
}
