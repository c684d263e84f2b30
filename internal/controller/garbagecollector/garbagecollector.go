// Package garbagecollector deletes objects whose owners are gone, as
// upstream's garbage collector does: background cascading deletion,
// dangling dependents, foreground deletion (the "foregroundDeletion"
// finalizer) and orphaning (the "orphan" finalizer).
//
// It watches the metadata of every served resource that supports list,
// watch and delete (found through discovery, re-checked periodically),
// keeps an owner → dependents graph from ownerReferences, and queues
// object uids whose situation changed. A worker decides from the graph
// and, before deleting anything, confirms that an owner is really gone
// with a live read, because caches of different resources lag each other.
package garbagecollector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/lru"

	"github.com/orca-project/orca/internal/controller/controllerutil"
)

// ignored are resources nobody owns that change constantly; watching
// them would only cost (upstream ignores events too).
var ignored = sets.New(
	schema.GroupResource{Group: "", Resource: "events"},
	schema.GroupResource{Group: "events.k8s.io", Resource: "events"},
)

// rediscover is how often discovery is re-read for new resources.
const rediscover = 30 * time.Second

// Controller is the garbage collector.
type Controller struct {
	metadata  metadata.Interface
	dynamic   dynamic.Interface
	discovery discovery.DiscoveryInterface
	mapper    *restmapper.DeferredDiscoveryRESTMapper
	graph     *graph
	queue     workqueue.TypedRateLimitingInterface[types.UID]
	// absent remembers owners a live read found missing, so that a
	// thousand dependents of one deleted owner cost one read.
	absent *lru.Cache
	log    *slog.Logger

	mu       sync.Mutex
	monitors map[schema.GroupVersionResource]cache.SharedIndexInformer
}

// New builds the collector.
func New(md metadata.Interface, dyn dynamic.Interface, disc discovery.DiscoveryInterface, metrics workqueue.MetricsProvider, log *slog.Logger) *Controller {
	return &Controller{
		metadata: md, dynamic: dyn, discovery: disc,
		mapper:   restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc)),
		graph:    newGraph(),
		queue:    controllerutil.NewQueue[types.UID]("garbage_collector", metrics),
		absent:   lru.New(1000),
		log:      log.With("controller", "garbagecollector"),
		monitors: map[schema.GroupVersionResource]cache.SharedIndexInformer{},
	}
}

// Name names the controller.
func (c *Controller) Name() string { return "garbagecollector" }

// Run watches every deletable resource, waits until the graph holds all
// of them, then collects until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) error {
	if err := c.syncMonitors(ctx); err != nil {
		c.queue.ShutDown()
		return err
	}
	c.mu.Lock()
	var synced []cache.InformerSynced
	for _, inf := range c.monitors {
		synced = append(synced, inf.HasSynced)
	}
	c.mu.Unlock()
	// Acting on a partial graph would take present owners for absent
	// ones (a live read would catch that, but at a read per object).
	return controllerutil.Loop{
		Name: "garbage collector", Synced: synced,
		Start: func(context.Context) error {
			c.log.Info("garbage collector synced", "resources", len(synced))
			return nil
		},
		// An owner the graph has not observed yet is retried without
		// a warning: its informer event is on its way.
		Workers: []controllerutil.Workers{controllerutil.NewWorkers(workers, c.queue, c.sync, c.log, "uid",
			controllerutil.Expected(func(err error) bool { return errors.Is(err, errOwnerUnobserved) }))},
		Alongside: []func(context.Context){controllerutil.Every(rediscover, func(ctx context.Context) {
			if err := c.syncMonitors(ctx); err != nil {
				c.log.Warn("resource discovery failed", "err", err)
			}
		})},
	}.Run(ctx)
}

// deletableResources lists the served resources the collector watches.
func deletableResources(disc discovery.DiscoveryInterface) (map[schema.GroupVersionResource]struct{}, error) {
	lists, err := discovery.ServerPreferredResources(disc)
	var failed *discovery.ErrGroupDiscoveryFailed
	if err != nil && !errors.As(err, &failed) {
		return nil, fmt.Errorf("discover resources: %w", err)
	}
	gvrs, perr := discovery.GroupVersionResources(discovery.FilteredBy(discovery.SupportsAllVerbs{Verbs: []string{"list", "watch", "delete"}}, lists))
	if perr != nil {
		return nil, fmt.Errorf("parse discovered resources: %w", perr)
	}
	for gvr := range gvrs {
		if ignored.Has(gvr.GroupResource()) {
			delete(gvrs, gvr)
		}
	}
	// Groups that failed discovery keep their monitors; err says so.
	return gvrs, err
}

