// Package replicaset keeps the number of pods a ReplicaSet or a
// ReplicationController asks for: it creates missing pods from the
// template, adopts matching orphans, releases pods that stopped matching,
// deletes surplus pods cheapest first, and reports the counts in status.
// One controller serves both kinds through a small adapter, as upstream.
package replicaset

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	"github.com/orca-project/orca/internal/controller/controllerutil"
)

// BurstReplicas caps the pods one sync creates or deletes, as upstream,
// so one huge scale does not starve the other ReplicaSets.
const BurstReplicas = 500

// Controller reconciles one kind. Keys are namespace/name.
type Controller struct {
	kind   *kind
	client kubernetes.Interface
	pods   corelisters.PodLister
	// podIndex finds pods by controller (PodControllerIndex).
	podIndex     cache.Indexer
	synced       []cache.InformerSynced
	queue        workqueue.TypedRateLimitingInterface[string]
	expectations *controllerutil.Expectations
	events       record.EventBroadcaster
	podControl   controllerutil.PodControl
	log          *slog.Logger
	now          func() time.Time
}

// NewReplicaSet builds the ReplicaSet controller.
func NewReplicaSet(client kubernetes.Interface, factory informers.SharedInformerFactory, metrics workqueue.MetricsProvider, log *slog.Logger) (*Controller, error) {
	return newController(replicaSetKind(client, factory), client, factory, metrics, log)
}

// NewReplicationController builds the ReplicationController controller.
func NewReplicationController(client kubernetes.Interface, factory informers.SharedInformerFactory, metrics workqueue.MetricsProvider, log *slog.Logger) (*Controller, error) {
	return newController(replicationControllerKind(client, factory), client, factory, metrics, log)
}

func newController(k *kind, client kubernetes.Interface, factory informers.SharedInformerFactory, metrics workqueue.MetricsProvider, log *slog.Logger) (*Controller, error) {
	podInf := factory.Core().V1().Pods()
	events := record.NewBroadcaster()
	c := &Controller{
		kind:         k,
		client:       client,
		pods:         podInf.Lister(),
		podIndex:     podInf.Informer().GetIndexer(),
		synced:       []cache.InformerSynced{podInf.Informer().HasSynced, k.informer.HasSynced},
		queue:        controllerutil.NewQueue[string](k.name, metrics),
		expectations: controllerutil.NewExpectations(),
		events:       events,
		podControl: controllerutil.PodControl{Client: client,
			Recorder: events.NewRecorder(scheme.Scheme, v1.EventSource{Component: k.component})},
		log: log.With("controller", k.name),
		now: time.Now,
	}
	if err := controllerutil.AddPodControllerIndex(podInf.Informer()); err != nil {
		return nil, fmt.Errorf("%s: pod index: %w", k.name, err)
	}
	if _, err := k.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueOwner,
		UpdateFunc: func(_, obj any) { c.enqueueOwner(obj) },
		DeleteFunc: c.ownerDeleted,
	}); err != nil {
		return nil, fmt.Errorf("%s: owner handler: %w", k.name, err)
	}
	if _, err := podInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.addPod,
		UpdateFunc: c.updatePod,
		DeleteFunc: c.deletePod,
	}); err != nil {
		return nil, fmt.Errorf("%s: pod handler: %w", k.name, err)
	}
	return c, nil
}

// Name names the controller.
func (c *Controller) Name() string { return c.kind.name }

func key(namespace, name string) string { return namespace + "/" + name }

func (c *Controller) enqueueOwner(obj any) {
	if rs := c.kind.convert(obj); rs != nil {
		c.queue.Add(key(rs.Namespace, rs.Name))
	}
}

func (c *Controller) ownerDeleted(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	if rs := c.kind.convert(obj); rs != nil {
		k := key(rs.Namespace, rs.Name)
		c.expectations.Delete(k)
		c.queue.Add(k)
	}
}

// ownerOf is the key of the object of this kind controlling p, if any.
func (c *Controller) ownerOf(p *v1.Pod) (string, bool) {
	ref := metav1.GetControllerOf(p)
	if ref == nil || ref.Kind != c.kind.gvk.Kind || ref.APIVersion != c.kind.gvk.GroupVersion().String() {
		return "", false
	}
	rs, err := c.kind.get(p.Namespace, ref.Name)
	if err != nil || rs.UID != ref.UID {
		return "", false
	}
	return key(rs.Namespace, rs.Name), true
}

