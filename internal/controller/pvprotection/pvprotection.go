// Package pvprotection is upstream's PV protection controller: a
// PersistentVolume being deleted keeps its kubernetes.io/pv-protection
// finalizer, and so stays, while it is Bound to a claim; once it is not,
// the finalizer goes and the volume with it. A volume that is not being
// deleted and lacks the finalizer (made before the
// StorageObjectInUseProtection admission plugin ran) gets it. The
// decision is the pure decide; sync applies it.
package pvprotection

import (
	"context"
	"fmt"
	"log/slog"
	"slices"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/orca-project/orca/internal/controller/controllerutil"
)

// Finalizer is the finalizer the controller removes, as upstream names it.
const Finalizer = "kubernetes.io/pv-protection"

// Controller syncs PersistentVolumes by name.
type Controller struct {
	client kubernetes.Interface
	pvs    corelisters.PersistentVolumeLister
	synced cache.InformerSynced
	queue  workqueue.TypedRateLimitingInterface[string]
	log    *slog.Logger
}

// New builds the controller over the shared informers.
func New(client kubernetes.Interface, factory informers.SharedInformerFactory, metrics workqueue.MetricsProvider, log *slog.Logger) (*Controller, error) {
	inf := factory.Core().V1().PersistentVolumes()
	c := &Controller{
		client: client, pvs: inf.Lister(), synced: inf.Informer().HasSynced,
		queue: controllerutil.NewQueue[string]("pvprotection", metrics),
		log:   log.With("controller", "pv-protection"),
	}
	if _, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, cur any) { c.enqueue(cur) },
	}); err != nil {
		return nil, fmt.Errorf("pv-protection: persistentvolume handler: %w", err)
	}
	return c, nil
}

// Name names the controller.
func (c *Controller) Name() string { return "pv-protection" }

// Run processes PersistentVolumes until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) error {
	return controllerutil.Loop{
		Name: "pv-protection", Synced: []cache.InformerSynced{c.synced},
		Workers: []controllerutil.Workers{controllerutil.NewWorkers(workers, c.queue, c.sync, c.log, "persistentVolume")},
	}.Run(ctx)
}

func (c *Controller) enqueue(obj any) {
	if pv, ok := obj.(*v1.PersistentVolume); ok && needsSync(pv) {
		c.queue.Add(pv.Name)
	}
}

// action is what sync does to a volume.
type action int

const (
	keep action = iota
	addFinalizer
	removeFinalizer
)

// needsSync is upstream's filter: a volume that lacks the finalizer, or
// one being deleted that still has it.
func needsSync(pv *v1.PersistentVolume) bool {
	has := slices.Contains(pv.Finalizers, Finalizer)
	return pv.DeletionTimestamp == nil && !has || pv.DeletionTimestamp != nil && has
}

// decide is what becomes of a volume's finalizer: it goes once the
// volume is being deleted and no longer Bound (status.phase, which the
// PV controller keeps), it is added to a live volume without it, and
// otherwise nothing changes.
func decide(pv *v1.PersistentVolume) action {
	has := slices.Contains(pv.Finalizers, Finalizer)
	switch {
	case pv.DeletionTimestamp != nil && has && pv.Status.Phase != v1.VolumeBound:
		return removeFinalizer
	case pv.DeletionTimestamp == nil && !has:
		return addFinalizer
	}
	return keep
}

func (c *Controller) sync(ctx context.Context, name string) error {
	pv, err := c.pvs.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	act := decide(pv)
	if act == keep {
		if pv.DeletionTimestamp != nil {
			c.log.Debug("keeping persistent volume because it is bound", "persistentVolume", name)
		}
		return nil
	}
	// The cached object's resourceVersion makes the update fail with a
	// conflict if the volume changed since; the key is then retried.
	pv = pv.DeepCopy()
	if act == removeFinalizer {
		pv.Finalizers = slices.DeleteFunc(pv.Finalizers, func(f string) bool { return f == Finalizer })
	} else {
		pv.Finalizers = append(pv.Finalizers, Finalizer)
	}
	if _, err := c.client.CoreV1().PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{}); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("update persistent volume %s finalizers: %w", name, err)
	}
	if act == removeFinalizer {
		c.log.Info("removed protection finalizer from persistent volume", "persistentVolume", name)
	} else {
		c.log.Debug("added protection finalizer to persistent volume", "persistentVolume", name)
	}
	return nil
}
