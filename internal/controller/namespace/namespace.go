// Package namespace empties a namespace being deleted: it deletes every
// namespaced object in it, across every served resource found through
// discovery, reports progress in the namespace's status conditions, and
// once nothing is left removes the "kubernetes" finalizer through
// namespaces/{name}/finalize, after which the API server removes the
// namespace.
package namespace

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/orca-project/orca/internal/controller/controllerutil"
)

// recheck is how soon a namespace whose content is still going (objects
// held by finalizers or graceful deletion) is looked at again.
const recheck = 2 * time.Second

// Controller deletes the content of terminating namespaces. Keys are
// namespace names.
type Controller struct {
	client    kubernetes.Interface
	metadata  metadata.Interface
	discovery discovery.DiscoveryInterface
	synced    cache.InformerSynced
	queue     workqueue.TypedRateLimitingInterface[string]
	log       *slog.Logger
}

// New builds the controller over the shared namespace informer.
func New(client kubernetes.Interface, md metadata.Interface, disc discovery.DiscoveryInterface, factory informers.SharedInformerFactory, metrics workqueue.MetricsProvider, log *slog.Logger) (*Controller, error) {
	inf := factory.Core().V1().Namespaces().Informer()
	c := &Controller{
		client: client, metadata: md, discovery: disc, synced: inf.HasSynced,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](100*time.Millisecond, time.Minute),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "namespace", MetricsProvider: metrics}),
		log: log.With("controller", "namespace"),
	}
	enqueue := func(obj any) {
		if ns, ok := obj.(*corev1.Namespace); ok && ns.DeletionTimestamp != nil {
			c.queue.Add(ns.Name)
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
	}); err != nil {
		return nil, fmt.Errorf("namespace: event handler: %w", err)
	}
	return c, nil
}

// Name names the controller.
func (c *Controller) Name() string { return "namespace" }

// Run processes namespaces until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) error {
	return controllerutil.Loop{
		Name: "namespace", Synced: []cache.InformerSynced{c.synced},
		Workers: []controllerutil.Workers{controllerutil.NewWorkers(workers, c.queue, c.syncKey, c.log, "namespace")},
	}.Run(ctx)
}

// syncKey looks again, after recheck, at a namespace whose content is
// still going.
func (c *Controller) syncKey(ctx context.Context, key string) error {
	done, err := c.sync(ctx, key)
	if err == nil && !done {
		return controllerutil.RequeueAfter(recheck)
	}
	return err
}

// sync advances the deletion of one namespace; done is false while
// content remains.
func (c *Controller) sync(ctx context.Context, name string) (done bool, err error) {
	// A live read: acting on a cached namespace could finalize one that
	// was recreated under the same name.
	ns, err := c.client.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("get namespace: %w", err)
	}
	if ns.DeletionTimestamp == nil {
		return true, nil
	}
	if _, ok := withoutFinalizer(ns.Spec.Finalizers); !ok {
		return true, nil
	}
	start := time.Now()
	rep, err := c.deleteContent(ctx, ns.Name)
	if err != nil {
		return false, err
	}
	if err := c.updateConditions(ctx, ns, rep); err != nil {
		return false, err
	}
	if rep.discoveryErr != nil {
		return false, fmt.Errorf("discover resources: %w", rep.discoveryErr)
	}
	if len(rep.deleteErrs) > 0 {
		return false, fmt.Errorf("delete content: %w", errors.Join(rep.deleteErrs...))
	}
	if !rep.empty() {
		return false, nil
	}
	if err := c.finalize(ctx, ns.Name); err != nil {
		return false, err
	}
	c.log.Info("namespace emptied and finalized", "namespace", ns.Name, "took", time.Since(start))
	return true, nil
}

// deleteContent deletes what is in the namespace, resource by resource,
// and reports what is left.
func (c *Controller) deleteContent(ctx context.Context, ns string) (report, error) {
	rep := report{remaining: map[schema.GroupVersionResource]int{}, finalizers: map[string]int{}}
	lists, err := discovery.ServerPreferredNamespacedResources(c.discovery)
	if err != nil {
		var failed *discovery.ErrGroupDiscoveryFailed
		if !errors.As(err, &failed) {
			return rep, fmt.Errorf("discover resources: %w", err)
		}
		// Keep going with the groups that answered, as upstream does:
		// the namespace stays until the rest can be discovered too.
		rep.discoveryErr, rep.failedGroups = err, len(failed.Groups)
	}
	verbs := map[schema.GroupVersionResource]metav1.Verbs{}
	for _, l := range discovery.FilteredBy(discovery.SupportsAllVerbs{Verbs: []string{"list", "delete"}}, lists) {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			verbs[gv.WithResource(r.Name)] = r.Verbs
		}
	}
	gvrs := make([]schema.GroupVersionResource, 0, len(verbs))
	for gvr := range verbs {
		gvrs = append(gvrs, gvr)
	}
	for i, stage := range deletionStages(gvrs) {
		if i > 0 && !rep.empty() {
			// Upstream's OrderedNamespaceDeletion: what a pod may still be
			// using (config maps, secrets, claims, network policies) stays
			// until every pod is gone, so a workload is never left running
			// without its policy or its configuration.
			break
		}
		for _, gvr := range stage {
			n, fins, err := c.deleteResource(ctx, ns, gvr, slices.Contains(verbs[gvr], "deletecollection"))
			if err != nil {
				rep.deleteErrs = append(rep.deleteErrs, err)
				continue
			}
			rep.remaining[gvr] = n
			for f, k := range fins {
				rep.finalizers[f] += k
			}
		}
	}
	return rep, nil
}

