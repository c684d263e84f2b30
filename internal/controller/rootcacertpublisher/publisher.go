// Package rootcacertpublisher keeps the "kube-root-ca.crt" ConfigMap,
// holding the cluster CA, in every active namespace: pods read it through
// their kube-api-access volume to verify the API server. It recreates the
// ConfigMap when deleted and restores its data when edited, as upstream's
// root-ca-cert-publisher does.
package rootcacertpublisher

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/orca-project/orca/internal/controller/controllerutil"
)

// Upstream's names, which pods and tools depend on.
const (
	ConfigMapName         = "kube-root-ca.crt"
	DataKey               = "ca.crt"
	DescriptionAnnotation = "kubernetes.io/description"
	Description           = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. " +
		"No other usage is guaranteed across distributions of Kubernetes clusters."
)

// Controller publishes the CA. Keys are namespace names.
type Controller struct {
	client   kubernetes.Interface
	rootCA   string
	nsLister corelisters.NamespaceLister
	cmLister corelisters.ConfigMapLister
	synced   []cache.InformerSynced
	queue    workqueue.TypedRateLimitingInterface[string]
	log      *slog.Logger
}

// New builds the controller over the shared informers; rootCA is the
// cluster CA bundle in PEM.
func New(client kubernetes.Interface, factory informers.SharedInformerFactory, rootCA []byte, metrics workqueue.MetricsProvider, log *slog.Logger) (*Controller, error) {
	if len(rootCA) == 0 {
		return nil, errors.New("root-ca-cert-publisher: no CA bundle")
	}
	nsInf := factory.Core().V1().Namespaces()
	cmInf := factory.Core().V1().ConfigMaps()
	c := &Controller{
		client:   client,
		rootCA:   string(rootCA),
		nsLister: nsInf.Lister(),
		cmLister: cmInf.Lister(),
		synced:   []cache.InformerSynced{nsInf.Informer().HasSynced, cmInf.Informer().HasSynced},
		queue:    controllerutil.NewQueue[string]("root_ca_cert_publisher", metrics),
		log:      log.With("controller", "root-ca-cert-publisher"),
	}
	if _, err := nsInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.namespaceChanged,
		UpdateFunc: func(_, obj any) { c.namespaceChanged(obj) },
	}); err != nil {
		return nil, fmt.Errorf("root-ca-cert-publisher: namespace handler: %w", err)
	}
	if _, err := cmInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, obj any) { c.configMapChanged(obj) },
		DeleteFunc: c.configMapChanged,
	}); err != nil {
		return nil, fmt.Errorf("root-ca-cert-publisher: configmap handler: %w", err)
	}
	return c, nil
}

// Name names the controller as upstream's controller manager does.
func (c *Controller) Name() string { return "root-ca-cert-publisher" }

func (c *Controller) namespaceChanged(obj any) {
	if ns, ok := obj.(*corev1.Namespace); ok && ns.Status.Phase == corev1.NamespaceActive {
		c.queue.Add(ns.Name)
	}
}

func (c *Controller) configMapChanged(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	if cm, ok := obj.(*corev1.ConfigMap); ok && cm.Name == ConfigMapName {
		c.queue.Add(cm.Namespace)
	}
}

// Run processes namespaces until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) error {
	return controllerutil.Loop{
		Name: "root-ca-cert-publisher", Synced: c.synced,
		Workers: []controllerutil.Workers{controllerutil.NewWorkers(workers, c.queue, c.sync, c.log, "namespace")},
	}.Run(ctx)
}

// sync makes the namespace's ConfigMap what Reconcile says it should be.
func (c *Controller) sync(ctx context.Context, namespace string) error {
	ns, err := c.nsLister.Get(namespace)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if ns.Status.Phase != corev1.NamespaceActive || ns.DeletionTimestamp != nil {
		return nil
	}
	cm, err := c.cmLister.ConfigMaps(namespace).Get(ConfigMapName)
	if apierrors.IsNotFound(err) {
		cm, err = nil, nil
	}
	if err != nil {
		return err
	}
	want, op := Reconcile(cm, c.rootCA)
	switch op {
	case Create:
		want.Namespace = namespace
		_, err = c.client.CoreV1().ConfigMaps(namespace).Create(ctx, want, metav1.CreateOptions{})
		// A namespace that is gone or terminating needs no CA.
		if apierrors.IsNotFound(err) || apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			return nil
		}
	case Update:
		_, err = c.client.CoreV1().ConfigMaps(namespace).Update(ctx, want, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("%s %s/%s: %w", op, namespace, ConfigMapName, err)
	}
	if op != None {
		c.log.Debug("published root CA", "namespace", namespace, "op", op)
	}
	return nil
}

// Op is what a namespace's ConfigMap needs.
type Op string

const (
	None   Op = "none"
	Create Op = "create"
	Update Op = "update"
)

// Reconcile decides, from the current ConfigMap (nil when missing), what
// to write. Only the data and the description annotation are owned; other
// labels and annotations a user added are kept, as upstream keeps them.
func Reconcile(cur *corev1.ConfigMap, rootCA string) (*corev1.ConfigMap, Op) {
	data := map[string]string{DataKey: rootCA}
	if cur == nil {
		return &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: ConfigMapName, Annotations: map[string]string{DescriptionAnnotation: Description}},
			Data:       data,
		}, Create
	}
	if maps.Equal(cur.Data, data) && cur.Annotations[DescriptionAnnotation] != "" {
		return cur, None
	}
	next := cur.DeepCopy()
	next.Data = data
	if next.Annotations == nil {
		next.Annotations = map[string]string{}
	}
	next.Annotations[DescriptionAnnotation] = Description
	return next, Update
}
