// Package ingress is Orca's built-in ingress controller as each node runs
// it: it watches the Ingresses of its IngressClass and what they name
// (Services, EndpointSlices, TLS Secrets), rebuilds the routing table
// (package route) on every change, and hands it to the proxy (package
// proxy) that serves ports 80 and 443 of the node. What the cluster sees
// of the ingress (the orca-ingress Service, the Ingresses' status and
// warnings) is written once for all nodes by the ingress-publisher
// controller (internal/controller/ingresspublish).
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
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/orca-project/orca/internal/controller/controllerutil"
	"github.com/orca-project/orca/internal/ingress/gateway"
	"github.com/orca-project/orca/internal/ingress/route"
)

// ClassName is the IngressClass Orca's controller serves, and
// ControllerName its spec.controller.
const (
	ClassName      = "orca"
	ControllerName = "orca.io/ingress-controller"
	// GatewayControllerName is the controllerName of Orca's
	// GatewayClass, also named ClassName.
	GatewayControllerName = "orca.io/gateway-controller"
)

// The ingress is published as a LoadBalancer Service, ServiceNamespace/
// ServiceName, whose endpoints are the nodes that carry NodeLabel (set
// by their agents once the proxy listens): its addresses are where
// Ingresses are served, and what their status says.
const (
	ServiceNamespace = "kube-system"
	ServiceName      = "orca-ingress"
	NodeLabel        = "node.orca.io/ingress"
)

// Ports the proxy serves on every node.
const (
	HTTPPort  = 80
	HTTPSPort = 443
)

// Config of the controller.
type Config struct {
	Client kubernetes.Interface
	// Class is the IngressClass served (ClassName when empty).
	Class string
	// Set receives every new routing table.
	Set func(*route.Table)
	// Gateway, when set, reads the Gateway API's objects (once the API
	// is served), and SetGateways receives every new table of theirs.
	Gateway     gwclient.Interface
	SetGateways func(*gateway.Table)
	Log         *slog.Logger
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
	gw        *GatewayAPI
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
	if cfg.Gateway != nil {
		c.gw = NewGatewayAPI(cfg.Gateway, all, func() { c.queue.Add(syncKey) })
	}
	return c, nil
}

// Run keeps the table current until ctx ends.
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
	// A first table even for a cluster without any object the handlers
	// would have reported.
	c.queue.Add(syncKey)
	if c.gw != nil {
		go func() {
			if err := c.gw.Run(ctx); err != nil {
				c.log.Error("gateway API", "err", err)
			}
		}()
	}
	go wait.UntilWithContext(ctx, func(ctx context.Context) {
		controllerutil.ProcessQueue(ctx, c.queue, func(ctx context.Context, _ string) error { return c.sync(ctx) }, c.log, "key")
	}, time.Second)
	<-ctx.Done()
	return nil
}

// sync rebuilds the table. Problems are logged here, when they change;
// the ingress publisher reports them on the Ingresses as events, once
// for the cluster rather than once per node.
func (c *Controller) sync(context.Context) error {
	in, err := Gather(c.cfg.Class, c.listers())
	if err != nil {
		return err
	}
	table, problems := route.Build(in)
	c.cfg.Set(table)
	if gl := c.gw.Listers(); gl != nil && c.cfg.SetGateways != nil {
		gin, err := GatherGateways(gl, &in)
		if err != nil {
			return err
		}
		c.cfg.SetGateways(gateway.Build(gin).Table)
	}
	if !slices.Equal(problems, c.problems) {
		for _, p := range problems {
			c.log.Warn("ingress not routed as written", "ingress", p.Ingress.String(), "problem", p.Message)
		}
		c.problems = problems
	}
	return nil
}

func (c *Controller) listers() Listers {
	return Listers{Ingresses: c.ingresses, Classes: c.classes, Services: c.services, Slices: c.slices, Secrets: c.secrets}
}

// Listers are the caches Build's input is gathered from.
type Listers struct {
	Ingresses networkinglisters.IngressLister
	Classes   networkinglisters.IngressClassLister
	Services  corelisters.ServiceLister
	Slices    discoverylisters.EndpointSliceLister
	Secrets   corelisters.SecretLister
}

// Gather reads Build's input for class from the caches.
func Gather(class string, l Listers) (route.Input, error) {
	in := route.Input{
		Class:     class,
		Services:  map[types.NamespacedName]*corev1.Service{},
		Endpoints: map[types.NamespacedName][]*discoveryv1.EndpointSlice{},
		Secrets:   map[types.NamespacedName]*corev1.Secret{},
	}
	if cl, err := l.Classes.Get(class); err == nil {
		in.DefaultClass = cl.Annotations[networkingv1.AnnotationIsDefaultIngressClass] == "true"
	}
	var err error
	if in.Ingresses, err = l.Ingresses.List(labels.Everything()); err != nil {
		return in, err
	}
	svcs, err := l.Services.List(labels.Everything())
	if err != nil {
		return in, err
	}
	for _, s := range svcs {
		in.Services[types.NamespacedName{Namespace: s.Namespace, Name: s.Name}] = s
	}
	sls, err := l.Slices.List(labels.Everything())
	if err != nil {
		return in, err
	}
	for _, s := range sls {
		if name := s.Labels[discoveryv1.LabelServiceName]; name != "" {
			k := types.NamespacedName{Namespace: s.Namespace, Name: name}
			in.Endpoints[k] = append(in.Endpoints[k], s)
		}
	}
	secs, err := l.Secrets.List(labels.Everything())
	if err != nil {
		return in, err
	}
	for _, s := range secs {
		in.Secrets[types.NamespacedName{Namespace: s.Namespace, Name: s.Name}] = s
	}
	return in, nil
}