// syncMonitors starts a metadata informer for every deletable resource
// not watched yet.
func (c *Controller) syncMonitors(ctx context.Context) error {
	gvrs, err := deletableResources(c.discovery)
	if gvrs == nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	added := 0
	for gvr := range gvrs {
		if _, ok := c.monitors[gvr]; ok {
			continue
		}
		inf := metadatainformer.NewFilteredMetadataInformer(c.metadata, gvr, metav1.NamespaceAll, 0, cache.Indexers{}, nil).Informer()
		if _, herr := inf.AddEventHandler(c.handler(gvr)); herr != nil {
			return fmt.Errorf("watch %s: %w", gvr, herr)
		}
		c.monitors[gvr] = inf
		go inf.RunWithContext(ctx)
		added++
	}
	if added > 0 {
		c.mapper.Reset()
		c.log.Debug("watching resources", "added", added, "total", len(c.monitors))
	}
	return err
}

func (c *Controller) handler(gvr schema.GroupVersionResource) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.observe(gvr, obj, false) },
		UpdateFunc: func(_, obj any) { c.observe(gvr, obj, false) },
		DeleteFunc: func(obj any) { c.observe(gvr, obj, true) },
	}
}

// observe folds one informer event into the graph and queues what it
// makes worth a look.
func (c *Controller) observe(gvr schema.GroupVersionResource, obj any, deleted bool) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	m, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return
	}
	var old, cur *node
	if deleted {
		old = c.graph.remove(m.UID)
		if old == nil {
			old = nodeOf(gvr, &m.ObjectMeta)
		}
	} else {
		cur = nodeOf(gvr, &m.ObjectMeta)
		old = c.graph.upsert(cur)
	}
	for _, uid := range toEnqueue(old, cur, c.graph.get, c.graph.dependentsOf) {
		c.queue.Add(uid)
	}
}

// sync acts on one object: as an owner being deleted with the orphan or
// foregroundDeletion finalizer, or as a dependent whose owners may be
// gone.
func (c *Controller) sync(ctx context.Context, uid types.UID) error {
	n, ok := c.graph.get(uid)
	if !ok {
		return nil
	}
	switch {
	case n.orphaning():
		return c.orphan(ctx, n)
	case n.deletingDependents():
		if err := c.deleteDependents(ctx, n); err != nil {
			return err
		}
		// Its own owners may be gone too: fall through to the dependent
		// side only when nothing is left to wait for.
		return nil
	case n.deleting:
		return nil
	case len(n.owners) == 0:
		return nil
	}
	return c.collect(ctx, n)
}

// collect is the dependent side: delete n when none of its owners holds,
// or drop references that no longer hold.
func (c *Controller) collect(ctx context.Context, n *node) error {
	states, err := c.classify(ctx, n)
	if err != nil {
		return err
	}
	act, _ := decide(n.owners, states, c.graph.dependentsOf(n.uid))
	if act == keep {
		return c.unobserved(n)
	}
	// Decide again on a live read of the object itself: its owners may
	// have changed since the cache saw it.
	latest, err := c.live(ctx, n)
	if err != nil || latest == nil {
		return err
	}
	if latest.deleting && !latest.deletingDependents() {
		return nil
	}
	if states, err = c.classify(ctx, latest); err != nil {
		return err
	}
	act, drop := decide(latest.owners, states, c.graph.dependentsOf(latest.uid))
	switch act {
	case removeRefs:
		c.log.Debug("removing references to owners that are gone or deleting", "resource", latest.gvr.Resource, "namespace", latest.namespace, "name", latest.name, "owners", drop)
		return c.patchOwners(ctx, latest, withoutOwners(latest.owners, drop))
	case deleteForeground:
		return c.delete(ctx, latest, metav1.DeletePropagationForeground)
	case unblockForeground:
		c.log.Debug("a dependent is itself deleting its dependents: making owner references non-blocking to break a possible cycle", "resource", latest.gvr.Resource, "namespace", latest.namespace, "name", latest.name)
		if err := c.patchOwners(ctx, latest, unblocked(latest.owners)); err != nil {
			return err
		}
		return c.delete(ctx, latest, metav1.DeletePropagationForeground)
	case deleteObject:
		return c.delete(ctx, latest, propagation(latest))
	}
	return nil
}

