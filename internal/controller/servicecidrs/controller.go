// Package servicecidrs is upstream's service-cidr-controller: every
// ServiceCIDR gets the networking.k8s.io/service-cidr-finalizer and a
// Ready condition, and a ServiceCIDR being deleted keeps the finalizer,
// marked Ready=False with reason Terminating, while an address of the
// cluster-IP allocator lies in it and in no other ServiceCIDR. The
// decisions are the pure Decide and CanDelete; the controller applies
// them.
package servicecidrs

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/netip"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	metav1apply "k8s.io/client-go/applyconfigurations/meta/v1"
	networkingv1apply "k8s.io/client-go/applyconfigurations/networking/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	networkinglisters "k8s.io/client-go/listers/networking/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/orca-project/orca/internal/controller/controllerutil"
	"github.com/orca-project/orca/internal/registry/networking"
)

// FieldManager owns the Ready condition the controller applies.
const FieldManager = "service-cidr-controller"

// Controller syncs ServiceCIDRs by name.
type Controller struct {
	client  kubernetes.Interface
	cidrs   networkinglisters.ServiceCIDRLister
	ips     networkinglisters.IPAddressLister
	synced  []cache.InformerSynced
	queue   workqueue.TypedRateLimitingInterface[string]
	log     *slog.Logger
	timeNow func() time.Time
}

// New builds the controller over the shared informers.
func New(client kubernetes.Interface, factory informers.SharedInformerFactory, metrics workqueue.MetricsProvider, log *slog.Logger) (*Controller, error) {
	cidrInf, ipInf := factory.Networking().V1().ServiceCIDRs(), factory.Networking().V1().IPAddresses()
	c := &Controller{
		client: client, cidrs: cidrInf.Lister(), ips: ipInf.Lister(),
		synced: []cache.InformerSynced{cidrInf.Informer().HasSynced, ipInf.Informer().HasSynced},
		queue:  controllerutil.NewQueue[string]("servicecidrs", metrics),
		log:    log.With("controller", "service-cidr"), timeNow: time.Now,
	}
	if _, err := cidrInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.serviceCIDRAdded,
		UpdateFunc: func(_, obj any) { c.enqueue(obj) },
		DeleteFunc: c.enqueue,
	}); err != nil {
		return nil, fmt.Errorf("service-cidr: ServiceCIDR handler: %w", err)
	}
	// An address allocated or released may block or unblock a deletion.
	if _, err := ipInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.ipAddressChanged,
		DeleteFunc: c.ipAddressChanged,
	}); err != nil {
		return nil, fmt.Errorf("service-cidr: IPAddress handler: %w", err)
	}
	return c, nil
}

// Name implements controllermanager.Controller.
func (c *Controller) Name() string { return "service-cidr" }

func (c *Controller) enqueue(obj any) {
	if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
		c.queue.Add(key)
	}
}

// serviceCIDRAdded also looks again at the ServiceCIDRs the new one
// overlaps: it may be the parent that lets one being deleted go.
func (c *Controller) serviceCIDRAdded(obj any) {
	sc, ok := obj.(*networkingv1.ServiceCIDR)
	if !ok {
		return
	}
	c.queue.Add(sc.Name)
	all, err := c.cidrs.List(labels.Everything())
	if err != nil {
		return
	}
	for _, cidr := range sc.Spec.CIDRs {
		p, err := netip.ParsePrefix(cidr)
		if err != nil {
			continue
		}
		for _, other := range all {
			for _, oc := range other.Spec.CIDRs {
				if q, err := netip.ParsePrefix(oc); err == nil && q.Overlaps(p) {
					c.queue.Add(other.Name)
				}
			}
		}
	}
}

func (c *Controller) ipAddressChanged(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	ip, ok := obj.(*networkingv1.IPAddress)
	if !ok || ip.Labels[networkingv1.LabelManagedBy] != networking.IPAllocatorManager {
		return
	}
	addr, err := netip.ParseAddr(ip.Name)
	if err != nil {
		return
	}
	all, err := c.cidrs.List(labels.Everything())
	if err != nil {
		return
	}
	for _, name := range Containing(all, addr) {
		c.queue.Add(name)
	}
}

// Run processes ServiceCIDRs until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) error {
	return controllerutil.Loop{
		Name: "service-cidr", Synced: c.synced,
		Workers: []controllerutil.Workers{controllerutil.NewWorkers(workers, c.queue, c.sync, c.log, "serviceCIDR")},
	}.Run(ctx)
}

// sync applies Decide to one ServiceCIDR.
func (c *Controller) sync(ctx context.Context, name string) error {
	sc, err := c.cidrs.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	all, err := c.cidrs.List(labels.Everything())
	if err != nil {
		return err
	}
	ips, err := c.ips.List(labels.Everything())
	if err != nil {
		return err
	}
	plan := Decide(sc, all, ips, c.timeNow())
	api := c.client.NetworkingV1().ServiceCIDRs()
	if plan.AddFinalizer || plan.RemoveFinalizer {
		patch := map[string]any{"metadata": map[string]any{"finalizers": []string{networking.ServiceCIDRFinalizer}}}
		if plan.RemoveFinalizer {
			patch = map[string]any{"metadata": map[string]any{"$deleteFromPrimitiveList/finalizers": []string{networking.ServiceCIDRFinalizer}}}
			c.log.Info("ServiceCIDR no longer holds allocated addresses; letting it go", "serviceCIDR", name)
		}
		data, err := json.Marshal(patch)
		if err != nil {
			return err
		}
		if _, err := api.Patch(ctx, name, types.StrategicMergePatchType, data, metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	if cond := plan.Condition; cond != nil {
		status := networkingv1apply.ServiceCIDRStatus().WithConditions(metav1apply.Condition().
			WithType(cond.Type).WithStatus(cond.Status).WithReason(cond.Reason).WithMessage(cond.Message).
			WithLastTransitionTime(cond.LastTransitionTime))
		if _, err := api.ApplyStatus(ctx, networkingv1apply.ServiceCIDR(name).WithStatus(status),
			metav1.ApplyOptions{FieldManager: FieldManager, Force: true}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	if plan.RequeueAfter > 0 {
		c.queue.AddAfter(name, plan.RequeueAfter)
	}
	return nil
}
