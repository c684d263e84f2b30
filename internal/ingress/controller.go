// Package ingress is Orca's built-in ingress controller: it watches the
// Ingresses of its IngressClass and what they name (Services,
// EndpointSlices, TLS Secrets), rebuilds the routing table (package
// route) on every change and hands it to the proxy (package proxy), and
// writes the addresses it serves on into the Ingresses' status.
package ingress

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	networkinglisters "k8s.io/client-go/listers/networking/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/orca-project/orca/internal/controller/controllerutil"
	"github.com/orca-project/orca/internal/ingress/route"
)

// ClassName is the IngressClass Orca's controller serves, and
// ControllerName its spec.controller.
const (
	ClassName      = "orca"
	ControllerName = "orca.io/ingress-controller"
)

// Config of the controller.
type Config struct {
	Client kubernetes.Interface
	// Class is the IngressClass served (ClassName when empty).
	Class string
	// Set receives every new routing table.
	Set func(*route.Table)
	// Addresses are where the proxy serves, for the Ingresses' status;
	// nil leaves the status alone.
	Addresses func() []string
	Log       *slog.Logger
}

// Controller keeps the routing table and the status current.
type Controller struct {
	cfg       Config
	factories []informers.SharedInformerFactory
	synced    []cache.InformerSynced
	ingresses networkinglisters.IngressLister
	classes   networkinglisters.IngressClassLister
	services  corelisters.ServiceLister
	slices    discoverylisters.EndpointSliceLister
	secrets   corelisters.SecretLister
	queue     workqueue.TypedRateLimitingInterface[string]
	log       *slog.Logger
	// problems are the last build's, logged only when they change.
	problems []route.Problem
}

// syncKey is the queue's one key: any change rebuilds the whole table,
// which is cheap next to a request's cost and keeps Build pure.
const syncKey = "table"

// New builds the controller.
func New(cfg Config) (*Controller, error) {
	if cfg.Class == "" {
		cfg.Class = ClassName
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	all := informers.NewSharedInformerFactory(cfg.Client, 0)
	// Only TLS Secrets: an ingress has no business with the others.
	tls := informers.NewSharedInformerFactoryWithOptions(cfg.Client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("type", string(corev1.SecretTypeTLS)).String()
	}))
	ing, cls := all.Networking().V1().Ingresses(), all.Networking().V1().IngressClasses()
	svc, sl, sec := all.Core().V1().Services(), all.Discovery().V1().EndpointSlices(), tls.Core().V1().Secrets()
	c := &Controller{
		cfg: cfg, factories: []informers.SharedInformerFactory{all, tls},
		ingresses: ing.Lister(), classes: cls.Lister(), services: svc.Lister(), slices: sl.Lister(), secrets: sec.Lister(),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "ingress"}),
		log: cfg.Log.With("controller", "ingress"),
	}
	kick := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { c.queue.Add(syncKey) },
		UpdateFunc: func(any, any) { c.queue.Add(syncKey) },
		DeleteFunc: func(any) { c.queue.Add(syncKey) },
	}
	for _, inf := range []cache.SharedIndexInformer{ing.Informer(), cls.Informer(), svc.Informer(), sl.Informer(), sec.Informer()} {
		if _, err := inf.AddEventHandler(kick); err != nil {
			return nil, fmt.Errorf("ingress controller: %w", err)
		}
		c.synced = append(c.synced, inf.HasSynced)
	}
	return c, nil
}

// Run keeps the table current until ctx ends; the status is put back
// every minute as well, for addresses that changed without an event.
func (c *Controller) Run(ctx context.Context) error {
	defer utilruntime.HandleCrash()
	defer c.queue.ShutDown()
	for _, f := range c.factories {
		f.Start(ctx.Done())
		defer f.Shutdown()
	}
	if !cache.WaitForCacheSync(ctx.Done(), c.synced...) {
		return nil
	}
	go wait.UntilWithContext(ctx, func(ctx context.Context) {
		controllerutil.ProcessQueue(ctx, c.queue, func(ctx context.Context, _ string) error { return c.sync(ctx) }, c.log, "key")
	}, time.Second)
	go wait.UntilWithContext(ctx, func(context.Context) { c.queue.Add(syncKey) }, time.Minute)
	<-ctx.Done()
	return nil
}

func (c *Controller) sync(ctx context.Context) error {
	in, err := c.input()
	if err != nil {
		return err
	}
	table, problems := route.Build(in)
	c.cfg.Set(table)
	if !slices.Equal(problems, c.problems) {
		for _, p := range problems {
			c.log.Warn("ingress not routed as written", "ingress", p.Ingress.String(), "problem", p.Message)
		}
		c.problems = problems
	}
	if c.cfg.Addresses == nil {
		return nil
	}
	return c.writeStatus(ctx, in, c.cfg.Addresses())
}

// input gathers Build's input from the caches.
func (c *Controller) input() (route.Input, error) {
	in := route.Input{
		Class:     c.cfg.Class,
		Services:  map[types.NamespacedName]*corev1.Service{},
		Endpoints: map[types.NamespacedName][]*discoveryv1.EndpointSlice{},
		Secrets:   map[types.NamespacedName]*corev1.Secret{},
	}
	if cl, err := c.classes.Get(c.cfg.Class); err == nil {
		in.DefaultClass = cl.Annotations[networkingv1.AnnotationIsDefaultIngressClass] == "true"
	}
	var err error
	if in.Ingresses, err = c.ingresses.List(labels.Everything()); err != nil {
		return in, err
	}
	svcs, err := c.services.List(labels.Everything())
	if err != nil {
		return in, err
	}
	for _, s := range svcs {
		in.Services[types.NamespacedName{Namespace: s.Namespace, Name: s.Name}] = s
	}
	sls, err := c.slices.List(labels.Everything())
	if err != nil {
		return in, err
	}
	for _, s := range sls {
		if name := s.Labels[discoveryv1.LabelServiceName]; name != "" {
			k := types.NamespacedName{Namespace: s.Namespace, Name: name}
			in.Endpoints[k] = append(in.Endpoints[k], s)
		}
	}
	secs, err := c.secrets.List(labels.Everything())
	if err != nil {
		return in, err
	}
	for _, s := range secs {
		in.Secrets[types.NamespacedName{Namespace: s.Namespace, Name: s.Name}] = s
	}
	return in, nil
}

// LoadBalancerStatus is the status of an Ingress served on addrs.
func LoadBalancerStatus(addrs []string) networkingv1.IngressLoadBalancerStatus {
	sorted := slices.Clone(addrs)
	slices.Sort(sorted)
	var st networkingv1.IngressLoadBalancerStatus
	for _, a := range slices.Compact(sorted) {
		st.Ingress = append(st.Ingress, networkingv1.IngressLoadBalancerIngress{IP: a})
	}
	return st
}

// writeStatus puts addrs into the status of every Ingress of the class
// whose status says otherwise.
func (c *Controller) writeStatus(ctx context.Context, in route.Input, addrs []string) error {
	want := LoadBalancerStatus(addrs)
	for _, ing := range in.Ingresses {
		if !in.Ours(ing) || apiequality.Semantic.DeepEqual(ing.Status.LoadBalancer, want) {
			continue
		}
		cp := ing.DeepCopy()
		cp.Status.LoadBalancer = want
		_, err := c.cfg.Client.NetworkingV1().Ingresses(cp.Namespace).UpdateStatus(ctx, cp, metav1.UpdateOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("status of ingress %s/%s: %w", cp.Namespace, cp.Name, err)
		}
	}
	return nil
}
