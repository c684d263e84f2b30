// Package pvcprotection is upstream's PVC protection controller (as of
// Kubernetes 1.37, with PersistentVolumeClaimUnusedSinceTime on, its
// default). It does two things:
//
//   - A claim being deleted keeps its kubernetes.io/pvc-protection
//     finalizer, and so stays, while a pod blocks the deletion
//     (podBlocksDeletion): a scheduled pod naming it in
//     spec.volumes[].persistentVolumeClaim until the pod object is gone,
//     whatever its phase, and a pod owning it through a generic ephemeral
//     volume (<pod>-<volume>) until the pod is shut down. A live claim
//     without the finalizer gets it.
//   - A live, Bound claim carries the Unused condition: True when no pod
//     that has not terminated refers to it (podUsesClaim), False when
//     one does, its lastTransitionTime when that last changed.
//
// Either question is asked of the pod informer's cache first, through an
// index of pods by the claims they name, and, when no pod there answers
// it, of a live list of the namespace's pods from the API server: the
// cache may not have seen a pod created a moment ago, and a finalizer
// removed on its word cannot be put back.
//
// Pod events requeue the claims the pod names; claim events requeue
// claims without the Unused condition or whose finalizer needs work. The
// controller emits no events, as upstream.
package pvcprotection

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

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
const Finalizer = "kubernetes.io/pvc-protection"

// PodClaimIndex indexes pods by the claims (namespace/name) they refer
// to, on the shared pod informer; upstream's name for the same index.
const PodClaimIndex = "pod-pvc-index"

// Controller syncs PersistentVolumeClaims by namespace/name.
type Controller struct {
	client kubernetes.Interface
	claims corelisters.PersistentVolumeClaimLister
	pods   cache.Indexer
	synced []cache.InformerSynced
	queue  workqueue.TypedRateLimitingInterface[string]
	log    *slog.Logger
	now    func() time.Time
}

// New builds the controller over the shared informers.
func New(client kubernetes.Interface, factory informers.SharedInformerFactory, metrics workqueue.MetricsProvider, log *slog.Logger) (*Controller, error) {
	pvcInf, podInf := factory.Core().V1().PersistentVolumeClaims(), factory.Core().V1().Pods()
	c := &Controller{
		client: client, claims: pvcInf.Lister(), pods: podInf.Informer().GetIndexer(),
		synced: []cache.InformerSynced{pvcInf.Informer().HasSynced, podInf.Informer().HasSynced},
		queue:  controllerutil.NewQueue[string]("pvcprotection", metrics),
		log:    log.With("controller", "pvc-protection"),
		now:    time.Now,
	}
	if err := addPodClaimIndex(podInf.Informer()); err != nil {
		return nil, fmt.Errorf("pvc-protection: pod index: %w", err)
	}
	if _, err := pvcInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.claimChanged,
		UpdateFunc: func(_, cur any) { c.claimChanged(cur) },
	}); err != nil {
		return nil, fmt.Errorf("pvc-protection: persistentvolumeclaim handler: %w", err)
	}
	if _, err := podInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.podChanged(nil, obj) },
		UpdateFunc: c.podChanged,
		DeleteFunc: func(obj any) { c.podChanged(nil, obj) },
	}); err != nil {
		return nil, fmt.Errorf("pvc-protection: pod handler: %w", err)
	}
	return c, nil
}

// addPodClaimIndex adds PodClaimIndex unless a controller sharing the
// informer added it first (adding an index twice is an error).
func addPodClaimIndex(inf cache.SharedIndexInformer) error {
	if _, ok := inf.GetIndexer().GetIndexers()[PodClaimIndex]; ok {
		return nil
	}
	return inf.AddIndexers(cache.Indexers{PodClaimIndex: podClaimKeys})
}

func podClaimKeys(obj any) ([]string, error) {
	if pod, ok := obj.(*v1.Pod); ok {
		return claimKeys(pod), nil
	}
	return nil, nil
}

// Name names the controller.
func (c *Controller) Name() string { return "pvc-protection" }

// Run processes claims until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) error {
	return controllerutil.Loop{
		Name: "pvc-protection", Synced: c.synced,
		Workers: []controllerutil.Workers{controllerutil.NewWorkers(workers, c.queue, c.sync, c.log, "persistentVolumeClaim")},
	}.Run(ctx)
}