// podsResource is what the namespace controller deletes before anything else.
var podsResource = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// deletionStages orders a namespace's resources for deletion: pods alone
// first, then everything else (sorted, so passes are reproducible). A
// stage starts only once the previous one has left nothing behind.
func deletionStages(gvrs []schema.GroupVersionResource) [][]schema.GroupVersionResource {
	var first, rest []schema.GroupVersionResource
	for _, gvr := range gvrs {
		if gvr.GroupResource() == podsResource.GroupResource() {
			first = append(first, gvr)
		} else {
			rest = append(rest, gvr)
		}
	}
	sort.Slice(rest, func(i, j int) bool { return rest[i].String() < rest[j].String() })
	if len(first) == 0 {
		return [][]schema.GroupVersionResource{rest}
	}
	return [][]schema.GroupVersionResource{first, rest}
}

// deleteResource deletes one resource's objects in the namespace and
// counts what is left (objects waiting on finalizers or graceful
// deletion) and the finalizers holding them.
func (c *Controller) deleteResource(ctx context.Context, ns string, gvr schema.GroupVersionResource, collection bool) (int, map[string]int, error) {
	client := c.metadata.Resource(gvr).Namespace(ns)
	background := metav1.DeletePropagationBackground
	opts := metav1.DeleteOptions{PropagationPolicy: &background}
	deleted := false
	if collection {
		err := client.DeleteCollection(ctx, opts, metav1.ListOptions{})
		switch {
		case err == nil:
			deleted = true
		case apierrors.IsMethodNotSupported(err) || apierrors.IsNotFound(err):
		default:
			return 0, nil, fmt.Errorf("delete collection of %s: %w", gvr.GroupResource(), err)
		}
	}
	list, err := client.List(ctx, metav1.ListOptions{})
	if err != nil {
		if apierrors.IsNotFound(err) {
			return 0, nil, nil
		}
		return 0, nil, fmt.Errorf("list %s: %w", gvr.GroupResource(), err)
	}
	if !deleted {
		for _, it := range list.Items {
			if it.DeletionTimestamp != nil {
				continue
			}
			o := opts
			o.Preconditions = &metav1.Preconditions{UID: &it.UID}
			if err := client.Delete(ctx, it.Name, o); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
				return 0, nil, fmt.Errorf("delete %s %s: %w", gvr.GroupResource(), it.Name, err)
			}
		}
		if list, err = client.List(ctx, metav1.ListOptions{}); err != nil {
			return 0, nil, fmt.Errorf("list %s: %w", gvr.GroupResource(), err)
		}
	}
	fins := map[string]int{}
	for _, it := range list.Items {
		for _, f := range it.Finalizers {
			fins[f]++
		}
	}
	return len(list.Items), fins, nil
}

// updateConditions writes the namespace's deletion conditions when they
// changed.
func (c *Controller) updateConditions(ctx context.Context, ns *corev1.Namespace, rep report) error {
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	next := mergeConditions(ns.Status.Conditions, failureConditions(rep, now), now)
	if apiequality.Semantic.DeepEqual(next, ns.Status.Conditions) {
		return nil
	}
	out := ns.DeepCopy()
	out.Status.Conditions = next
	if _, err := c.client.CoreV1().Namespaces().UpdateStatus(ctx, out, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("update status of namespace %s: %w", ns.Name, err)
	}
	return nil
}

// finalize removes the "kubernetes" finalizer from a fresh read of the
// namespace, retrying on conflicts.
func (c *Controller) finalize(ctx context.Context, name string) error {
	for {
		ns, err := c.client.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("get namespace %s: %w", name, err)
		}
		rest, ok := withoutFinalizer(ns.Spec.Finalizers)
		if !ok {
			return nil
		}
		out := ns.DeepCopy()
		out.Spec.Finalizers = rest
		_, err = c.client.CoreV1().Namespaces().Finalize(ctx, out, metav1.UpdateOptions{})
		switch {
		case err == nil, apierrors.IsNotFound(err):
			return nil
		case apierrors.IsConflict(err):
			continue
		default:
			return fmt.Errorf("finalize namespace %s: %w", name, err)
		}
	}
}
