package ingresspublish

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/orca-project/orca/internal/controller/controllerutil"
	"github.com/orca-project/orca/internal/ingress"
	"github.com/orca-project/orca/internal/ingress/route"
)

// syncKey is the one queue item: every Ingress's status comes from the
// one Service, and problems from the whole table.
const syncKey = "publish"

// Controller publishes the ingress.
type Controller struct {
	client    kubernetes.Interface
	nodes     corelisters.NodeLister
	services  corelisters.ServiceLister
	slices    discoverylisters.EndpointSliceLister
	listers   ingress.Listers
	tlsSecret informers.SharedInformerFactory
	synced    []cache.InformerSynced
	queue     workqueue.TypedRateLimitingInterface[string]
	// gw follows the Gateway API once it is served, gwClient writes its
	// status; both nil without the Gateway API.
	gw       *ingress.GatewayAPI
	gwClient gwclient.Interface
	bc       record.EventBroadcaster
	rec      record.EventRecorder
	log      *slog.Logger
	// reported are the problems last reported per Ingress, so that a
	// lasting one is one event, not one per sync.
	reported map[types.NamespacedName][]string
}

// New builds the controller on the manager's shared informers, and an
// informer of its own on the TLS Secrets alone; gw, when not nil, also
// writes the Gateway API's status.
func New(client kubernetes.Interface, gw gwclient.Interface, factory informers.SharedInformerFactory, metrics workqueue.MetricsProvider, log *slog.Logger) (*Controller, error) {
	tls := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("type", string(v1.SecretTypeTLS)).String()
	}))
	nodes, svcs, sl := factory.Core().V1().Nodes(), factory.Core().V1().Services(), factory.Discovery().V1().EndpointSlices()
	ings, classes, secrets := factory.Networking().V1().Ingresses(), factory.Networking().V1().IngressClasses(), tls.Core().V1().Secrets()
	bc := record.NewBroadcaster()
	c := &Controller{
		client: client, nodes: nodes.Lister(), services: svcs.Lister(), slices: sl.Lister(),
		listers:   ingress.Listers{Ingresses: ings.Lister(), Classes: classes.Lister(), Services: svcs.Lister(), Slices: sl.Lister(), Secrets: secrets.Lister()},
		tlsSecret: tls,
		queue:     controllerutil.NewQueue[string]("ingress-publisher", metrics),
		bc:        bc, rec: bc.NewRecorder(scheme.Scheme, v1.EventSource{Component: "orca-ingress"}),
		log: log.With("controller", "ingress-publisher"), reported: map[types.NamespacedName][]string{},
	}
	kick := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { c.queue.Add(syncKey) },
		UpdateFunc: func(any, any) { c.queue.Add(syncKey) },
		DeleteFunc: func(any) { c.queue.Add(syncKey) },
	}
	// Node updates are mostly heartbeats: only what the endpoints say
	// matters.
	nodeKick := cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { c.queue.Add(syncKey) },
		UpdateFunc: func(old, cur any) {
			o, ok1 := old.(*v1.Node)
			n, ok2 := cur.(*v1.Node)
			if !ok1 || !ok2 || !apiequality.Semantic.DeepEqual(Endpoints([]*v1.Node{o}), Endpoints([]*v1.Node{n})) {
				c.queue.Add(syncKey)
			}
		},
		DeleteFunc: func(any) { c.queue.Add(syncKey) },
	}
	// Of the slices, only the controller's own matter (to mend them):
	// problems do not depend on endpoints.
	sliceKick := cache.FilteringResourceEventHandler{
		FilterFunc: func(obj any) bool {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			s, ok := obj.(*discoveryv1.EndpointSlice)
			return ok && s.Labels[discoveryv1.LabelManagedBy] == ManagedBy
		},
		Handler: kick,
	}
	for _, h := range []struct {
		inf     cache.SharedIndexInformer
		handler cache.ResourceEventHandler
	}{
		{nodes.Informer(), nodeKick}, {svcs.Informer(), kick}, {sl.Informer(), sliceKick},
		{ings.Informer(), kick}, {classes.Informer(), kick}, {secrets.Informer(), kick},
	} {
		if _, err := h.inf.AddEventHandler(h.handler); err != nil {
			return nil, fmt.Errorf("ingress-publisher: %w", err)
		}
		c.synced = append(c.synced, h.inf.HasSynced)
	}
	if gw != nil {
		c.gwClient = gw
		c.gw = ingress.NewGatewayAPI(gw, factory, func() { c.queue.Add(syncKey) })
	}
	return c, nil
}

// Name implements controllermanager.Controller.
func (c *Controller) Name() string { return "ingress-publisher" }

// Run publishes until ctx ends; one worker suffices for the one key.
func (c *Controller) Run(ctx context.Context, _ int) error {
	c.tlsSecret.Start(ctx.Done())
	defer c.tlsSecret.Shutdown()
	l := controllerutil.Loop{
		Name: "ingress-publisher", Events: c.bc, Client: c.client, Synced: c.synced,
		Start:   func(context.Context) error { c.queue.Add(syncKey); return nil },
		Workers: []controllerutil.Workers{controllerutil.NewWorkers(1, c.queue, func(ctx context.Context, _ string) error { return c.sync(ctx) }, c.log, "key")},
	}
	if c.gw != nil {
		l.Alongside = append(l.Alongside, func(ctx context.Context) {
			if err := c.gw.Run(ctx); err != nil {
				c.log.Error("gateway API", "err", err)
			}
		})
	}
	return l.Run(ctx)
}