// enqueueMatching queues every object of this kind whose selector matches
// an orphan, so one of them adopts it.
func (c *Controller) enqueueMatching(p *v1.Pod) {
	if len(p.Labels) == 0 {
		return
	}
	all, err := c.kind.list(p.Namespace)
	if err != nil {
		return
	}
	for _, rs := range all {
		sel, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
		if err != nil || sel.Empty() || !sel.Matches(labels.Set(p.Labels)) {
			continue
		}
		c.queue.Add(key(rs.Namespace, rs.Name))
	}
}

func (c *Controller) addPod(obj any) {
	p := obj.(*v1.Pod)
	if p.DeletionTimestamp != nil {
		// Restarted with a pod already on its way out: count it deleted
		// now, so the expectations are not left waiting.
		c.deletePod(p)
		return
	}
	if k, ok := c.ownerOf(p); ok {
		c.expectations.CreationObserved(k)
		c.queue.Add(k)
		return
	}
	if metav1.GetControllerOf(p) == nil {
		c.enqueueMatching(p)
	}
}

func (c *Controller) updatePod(oldObj, newObj any) {
	old, cur := oldObj.(*v1.Pod), newObj.(*v1.Pod)
	if cur.ResourceVersion == old.ResourceVersion {
		return
	}
	if cur.DeletionTimestamp != nil {
		// A terminating pod no longer counts, so the replacement can
		// start now rather than after the grace period.
		c.deletePod(cur)
		if !labels.Equals(old.Labels, cur.Labels) {
			c.deletePod(old)
		}
		return
	}
	oldRef, curRef := metav1.GetControllerOf(old), metav1.GetControllerOf(cur)
	if oldRef != nil && (curRef == nil || oldRef.UID != curRef.UID) {
		if k, ok := c.ownerOf(old); ok {
			c.queue.Add(k)
		}
	}
	if k, ok := c.ownerOf(cur); ok {
		c.queue.Add(k)
		return
	}
	if curRef == nil && (!labels.Equals(old.Labels, cur.Labels) || oldRef != nil) {
		c.enqueueMatching(cur)
	}
}

func (c *Controller) deletePod(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	p, ok := obj.(*v1.Pod)
	if !ok {
		return
	}
	if k, ok := c.ownerOf(p); ok {
		c.expectations.DeletionObserved(k, string(p.UID))
		c.queue.Add(k)
	}
}

// Run processes keys until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) error {
	return controllerutil.Loop{
		Name: c.kind.name, Events: c.events, Client: c.client, Synced: c.synced,
		Workers: []controllerutil.Workers{controllerutil.NewWorkers(workers, c.queue, c.sync, c.log, "key")},
	}.Run(ctx)
}

func (c *Controller) sync(ctx context.Context, k string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(k)
	if err != nil {
		return nil
	}
	rs, err := c.kind.get(ns, name)
	if apierrors.IsNotFound(err) {
		c.expectations.Delete(k)
		return nil
	}
	if err != nil {
		return err
	}
	selector, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
	if err != nil || selector.Empty() {
		// Validation rejects these; a selector matching every pod must
		// never drive creations or deletions.
		c.log.Error("invalid selector", "key", k, "err", err)
		return nil
	}
	needsSync := c.expectations.Satisfied(k)

	// Its own pods and the orphans it may adopt: no other pod concerns it.
	all, err := controllerutil.ControlledPods(c.podIndex, rs, true)
	if err != nil {
		return fmt.Errorf("list pods: %w", err)
	}
	var candidates []*v1.Pod
	var terminating int32
	for _, p := range all {
		if controllerutil.IsPodActive(p) {
			candidates = append(candidates, p)
		} else if p.DeletionTimestamp != nil && p.Status.Phase != v1.PodSucceeded && p.Status.Phase != v1.PodFailed {
			if ref := metav1.GetControllerOf(p); ref != nil && ref.UID == rs.UID && selector.Matches(labels.Set(p.Labels)) {
				terminating++
			}
		}
	}
	active, err := c.podControl.ClaimPods(ctx, rs, c.kind.gvk, selector, candidates)
	if err != nil {
		return err
	}

	var manageErr error
	if needsSync && rs.DeletionTimestamp == nil {
		manageErr = c.manage(ctx, k, rs, active)
	}

	now := c.now()
	st := Status(rs, active, terminating, manageErr, now)
	st.ObservedGeneration = rs.Generation
	if c.kind.gvk.Kind != "ReplicaSet" {
		st.TerminatingReplicas = nil
	}
	if !apiequality.Semantic.DeepEqual(st, rs.Status) {
		rs.Status = st
		if err := c.kind.updateStatus(ctx, rs); err != nil {
			// The next informer event brings the newer object back here.
			if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
				return manageErr
			}
			return errors.Join(manageErr, fmt.Errorf("update status: %w", err))
		}
	}
	if manageErr == nil {
		if d := AvailabilityRecheck(rs, active, now); d > 0 {
			c.queue.AddAfter(k, d)
		}
	}
	return manageErr
}