// errOwnerUnobserved says a dependent is kept for an owner that a live
// read found but no watch has shown yet (its resource is new to the
// collector, or the watch lags): it is looked at again, with backoff,
// until the graph knows the owner, as upstream requeues such a dependent,
// so that an owner deleted before any watch saw it still frees its
// dependents.
var errOwnerUnobserved = errors.New("an owner has not been observed by a watch yet")

func (c *Controller) unobserved(n *node) error {
	for _, r := range n.owners {
		if _, ok := c.graph.get(r.UID); ok {
			continue
		}
		if _, gone := c.absent.Get(r.UID); gone {
			continue
		}
		return errOwnerUnobserved
	}
	return nil
}

// classify resolves each owner reference of n.
func (c *Controller) classify(ctx context.Context, n *node) ([]ownerState, error) {
	states := make([]ownerState, len(n.owners))
	for i, r := range n.owners {
		s, err := c.ownerState(ctx, n, r)
		if err != nil {
			return nil, err
		}
		states[i] = s
	}
	return states, nil
}

// ownerState trusts the graph when it knows the owner (a stale "present"
// only delays collection) and otherwise reads the owner live, by name,
// and compares uids: only a live miss makes a dependent dangling.
func (c *Controller) ownerState(ctx context.Context, dep *node, r metav1.OwnerReference) (ownerState, error) {
	if o, ok := c.graph.get(r.UID); ok {
		if o.deletingDependents() {
			return waiting, nil
		}
		return solid, nil
	}
	if _, ok := c.absent.Get(r.UID); ok {
		return dangling, nil
	}
	gvr, namespaced, err := c.resolve(r)
	if err != nil {
		return solid, err
	}
	ns := ""
	if namespaced {
		// A namespaced owner lives in its dependent's namespace; a
		// cluster-scoped dependent cannot have one, and the read below
		// then finds nothing, as upstream's does.
		ns = dep.namespace
	}
	owner, err := c.metadata.Resource(gvr).Namespace(ns).Get(ctx, r.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		c.absent.Add(r.UID, struct{}{})
		return dangling, nil
	case err != nil:
		return solid, fmt.Errorf("read owner %s %s/%s: %w", r.Kind, ns, r.Name, err)
	case owner.UID != r.UID:
		c.absent.Add(r.UID, struct{}{})
		return dangling, nil
	case owner.DeletionTimestamp != nil && slices.Contains(owner.Finalizers, metav1.FinalizerDeleteDependents):
		return waiting, nil
	default:
		return solid, nil
	}
}

// resolve maps an owner reference's apiVersion and kind to its resource.
func (c *Controller) resolve(r metav1.OwnerReference) (schema.GroupVersionResource, bool, error) {
	gv, err := schema.ParseGroupVersion(r.APIVersion)
	if err != nil {
		return schema.GroupVersionResource{}, false, fmt.Errorf("owner reference apiVersion %q: %w", r.APIVersion, err)
	}
	gk := schema.GroupKind{Group: gv.Group, Kind: r.Kind}
	m, err := c.mapper.RESTMapping(gk, gv.Version)
	if meta.IsNoMatchError(err) {
		c.mapper.Reset()
		m, err = c.mapper.RESTMapping(gk, gv.Version)
	}
	if err != nil {
		return schema.GroupVersionResource{}, false, fmt.Errorf("resolve owner kind %s: %w", gv.WithKind(r.Kind), err)
	}
	return m.Resource, m.Scope.Name() == meta.RESTScopeNameNamespace, nil
}

// live reads n again; nil when it is gone or was replaced.
func (c *Controller) live(ctx context.Context, n *node) (*node, error) {
	m, err := c.metadata.Resource(n.gvr).Namespace(n.namespace).Get(ctx, n.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s %s/%s: %w", n.gvr.Resource, n.namespace, n.name, err)
	}
	if m.UID != n.uid {
		return nil, nil
	}
	return nodeOf(n.gvr, &m.ObjectMeta), nil
}

