package endpointslicemirroring

import (
	"context"
	"fmt"
	"log/slog"

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
	"github.com/orca-project/orca/internal/controller/endpointslice"
)

// Name is the controller's name in the manager and its queue.
const Name = "endpointslicemirroring"

// Controller mirrors Endpoints. Keys are namespace/name, shared by the
// Service and its Endpoints.
type Controller struct {
	client    kubernetes.Interface
	services  corelisters.ServiceLister
	endpoints corelisters.EndpointsLister
	slices    discoverylisters.EndpointSliceLister
	synced    []cache.InformerSynced
	queue     workqueue.TypedRateLimitingInterface[string]
	events    record.EventBroadcaster
	recorder  record.EventRecorder
	writer    *endpointslice.Writer
	log       *slog.Logger
}

// New builds the controller over the shared informers.
func New(client kubernetes.Interface, factory informers.SharedInformerFactory, metrics workqueue.MetricsProvider, log *slog.Logger) (*Controller, error) {
	svcInf := factory.Core().V1().Services()
	epInf := factory.Core().V1().Endpoints()
	sliceInf := factory.Discovery().V1().EndpointSlices()
	events := record.NewBroadcaster()
	c := &Controller{
		client:    client,
		services:  svcInf.Lister(),
		endpoints: epInf.Lister(),
		slices:    sliceInf.Lister(),
		synced:    []cache.InformerSynced{svcInf.Informer().HasSynced, epInf.Informer().HasSynced, sliceInf.Informer().HasSynced},
		queue:     controllerutil.NewQueue[string](Name, metrics),
		events:    events,
		recorder:  events.NewRecorder(scheme.Scheme, v1.EventSource{Component: "endpointslicemirroring-controller"}),
		writer:    endpointslice.NewWriter(client),
		log:       log.With("controller", Name),
	}
	byKey := cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, obj any) { c.enqueue(obj) },
		DeleteFunc: c.enqueue,
	}
	if _, err := svcInf.Informer().AddEventHandler(byKey); err != nil {
		return nil, fmt.Errorf("endpointslicemirroring: service handler: %w", err)
	}
	if _, err := epInf.Informer().AddEventHandler(byKey); err != nil {
		return nil, fmt.Errorf("endpointslicemirroring: endpoints handler: %w", err)
	}
	if _, err := sliceInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if key, _, ok := mirroredKey(obj); ok {
				c.writer.SliceAdded(key)
				c.queue.Add(key)
			}
		},
		UpdateFunc: func(_, obj any) {
			if key, _, ok := mirroredKey(obj); ok {
				c.queue.Add(key)
			}
		},
		DeleteFunc: func(obj any) {
			if key, s, ok := mirroredKey(obj); ok {
				c.writer.SliceDeleted(s.UID)
				c.queue.Add(key)
			}
		},
	}); err != nil {
		return nil, fmt.Errorf("endpointslicemirroring: slice handler: %w", err)
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

func mirroredKey(obj any) (string, *discoveryv1.EndpointSlice, bool) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	s, ok := obj.(*discoveryv1.EndpointSlice)
	if !ok || s.Labels[discoveryv1.LabelManagedBy] != ControllerName || s.Labels[discoveryv1.LabelServiceName] == "" {
		return "", nil, false
	}
	return s.Namespace + "/" + s.Labels[discoveryv1.LabelServiceName], s, true
}

// Run processes Endpoints until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) error {
	return controllerutil.Loop{
		Name: "endpointslicemirroring", Events: c.events, Client: c.client, Synced: c.synced,
		Workers: []controllerutil.Workers{controllerutil.NewWorkers(workers, c.queue, c.sync, c.log, "endpoints")},
	}.Run(ctx)
}

func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	existing, err := c.slices.EndpointSlices(ns).List(labels.SelectorFromSet(labels.Set{
		discoveryv1.LabelServiceName: name, discoveryv1.LabelManagedBy: ControllerName,
	}))
	if err != nil {
		return err
	}
	ep, mirror, err := c.mirrorable(ns, name)
	if err != nil {
		return err
	}
	if !mirror {
		c.writer.Forget(key)
		if len(existing) == 0 {
			return nil
		}
		return c.writer.Apply(ctx, key, endpointslice.Plan{Delete: existing}, nil)
	}
	if !c.writer.UpToDate(key, existing) {
		return nil
	}
	desired, truncated := Desired(ep)
	if truncated {
		c.log.Info("endpoints subset over capacity; not every address is mirrored", "endpoints", key, "max", MaxEndpointsPerSubset)
	}
	plan := endpointslice.Reconcile(Owner(ep), existing, desired, MaxEndpointsPerSubset)
	if plan.Empty() {
		return nil
	}
	if err := c.writer.Apply(ctx, key, plan, nil); err != nil {
		if apierrors.IsForbidden(err) && apierrors.HasStatusCause(err, v1.NamespaceTerminatingCause) {
			return nil
		}
		c.recorder.Eventf(ep, v1.EventTypeWarning, "FailedToUpdateEndpointSlices", "Error updating Endpoint Slices for Endpoints %s/%s: %v", ns, name, err)
		return err
	}
	return nil
}

// mirrorable returns the Endpoints to mirror: only those of an existing
// Service without a selector, not opted out.
func (c *Controller) mirrorable(ns, name string) (*v1.Endpoints, bool, error) {
	svc, err := c.services.Services(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if svc.Spec.Selector != nil {
		return nil, false, nil
	}
	ep, err := c.endpoints.Endpoints(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return ep, ShouldMirror(ep), nil
}