// manage creates or deletes pods so that active has the wanted count.
func (c *Controller) manage(ctx context.Context, k string, rs *appsv1.ReplicaSet, active []*v1.Pod) error {
	diff := len(active) - int(replicas(rs))
	owner := eventRef(rs, c.kind)
	switch {
	case diff < 0:
		n := min(-diff, BurstReplicas)
		// Expect all creations before the first is sent: its informer
		// event may arrive before Create returns.
		c.expectations.ExpectCreations(k, n)
		ref := controllerutil.OwnerRef(rs, c.kind.gvk)
		created, err := slowStartBatch(n, 1, func() error {
			pod := controllerutil.PodFromTemplate(&rs.Spec.Template, rs.Namespace, rs.Name, &ref)
			_, err := c.podControl.Create(ctx, pod, owner)
			if err != nil && apierrors.HasStatusCause(err, v1.NamespaceTerminatingCause) {
				return nil
			}
			return err
		})
		// Creations never sent will never be observed.
		for range n - created {
			c.expectations.CreationObserved(k)
		}
		if err != nil {
			// Not wrapped: this becomes the ReplicaFailure message, as
			// upstream's.
			return err
		}
	case diff > 0:
		n := min(diff, BurstReplicas)
		related := c.relatedPods(rs, active)
		doomed := PodsToDelete(active, related, n, c.now())
		uids := make([]string, len(doomed))
		for i, p := range doomed {
			uids[i] = string(p.UID)
		}
		c.expectations.ExpectDeletions(k, uids)
		var wg sync.WaitGroup
		errs := make(chan error, len(doomed))
		for _, p := range doomed {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := c.podControl.Delete(ctx, p, owner); err != nil {
					c.expectations.DeletionObserved(k, string(p.UID))
					errs <- err
				}
			}()
		}
		wg.Wait()
		close(errs)
		if err, failed := <-errs; failed {
			return err
		}
	}
	return nil
}

// relatedPods are the active pods of rs's family: those of every object
// of this kind sharing rs's controller (the ReplicaSets of one
// Deployment), or rs's own when it has none.
func (c *Controller) relatedPods(rs *appsv1.ReplicaSet, own []*v1.Pod) []*v1.Pod {
	ctrl := metav1.GetControllerOf(rs)
	if ctrl == nil {
		return own
	}
	siblings, err := c.kind.list(rs.Namespace)
	if err != nil {
		return own
	}
	var family []*appsv1.ReplicaSet
	for _, s := range siblings {
		if r := metav1.GetControllerOf(s); r != nil && r.UID == ctrl.UID {
			family = append(family, s)
		}
	}
	var out []*v1.Pod
	for _, s := range family {
		pods, err := controllerutil.ControlledPods(c.podIndex, s, false)
		if err != nil {
			return own
		}
		for _, p := range pods {
			if controllerutil.IsPodActive(p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// eventRef points events at the real object, whichever its kind.
func eventRef(rs *appsv1.ReplicaSet, k *kind) *v1.ObjectReference {
	return &v1.ObjectReference{
		APIVersion: k.gvk.GroupVersion().String(), Kind: k.gvk.Kind,
		Namespace: rs.Namespace, Name: rs.Name, UID: rs.UID, ResourceVersion: rs.ResourceVersion,
	}
}