// delete deletes n, guarded by its uid so that a same-named successor is
// never hit.
func (c *Controller) delete(ctx context.Context, n *node, policy metav1.DeletionPropagation) error {
	uid := n.uid
	err := c.metadata.Resource(n.gvr).Namespace(n.namespace).Delete(ctx, n.name, metav1.DeleteOptions{
		Preconditions: &metav1.Preconditions{UID: &uid}, PropagationPolicy: &policy,
	})
	if err == nil {
		c.log.Debug("deleted dependent", "resource", n.gvr.Resource, "namespace", n.namespace, "name", n.name, "propagation", policy)
	}
	if err == nil || apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return fmt.Errorf("delete %s %s/%s: %w", n.gvr.Resource, n.namespace, n.name, err)
}

// deleteDependents advances a foreground deletion: it queues every
// dependent not yet deleting (a worker then deletes it, or only drops
// the reference when it has other solid owners) and removes the
// foregroundDeletion finalizer once no blocking dependent is left.
func (c *Controller) deleteDependents(ctx context.Context, owner *node) error {
	deps := c.graph.dependentsOf(owner.uid)
	for _, d := range deps {
		if !d.deleting {
			c.queue.Add(d.uid)
		}
	}
	if n := blocking(owner.uid, deps); n > 0 {
		c.log.Debug("waiting for blocking dependents", "resource", owner.gvr.Resource, "namespace", owner.namespace, "name", owner.name, "blocking", n)
		return nil
	}
	return c.removeFinalizer(ctx, owner, metav1.FinalizerDeleteDependents)
}

// orphan removes the references to owner from its dependents, then the
// orphan finalizer from the owner.
func (c *Controller) orphan(ctx context.Context, owner *node) error {
	for _, d := range c.graph.dependentsOf(owner.uid) {
		latest, err := c.live(ctx, d)
		if err != nil {
			return err
		}
		if latest == nil {
			continue
		}
		if _, ok := latest.ownerRef(owner.uid); !ok {
			continue
		}
		if err := c.patchOwners(ctx, latest, withoutOwners(latest.owners, []types.UID{owner.uid})); err != nil {
			return err
		}
	}
	return c.removeFinalizer(ctx, owner, metav1.FinalizerOrphanDependents)
}

// patchOwners sets n's ownerReferences, guarded by the uid and
// resourceVersion of the live read n comes from.
func (c *Controller) patchOwners(ctx context.Context, n *node, refs []metav1.OwnerReference) error {
	patch := map[string]any{"metadata": map[string]any{
		"uid": n.uid, "resourceVersion": n.resourceVersion, "ownerReferences": refs,
	}}
	return c.patch(ctx, n, patch)
}

// removeFinalizer removes one finalizer from a live read of n.
func (c *Controller) removeFinalizer(ctx context.Context, n *node, finalizer string) error {
	m, err := c.metadata.Resource(n.gvr).Namespace(n.namespace).Get(ctx, n.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s %s/%s: %w", n.gvr.Resource, n.namespace, n.name, err)
	}
	if m.UID != n.uid || !slices.Contains(m.Finalizers, finalizer) {
		return nil
	}
	rest := slices.DeleteFunc(slices.Clone(m.Finalizers), func(f string) bool { return f == finalizer })
	patch := map[string]any{"metadata": map[string]any{
		"uid": n.uid, "resourceVersion": m.ResourceVersion, "finalizers": rest,
	}}
	if err := c.patch(ctx, n, patch); err != nil {
		return err
	}
	c.log.Debug("removed finalizer", "finalizer", finalizer, "resource", n.gvr.Resource, "namespace", n.namespace, "name", n.name)
	return nil
}

// patch sends a JSON merge patch; a conflict is returned so that the
// item is retried from a fresh read. Writes go through the dynamic
// client because the metadata client expects a metadata-only answer,
// which the API server gives to reads only.
func (c *Controller) patch(ctx context.Context, n *node, patch map[string]any) error {
	data, err := json.Marshal(patch)
	if err != nil {
		return fmt.Errorf("encode patch: %w", err)
	}
	_, err = c.dynamic.Resource(n.gvr).Namespace(n.namespace).Patch(ctx, n.name, types.MergePatchType, data, metav1.PatchOptions{})
	if err == nil || apierrors.IsNotFound(err) {
		return nil
	}
	return fmt.Errorf("patch %s %s/%s: %w", n.gvr.Resource, n.namespace, n.name, err)
}
