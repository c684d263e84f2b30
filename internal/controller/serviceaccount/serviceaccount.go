// Package serviceaccount keeps a "default" ServiceAccount in every
// namespace that is not terminating, recreating it when it is deleted.
package serviceaccount

import (
	"context"
	"fmt"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/orca-project/orca/internal/controller/controllerutil"
)

// DefaultName is the ServiceAccount every namespace gets.
const DefaultName = "default"

// Controller ensures the default ServiceAccount. Keys are namespace names.
type Controller struct {
	client   kubernetes.Interface
	nsLister corelisters.NamespaceLister
	saLister corelisters.ServiceAccountLister
	synced   []cache.InformerSynced
	queue    workqueue.TypedRateLimitingInterface[string]
	log      *slog.Logger
}

// New builds the controller over the shared informers.
func New(client kubernetes.Interface, factory informers.SharedInformerFactory, metrics workqueue.MetricsProvider, log *slog.Logger) (*Controller, error) {
	nsInf := factory.Core().V1().Namespaces()
	saInf := factory.Core().V1().ServiceAccounts()
	c := &Controller{
		client:   client,
		nsLister: nsInf.Lister(),
		saLister: saInf.Lister(),
		synced:   []cache.InformerSynced{nsInf.Informer().HasSynced, saInf.Informer().HasSynced},
		queue:    controllerutil.NewQueue[string]("serviceaccount", metrics),
		log:      log.With("controller", "serviceaccount"),
	}
	if _, err := nsInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.enqueueNamespace(obj) },
		UpdateFunc: func(_, obj any) { c.enqueueNamespace(obj) },
	}); err != nil {
		return nil, fmt.Errorf("serviceaccount: namespace handler: %w", err)
	}
	if _, err := saInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		DeleteFunc: c.serviceAccountDeleted,
	}); err != nil {
		return nil, fmt.Errorf("serviceaccount: service account handler: %w", err)
	}
	return c, nil
}

// Name names the controller.
func (c *Controller) Name() string { return "serviceaccount" }

func (c *Controller) enqueueNamespace(obj any) {
	if ns, ok := obj.(*corev1.Namespace); ok {
		c.queue.Add(ns.Name)
	}
}

func (c *Controller) serviceAccountDeleted(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	if sa, ok := obj.(*corev1.ServiceAccount); ok && sa.Name == DefaultName {
		c.queue.Add(sa.Namespace)
	}
}

// Run processes namespaces until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) error {
	return controllerutil.Loop{
		Name: "serviceaccount", Synced: c.synced,
		Workers: []controllerutil.Workers{controllerutil.NewWorkers(workers, c.queue, c.sync, c.log, "namespace")},
	}.Run(ctx)
}

// sync creates the namespace's default ServiceAccount when it is missing.
func (c *Controller) sync(ctx context.Context, name string) error {
	ns, err := c.nsLister.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if !NeedsDefault(ns, c.hasDefault(name)) {
		return nil
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: DefaultName, Namespace: name}}
	_, err = c.client.CoreV1().ServiceAccounts(name).Create(ctx, sa, metav1.CreateOptions{})
	switch {
	case err == nil:
		c.log.Debug("created default service account", "namespace", name)
		return nil
	case apierrors.IsAlreadyExists(err):
		return nil
	case apierrors.IsForbidden(err) && apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		// The namespace began terminating after the cache saw it.
		return nil
	case apierrors.IsNotFound(err):
		return nil
	default:
		return fmt.Errorf("create default service account in %s: %w", name, err)
	}
}

func (c *Controller) hasDefault(ns string) bool {
	sas, err := c.saLister.ServiceAccounts(ns).List(labels.Everything())
	if err != nil {
		return false
	}
	for _, sa := range sas {
		if sa.Name == DefaultName {
			return true
		}
	}
	return false
}

// NeedsDefault decides whether a namespace lacks its default
// ServiceAccount: a terminating namespace gets none, because creating
// content there would race with the namespace controller emptying it.
func NeedsDefault(ns *corev1.Namespace, hasDefault bool) bool {
	if ns.DeletionTimestamp != nil || ns.Status.Phase == corev1.NamespaceTerminating {
		return false
	}
	return !hasDefault
}
