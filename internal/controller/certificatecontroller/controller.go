// Package certificatecontroller is the loop the CertificateSigningRequest
// controllers share, as upstream's CertificateController: every change to
// a request queues its name, and a handler (signing, approving) gets a
// copy of each request not yet issued.
package certificatecontroller

import (
	"context"
	"fmt"
	"log/slog"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/informers"
	certificateslisters "k8s.io/client-go/listers/certificates/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/orca-project/orca/internal/controller/controllerutil"
)

// Handler acts on one request, which it may change and write. A request
// that already has a certificate never reaches it.
type Handler func(ctx context.Context, csr *certificatesv1.CertificateSigningRequest) error

// Controller runs a Handler over the requests.
type Controller struct {
	name    string
	handler Handler
	lister  certificateslisters.CertificateSigningRequestLister
	synced  cache.InformerSynced
	queue   workqueue.TypedRateLimitingInterface[string]
	log     *slog.Logger
}

// New builds a controller named name over the shared informers.
func New(name string, factory informers.SharedInformerFactory, handler Handler, metrics workqueue.MetricsProvider, log *slog.Logger) (*Controller, error) {
	inf := factory.Certificates().V1().CertificateSigningRequests()
	c := &Controller{
		name:    name,
		handler: handler,
		lister:  inf.Lister(),
		synced:  inf.Informer().HasSynced,
		queue:   controllerutil.NewQueue[string](name, metrics),
		log:     log.With("controller", name),
	}
	enqueue := func(obj any) {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		if csr, ok := obj.(*certificatesv1.CertificateSigningRequest); ok {
			c.queue.Add(csr.Name)
		}
	}
	if _, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
		DeleteFunc: enqueue,
	}); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return c, nil
}

// Name implements the controller manager's contract.
func (c *Controller) Name() string { return c.name }

// Run works the queue until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) error {
	return controllerutil.Loop{
		Name: c.name, Synced: []cache.InformerSynced{c.synced},
		Workers: []controllerutil.Workers{controllerutil.NewWorkers(workers, c.queue, c.sync, c.log, "csr")},
	}.Run(ctx)
}

func (c *Controller) sync(ctx context.Context, name string) error {
	csr, err := c.lister.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if len(csr.Status.Certificate) > 0 {
		// Issued: nothing left to do.
		return nil
	}
	return c.handler(ctx, csr.DeepCopy())
}
