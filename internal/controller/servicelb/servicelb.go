// Package servicelb plays the cloud controller's part for Services of type
// LoadBalancer: it writes their status.loadBalancer.ingress, by default
// the InternalIPs of the Ready nodes (as k3s's ServiceLB), or one address
// per service out of a configured pool. Services asking for another
// loadBalancerClass are left alone, as upstream's service controller does.
package servicelb

import (
	"context"
	"fmt"
	"log/slog"
	"sort"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	"github.com/orca-project/orca/internal/controller/controllerutil"
	"github.com/orca-project/orca/internal/nodekind"
)

// excludeLabel keeps a node out of load balancers, as upstream.
const excludeLabel = "node.kubernetes.io/exclude-from-external-load-balancers"

// syncKey is the one queue item: assignments depend on one another
// (shared ports, pool addresses), so every change recomputes them all.
const syncKey = "all"

// Controller assigns load balancer addresses.
type Controller struct {
	client   kubernetes.Interface
	services corelisters.ServiceLister
	nodes    corelisters.NodeLister
	synced   []cache.InformerSynced
	pool     *Pool
	queue    workqueue.TypedRateLimitingInterface[string]
	bc       record.EventBroadcaster
	rec      record.EventRecorder
	log      *slog.Logger
	// failed remembers the last error reported per service, so that a
	// lasting conflict is one event, not one per sync.
	failed map[string]string
}

// New builds the controller; pool (a CIDR or FIRST-LAST) may be empty for
// node-address mode.
func New(client kubernetes.Interface, factory informers.SharedInformerFactory, pool string, metrics workqueue.MetricsProvider, log *slog.Logger) (*Controller, error) {
	var p *Pool
	if pool != "" {
		var err error
		if p, err = ParsePool(pool); err != nil {
			return nil, err
		}
	}
	svcs, nodes := factory.Core().V1().Services(), factory.Core().V1().Nodes()
	bc := record.NewBroadcaster()
	c := &Controller{
		client: client, services: svcs.Lister(), nodes: nodes.Lister(), pool: p,
		synced: []cache.InformerSynced{svcs.Informer().HasSynced, nodes.Informer().HasSynced},
		queue:  controllerutil.NewQueue[string]("service-lb", metrics),
		bc:     bc, rec: bc.NewRecorder(scheme.Scheme, v1.EventSource{Component: "service-controller"}),
		log: log.With("controller", "service-lb"), failed: map[string]string{},
	}
	h := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { c.queue.Add(syncKey) },
		UpdateFunc: func(any, any) { c.queue.Add(syncKey) },
		DeleteFunc: func(any) { c.queue.Add(syncKey) },
	}
	if _, err := svcs.Informer().AddEventHandler(h); err != nil {
		return nil, fmt.Errorf("service-lb: service handler: %w", err)
	}
	// Node updates are mostly heartbeats; only readiness and addresses
	// matter, and only in node-address mode.
	if p == nil {
		if _, err := nodes.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: func(any) { c.queue.Add(syncKey) },
			UpdateFunc: func(old, cur any) {
				o, ok1 := old.(*v1.Node)
				n, ok2 := cur.(*v1.Node)
				if !ok1 || !ok2 || nodeIP(o) != nodeIP(n) {
					c.queue.Add(syncKey)
				}
			},
			DeleteFunc: func(any) { c.queue.Add(syncKey) },
		}); err != nil {
			return nil, fmt.Errorf("service-lb: node handler: %w", err)
		}
	}
	return c, nil
}

// Name implements controllermanager.Controller.
func (c *Controller) Name() string { return "service-lb" }

// Run syncs until ctx ends; one worker suffices since there is one key.
func (c *Controller) Run(ctx context.Context, _ int) error {
	return controllerutil.Loop{
		Name: "service-lb", Events: c.bc, Client: c.client, Synced: c.synced,
		Start:   func(context.Context) error { c.queue.Add(syncKey); return nil },
		Workers: []controllerutil.Workers{controllerutil.NewWorkers(1, c.queue, func(ctx context.Context, _ string) error { return c.sync(ctx) }, c.log, "key")},
	}.Run(ctx)
}

// Wants reports whether this controller serves svc: a LoadBalancer
// without a class of its own.
func Wants(svc *v1.Service) bool {
	return svc.Spec.Type == v1.ServiceTypeLoadBalancer && svc.Spec.LoadBalancerClass == nil && svc.DeletionTimestamp == nil
}