func (c *Controller) sync(ctx context.Context) error {
	svc, err := c.ensureService(ctx)
	if err != nil {
		return err
	}
	nodes, err := c.nodes.List(labels.Everything())
	if err != nil {
		return err
	}
	eps := Endpoints(nodes)
	var errs []error
	if err := c.syncSlices(ctx, svc, eps); err != nil {
		errs = append(errs, err)
	}
	if err := c.syncGatewayServices(ctx, eps); err != nil {
		errs = append(errs, err)
	}
	in, err := ingress.Gather(ingress.ClassName, c.listers)
	if err != nil {
		return err
	}
	_, problems := route.Build(in)
	c.report(in, problems)
	st := Status(svc)
	if err := c.writeStatus(ctx, in, st); err != nil {
		errs = append(errs, err)
	}
	var addrs []string
	for _, a := range st.Ingress {
		addrs = append(addrs, cmp.Or(a.IP, a.Hostname))
	}
	if err := c.syncGateways(ctx, &in, addrs); err != nil {
		errs = append(errs, err)
	}
	return utilerrors.NewAggregate(errs)
}

// ensureService creates the Service when it is missing. One that exists
// is left as it is: an administrator may have set source ranges on it.
func (c *Controller) ensureService(ctx context.Context) (*v1.Service, error) {
	svc, err := c.services.Services(ingress.ServiceNamespace).Get(ingress.ServiceName)
	if err == nil {
		return svc, nil
	}
	if !apierrors.IsNotFound(err) {
		return nil, err
	}
	svc, err = c.client.CoreV1().Services(ingress.ServiceNamespace).Create(ctx, Service(), metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return c.client.CoreV1().Services(ingress.ServiceNamespace).Get(ctx, ingress.ServiceName, metav1.GetOptions{})
	}
	if err != nil {
		return nil, fmt.Errorf("create service %s/%s: %w", ingress.ServiceNamespace, ingress.ServiceName, err)
	}
	c.log.Info("created the ingress service", "service", ingress.ServiceNamespace+"/"+ingress.ServiceName)
	return svc, nil
}

// syncSlices makes the Service's slices those Slices says for eps.
func (c *Controller) syncSlices(ctx context.Context, svc *v1.Service, eps []discoveryv1.Endpoint) error {
	have, err := c.slices.EndpointSlices(svc.Namespace).List(labels.SelectorFromSet(labels.Set{
		discoveryv1.LabelServiceName: svc.Name, discoveryv1.LabelManagedBy: ManagedBy}))
	if err != nil {
		return err
	}
	stale := map[string]bool{}
	for _, s := range have {
		stale[s.Name] = true
	}
	for _, want := range Slices(svc, eps) {
		delete(stale, want.Name)
		if err := c.syncSlice(ctx, want); err != nil {
			return err
		}
	}
	api := c.client.DiscoveryV1().EndpointSlices(svc.Namespace)
	for name := range stale {
		if err := api.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete endpoint slice %s: %w", name, err)
		}
	}
	return nil
}

// syncSlice creates want, or brings the slice of its name back to it.
func (c *Controller) syncSlice(ctx context.Context, want *discoveryv1.EndpointSlice) error {
	api := c.client.DiscoveryV1().EndpointSlices(want.Namespace)
	cur, err := c.slices.EndpointSlices(want.Namespace).Get(want.Name)
	switch {
	case apierrors.IsNotFound(err):
		if _, err := api.Create(ctx, want, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create endpoint slice %s/%s: %w", want.Namespace, want.Name, err)
		}
	case err != nil:
		return err
	case !sameSlice(cur, want):
		next := cur.DeepCopy()
		next.Labels, next.OwnerReferences = want.Labels, want.OwnerReferences
		next.AddressType, next.Endpoints, next.Ports = want.AddressType, want.Endpoints, want.Ports
		if _, err := api.Update(ctx, next, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("update endpoint slice %s/%s: %w", want.Namespace, want.Name, err)
		}
	}
	return nil
}

func sameSlice(cur, want *discoveryv1.EndpointSlice) bool {
	return apiequality.Semantic.DeepEqual(cur.Endpoints, want.Endpoints) && apiequality.Semantic.DeepEqual(cur.Ports, want.Ports) &&
		apiequality.Semantic.DeepEqual(cur.OwnerReferences, want.OwnerReferences) && cur.AddressType == want.AddressType
}

// report records a Warning event for each problem of an Ingress that was
// not reported at the last sync.
func (c *Controller) report(in route.Input, problems []route.Problem) {
	now := map[types.NamespacedName][]string{}
	for _, p := range problems {
		now[p.Ingress] = append(now[p.Ingress], p.Message)
	}
	byKey := map[types.NamespacedName]*networkingv1.Ingress{}
	for _, ing := range in.Ingresses {
		byKey[types.NamespacedName{Namespace: ing.Namespace, Name: ing.Name}] = ing
	}
	for key, msgs := range now {
		ing := byKey[key]
		if ing == nil {
			continue
		}
		for _, m := range msgs {
			if !slices.Contains(c.reported[key], m) {
				c.rec.Event(ing, v1.EventTypeWarning, "Routing", m)
			}
		}
	}
	c.reported = now
}

// writeStatus puts want into the status of every Ingress of the class
// whose status says otherwise.
func (c *Controller) writeStatus(ctx context.Context, in route.Input, want networkingv1.IngressLoadBalancerStatus) error {
	var errs []error
	for _, ing := range in.Ingresses {
		if !in.Ours(ing) || ing.DeletionTimestamp != nil || apiequality.Semantic.DeepEqual(ing.Status.LoadBalancer, want) {
			continue
		}
		next := ing.DeepCopy()
		next.Status.LoadBalancer = want
		_, err := c.client.NetworkingV1().Ingresses(next.Namespace).UpdateStatus(ctx, next, metav1.UpdateOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("status of ingress %s/%s: %w", next.Namespace, next.Name, err))
		}
	}
	return utilerrors.NewAggregate(errs)
}