// claimChanged queues a claim that lacks the Unused condition or whose
// finalizer needs work.
func (c *Controller) claimChanged(obj any) {
	pvc, ok := obj.(*v1.PersistentVolumeClaim)
	if !ok {
		return
	}
	hasUnused := slices.ContainsFunc(pvc.Status.Conditions, func(cond v1.PersistentVolumeClaimCondition) bool {
		return cond.Type == v1.PersistentVolumeClaimUnused
	})
	if hasUnused && decide(pvc) == keep {
		return
	}
	if key, err := cache.MetaNamespaceKeyFunc(pvc); err == nil {
		c.queue.Add(key)
	}
}

// podChanged queues the claims cur's pod names. An update whose old pod
// has another UID hides the deletion of that pod, whose claims are
// queued too.
func (c *Controller) podChanged(old, cur any) {
	pod := podOf(cur)
	if pod == nil {
		return
	}
	for _, key := range claimKeys(pod) {
		c.queue.Add(key)
	}
	if prev := podOf(old); prev != nil && prev.UID != pod.UID {
		for _, key := range claimKeys(prev) {
			c.queue.Add(key)
		}
	}
}

func podOf(obj any) *v1.Pod {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	pod, _ := obj.(*v1.Pod)
	return pod
}

func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	pvc, err := c.claims.PersistentVolumeClaims(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if tracksUnused(pvc) {
		user, err := c.findPod(ctx, pvc, podUsesClaim)
		if err != nil {
			return err
		}
		if cond := unusedCondition(pvc, user != nil, metav1.NewTime(c.now())); cond != nil {
			pvc = pvc.DeepCopy()
			pvc.Status.Conditions = withCondition(pvc.Status.Conditions, *cond)
			pvc, err = c.client.CoreV1().PersistentVolumeClaims(ns).UpdateStatus(ctx, pvc, metav1.UpdateOptions{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("update persistent volume claim %s Unused condition: %w", key, err)
			}
		}
	}
	switch decide(pvc) {
	case addFinalizer:
		err := c.setFinalizers(ctx, pvc, append(slices.Clone(pvc.Finalizers), Finalizer))
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	case checkUse:
		blocker, err := c.findPod(ctx, pvc, podBlocksDeletion)
		if err != nil {
			return err
		}
		if blocker != nil {
			c.log.Debug("keeping persistent volume claim because a pod uses it", "persistentVolumeClaim", key, "pod", blocker.Name)
			return nil
		}
		err = c.setFinalizers(ctx, pvc, slices.DeleteFunc(slices.Clone(pvc.Finalizers), func(f string) bool { return f == Finalizer }))
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		c.log.Info("removed protection finalizer from unused persistent volume claim", "persistentVolumeClaim", key)
	}
	return nil
}

// findPod is a pod of pvc's namespace for which match holds, nil when
// none does. The informer's cache answers quickly when a pod there
// matches; that none does is confirmed with a live list, since the cache
// may lag behind a pod just created.
func (c *Controller) findPod(ctx context.Context, pvc *v1.PersistentVolumeClaim, match func(*v1.Pod, *v1.PersistentVolumeClaim) bool) (*v1.Pod, error) {
	objs, err := c.pods.ByIndex(PodClaimIndex, pvc.Namespace+"/"+pvc.Name)
	if err != nil {
		// The live list below decides alone.
		c.log.Warn("cache-based list of pods failed", "persistentVolumeClaim", pvc.Namespace+"/"+pvc.Name, "err", err)
	}
	cached := make([]*v1.Pod, 0, len(objs))
	for _, o := range objs {
		if p, ok := o.(*v1.Pod); ok {
			cached = append(cached, p)
		}
	}
	if p := firstPod(pvc, cached, match); p != nil {
		return p, nil
	}
	list, err := c.client.CoreV1().Pods(pvc.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("live list of pods failed: %w", err)
	}
	live := make([]*v1.Pod, len(list.Items))
	for i := range list.Items {
		live[i] = &list.Items[i]
	}
	return firstPod(pvc, live, match), nil
}

// setFinalizers writes pvc with finalizers. pvc's resourceVersion makes
// the update fail with a conflict if the claim changed since it was read
// (another finalizer added, say); the key is then retried against the
// newer claim rather than overwriting it.
func (c *Controller) setFinalizers(ctx context.Context, pvc *v1.PersistentVolumeClaim, finalizers []string) error {
	pvc = pvc.DeepCopy()
	pvc.Finalizers = finalizers
	if _, err := c.client.CoreV1().PersistentVolumeClaims(pvc.Namespace).Update(ctx, pvc, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update persistent volume claim %s/%s finalizers: %w", pvc.Namespace, pvc.Name, err)
	}
	return nil
}