func (c *Controller) sync(ctx context.Context) error {
	svcs, err := c.services.List(labels.Everything())
	if err != nil {
		return err
	}
	nodes, err := c.nodes.List(labels.Everything())
	if err != nil {
		return err
	}
	var reqs []Request
	sort.Slice(svcs, func(i, j int) bool { return svcs[i].CreationTimestamp.Before(&svcs[j].CreationTimestamp) })
	for i, s := range svcs {
		if Wants(s) {
			reqs = append(reqs, request(s, i))
		}
	}
	got := Assign(reqs, NodeIPs(nodes), c.pool)
	var errs []error
	for _, s := range svcs {
		key := s.Namespace + "/" + s.Name
		var want []v1.LoadBalancerIngress
		switch {
		case Wants(s):
			a := got[key]
			if a.Error != "" {
				if c.failed[key] != a.Error {
					c.failed[key] = a.Error
					c.rec.Eventf(s, v1.EventTypeWarning, "SyncLoadBalancerFailed", "Error syncing load balancer: failed to ensure load balancer: %s", a.Error)
				}
			} else {
				delete(c.failed, key)
			}
			want = ingress(a.IPs)
		case s.Spec.Type != v1.ServiceTypeLoadBalancer:
			// A service that stopped being a LoadBalancer gives its
			// addresses back; one of another class is someone else's.
			delete(c.failed, key)
		default:
			continue
		}
		if apiequality.Semantic.DeepEqual(s.Status.LoadBalancer.Ingress, want) ||
			(len(want) == 0 && len(s.Status.LoadBalancer.Ingress) == 0) {
			continue
		}
		if err := c.writeStatus(ctx, s, want); err != nil {
			errs = append(errs, err)
		}
	}
	for key := range c.failed {
		if ns, name, _ := cache.SplitMetaNamespaceKey(key); !contains(svcs, ns, name) {
			delete(c.failed, key)
		}
	}
	return utilerrors.NewAggregate(errs)
}

func (c *Controller) writeStatus(ctx context.Context, s *v1.Service, want []v1.LoadBalancerIngress) error {
	ensuring := len(want) > 0
	if ensuring {
		c.rec.Event(s, v1.EventTypeNormal, "EnsuringLoadBalancer", "Ensuring load balancer")
	}
	next := s.DeepCopy()
	next.Status.LoadBalancer.Ingress = want
	_, err := c.client.CoreV1().Services(s.Namespace).UpdateStatus(ctx, next, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("update load balancer status of %s/%s: %w", s.Namespace, s.Name, err)
	}
	if ensuring {
		c.rec.Event(s, v1.EventTypeNormal, "EnsuredLoadBalancer", "Ensured load balancer")
		c.log.Info("load balancer addresses", "service", s.Namespace+"/"+s.Name, "ingress", want)
	} else {
		c.log.Info("load balancer addresses released", "service", s.Namespace+"/"+s.Name)
	}
	return nil
}

// request describes svc for Assign.
func request(s *v1.Service, order int) Request {
	r := Request{Key: s.Namespace + "/" + s.Name, Order: order}
	for _, p := range s.Spec.Ports {
		proto := p.Protocol
		if proto == "" {
			proto = v1.ProtocolTCP
		}
		r.Ports = append(r.Ports, Port{Port: p.Port, Protocol: string(proto)})
	}
	for _, in := range s.Status.LoadBalancer.Ingress {
		if in.IP != "" {
			r.Current = append(r.Current, in.IP)
		}
	}
	return r
}

// ingress is the status for ips, each a VIP as a cloud load balancer's.
func ingress(ips []string) []v1.LoadBalancerIngress {
	if len(ips) == 0 {
		return nil
	}
	vip := v1.LoadBalancerIPModeVIP
	out := make([]v1.LoadBalancerIngress, len(ips))
	for i, ip := range ips {
		out[i] = v1.LoadBalancerIngress{IP: ip, IPMode: &vip}
	}
	return out
}

// NodeIPs are the InternalIPs of the Ready nodes not excluded from load
// balancers, sorted.
func NodeIPs(nodes []*v1.Node) []string {
	var out []string
	for _, n := range nodes {
		if ip := nodeIP(n); ip != "" {
			out = append(out, ip)
		}
	}
	sort.Strings(out)
	return out
}

// nodeIP is n's InternalIP when n may serve load balancers, else "".
func nodeIP(n *v1.Node) string {
	// A simulated node serves nothing at its address.
	if _, ok := n.Labels[excludeLabel]; ok || nodekind.Simulated(n) {
		return ""
	}
	ready := false
	for _, c := range n.Status.Conditions {
		if c.Type == v1.NodeReady {
			ready = c.Status == v1.ConditionTrue
		}
	}
	if !ready {
		return ""
	}
	for _, a := range n.Status.Addresses {
		if a.Type == v1.NodeInternalIP {
			return a.Address
		}
	}
	return ""
}

func contains(svcs []*v1.Service, ns, name string) bool {
	for _, s := range svcs {
		if s.Namespace == ns && s.Name == name {
			return true
		}
	}
	return false
}
