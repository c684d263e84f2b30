// Package daemonset runs one pod of every DaemonSet on each node that
// qualifies for it, as upstream's daemonset controller: pods are pinned
// to their node by required node affinity and placed by the default
// scheduler; they follow nodes joining, leaving and changing; templates
// roll out by RollingUpdate (maxUnavailable, maxSurge) or OnDelete, with
// ControllerRevisions recording each template.
package daemonset

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/client-go/util/workqueue"

	"github.com/orca-project/orca/internal/controller/controllerutil"
)

var controllerKind = appsv1.SchemeGroupVersion.WithKind("DaemonSet")

const (
	// burstReplicas caps the pods one sync creates or deletes, as upstream.
	burstReplicas = 250
	// failedPodBackoff bounds how fast a node's failed daemon pods are
	// replaced (upstream: 1 s doubling to 15 min).
	failedPodBackoffInitial = time.Second
	failedPodBackoffMax     = 15 * time.Minute
)

// Controller reconciles DaemonSets. Keys are namespace/name.
type Controller struct {
	client     kubernetes.Interface
	dsLister   appslisters.DaemonSetLister
	revLister  appslisters.ControllerRevisionLister
	podLister  corelisters.PodLister
	podIndex   cache.Indexer
	nodeLister corelisters.NodeLister
	synced     []cache.InformerSynced
	queue      workqueue.TypedRateLimitingInterface[string]

	expectations *controllerutil.Expectations
	podControl   controllerutil.PodControl
	events       record.EventBroadcaster
	recorder     record.EventRecorder
	backoff      *flowcontrol.Backoff
	log          *slog.Logger
}

// New builds the controller over the shared informers.
func New(client kubernetes.Interface, factory informers.SharedInformerFactory, metrics workqueue.MetricsProvider, log *slog.Logger) (*Controller, error) {
	dsInf := factory.Apps().V1().DaemonSets()
	revInf := factory.Apps().V1().ControllerRevisions()
	podInf := factory.Core().V1().Pods()
	nodeInf := factory.Core().V1().Nodes()
	events := record.NewBroadcaster()
	recorder := events.NewRecorder(scheme.Scheme, v1.EventSource{Component: "daemonset-controller"})
	c := &Controller{
		client:     client,
		dsLister:   dsInf.Lister(),
		revLister:  revInf.Lister(),
		podLister:  podInf.Lister(),
		podIndex:   podInf.Informer().GetIndexer(),
		nodeLister: nodeInf.Lister(),
		synced: []cache.InformerSynced{dsInf.Informer().HasSynced, revInf.Informer().HasSynced,
			podInf.Informer().HasSynced, nodeInf.Informer().HasSynced},
		queue:        controllerutil.NewQueue[string]("daemonset", metrics),
		expectations: controllerutil.NewExpectations(),
		podControl:   controllerutil.PodControl{Client: client, Recorder: recorder},
		events:       events,
		recorder:     recorder,
		backoff:      flowcontrol.NewBackOff(failedPodBackoffInitial, failedPodBackoffMax),
		log:          log.With("controller", "daemonset"),
	}
	if err := controllerutil.AddPodControllerIndex(podInf.Informer()); err != nil {
		return nil, fmt.Errorf("daemonset: pod index: %w", err)
	}
	handlers := []struct {
		inf cache.SharedIndexInformer
		h   cache.ResourceEventHandler
	}{
		{dsInf.Informer(), cache.ResourceEventHandlerFuncs{
			AddFunc:    c.enqueue,
			UpdateFunc: func(_, cur any) { c.enqueue(cur) },
			DeleteFunc: c.daemonSetDeleted,
		}},
		{revInf.Informer(), cache.ResourceEventHandlerFuncs{
			AddFunc:    c.historyAdded,
			UpdateFunc: func(_, cur any) { c.enqueueOwner(cur) },
			DeleteFunc: c.enqueueOwner,
		}},
		{podInf.Informer(), cache.ResourceEventHandlerFuncs{
			AddFunc: c.podAdded, UpdateFunc: c.podUpdated, DeleteFunc: c.podDeleted,
		}},
		{nodeInf.Informer(), cache.ResourceEventHandlerFuncs{
			AddFunc: func(any) { c.enqueueAll() },
			UpdateFunc: func(old, cur any) {
				o, ok1 := old.(*v1.Node)
				n, ok2 := cur.(*v1.Node)
				if ok1 && ok2 && !nodeChangeMatters(o, n) {
					return
				}
				c.enqueueAll()
			},
			// No pod garbage collector removes the pods of a deleted
			// node here, so the controller deletes them itself.
			DeleteFunc: func(any) { c.enqueueAll() },
		}},
	}
	for _, h := range handlers {
		if _, err := h.inf.AddEventHandler(h.h); err != nil {
			return nil, fmt.Errorf("daemonset: add event handler: %w", err)
		}
	}
	return c, nil
}

// nodeChangeMatters ignores heartbeats: only labels, taints, the
// unschedulable flag and the rest of the spec decide where daemons run.
func nodeChangeMatters(old, cur *v1.Node) bool {
	return !equality.Semantic.DeepEqual(old.Labels, cur.Labels) || !equality.Semantic.DeepEqual(old.Spec, cur.Spec)
}

// Name names the controller.
func (c *Controller) Name() string { return "daemonset" }

// Run processes DaemonSets until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) error {
	return controllerutil.Loop{
		Name: "daemonset", Events: c.events, Client: c.client, Synced: c.synced,
		Workers:   []controllerutil.Workers{controllerutil.NewWorkers(workers, c.queue, c.sync, c.log, "daemonset")},
		Alongside: []func(context.Context){controllerutil.Every(time.Minute, func(context.Context) { c.backoff.GC() })},
	}.Run(ctx)
}

func (c *Controller) enqueue(obj any) {
	if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
		c.queue.Add(key)
	}
}

func (c *Controller) enqueueAll() {
	all, err := c.dsLister.List(labels.Everything())
	if err != nil {
		return
	}
	for _, ds := range all {
		c.enqueue(ds)
	}
}

func (c *Controller) daemonSetDeleted(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	ds, ok := obj.(*appsv1.DaemonSet)
	if !ok {
		return
	}
	key, _ := cache.MetaNamespaceKeyFunc(ds)
	c.expectations.Delete(key)
	c.queue.Add(key)
}

// resolve returns the DaemonSet a controller reference names, if it is
// still the same object.
func (c *Controller) resolve(namespace string, ref *metav1.OwnerReference) *appsv1.DaemonSet {
	if ref == nil || ref.Kind != controllerKind.Kind {
		return nil
	}
	ds, err := c.dsLister.DaemonSets(namespace).Get(ref.Name)
	if err != nil || ds.UID != ref.UID {
		return nil
	}
	return ds
}

func (c *Controller) enqueueOwner(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	m, ok := obj.(metav1.Object)
	if !ok {
		return
	}
	if ds := c.resolve(m.GetNamespace(), metav1.GetControllerOf(m)); ds != nil {
		c.enqueue(ds)
	}
}

// historyAdded wakes nobody for a new revision, as upstream's controller:
// the DaemonSet's own snapshots need no reaction, and one written by
// someone else is looked at when the DaemonSet next changes (upstream's
// ControllerRevision conformance spec counts a hand-made duplicate that a
// sync would fold into the current revision). A revision seen already
// terminating (a relist) is a deletion.
func (c *Controller) historyAdded(obj any) {
	if m, ok := obj.(metav1.Object); ok && m.GetDeletionTimestamp() != nil {
		c.enqueueOwner(obj)
	}
}

// enqueueMatching wakes the DaemonSets that could adopt an orphan pod.
func (c *Controller) enqueueMatching(pod *v1.Pod) {
	all, err := c.dsLister.DaemonSets(pod.Namespace).List(labels.Everything())
	if err != nil {
		return
	}
	for _, ds := range all {
		sel, err := metav1.LabelSelectorAsSelector(ds.Spec.Selector)
		if err == nil && !sel.Empty() && sel.Matches(labels.Set(pod.Labels)) {
			c.enqueue(ds)
		}
	}
}

func (c *Controller) podAdded(obj any) {
	pod, ok := obj.(*v1.Pod)
	if !ok {
		return
	}
	if pod.DeletionTimestamp != nil {
		// Seen for the first time already terminating (a relist).
		c.podDeleted(pod)
		return
	}
	if ref := metav1.GetControllerOf(pod); ref != nil {
		if ds := c.resolve(pod.Namespace, ref); ds != nil {
			key, _ := cache.MetaNamespaceKeyFunc(ds)
			c.expectations.CreationObserved(key)
			c.queue.Add(key)
		}
		return
	}
	c.enqueueMatching(pod)
}

func (c *Controller) podUpdated(oldObj, curObj any) {
	old, ok1 := oldObj.(*v1.Pod)
	cur, ok2 := curObj.(*v1.Pod)
	if !ok1 || !ok2 || old.ResourceVersion == cur.ResourceVersion {
		return
	}
	if cur.DeletionTimestamp != nil {
		// A graceful deletion is the deletion the controller waits for.
		c.podDeleted(cur)
		return
	}
	curRef, oldRef := metav1.GetControllerOf(cur), metav1.GetControllerOf(old)
	if oldRef != nil && (curRef == nil || oldRef.UID != curRef.UID) {
		if ds := c.resolve(old.Namespace, oldRef); ds != nil {
			c.enqueue(ds)
		}
	}
	if curRef != nil {
		ds := c.resolve(cur.Namespace, curRef)
		if ds == nil {
			return
		}
		c.enqueue(ds)
		if ds.Spec.MinReadySeconds > 0 && !controllerutil.IsPodReady(old) && controllerutil.IsPodReady(cur) {
			// Count it available once minReadySeconds have passed.
			key, _ := cache.MetaNamespaceKeyFunc(ds)
			c.queue.AddAfter(key, time.Duration(ds.Spec.MinReadySeconds)*time.Second+time.Second)
		}
		return
	}
	if !equality.Semantic.DeepEqual(old.Labels, cur.Labels) || oldRef != nil {
		c.enqueueMatching(cur)
	}
}

func (c *Controller) podDeleted(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	pod, ok := obj.(*v1.Pod)
	if !ok {
		return
	}
	ds := c.resolve(pod.Namespace, metav1.GetControllerOf(pod))
	if ds == nil {
		return
	}
	key, _ := cache.MetaNamespaceKeyFunc(ds)
	c.expectations.DeletionObserved(key, string(pod.UID))
	c.queue.Add(key)
}

// sync reconciles one DaemonSet: revisions, pods per node, the rolling
// update, old revisions, status.
func (c *Controller) sync(ctx context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	ds, err := c.dsLister.DaemonSets(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		c.expectations.Delete(key)
		return nil
	}
	if err != nil {
		return err
	}
	nodes, err := c.nodeLister.List(labels.Everything())
	if err != nil {
		return fmt.Errorf("list nodes: %w", err)
	}
	selector, err := metav1.LabelSelectorAsSelector(ds.Spec.Selector)
	if err != nil || selector.Empty() {
		c.recorder.Eventf(ds, v1.EventTypeWarning, "SelectingAll", "This daemon set is selecting all pods. A non-empty selector is required.")
		return nil
	}
	if ds.DeletionTimestamp != nil {
		return nil
	}
	revs, err := c.controlledRevisions(ds, selector)
	if err != nil {
		return err
	}
	cur, old, err := c.constructHistory(ctx, ds, revs)
	if err != nil {
		return fmt.Errorf("construct history of %s: %w", key, err)
	}
	hash := cur.Labels[appsv1.DefaultDaemonSetUniqueLabelKey]

	podsByNode, err := c.nodesToDaemonPods(ctx, ds, selector)
	if err != nil {
		return err
	}
	if !c.expectations.Satisfied(key) {
		// The cache has not seen this controller's last writes: only
		// refresh the counts, keeping observedGeneration.
		return c.updateStatus(ctx, ds, nodes, podsByNode, hash, false)
	}
	err = c.manage(ctx, key, ds, nodes, podsByNode, hash)
	if err == nil && c.expectations.Satisfied(key) {
		if ds.Spec.UpdateStrategy.Type == appsv1.RollingUpdateDaemonSetStrategyType {
			err = c.rollingUpdate(ctx, key, ds, nodes, podsByNode, hash)
		}
		if err == nil {
			err = c.cleanupHistory(ctx, ds, podsByNode, old)
		}
	}
	if statusErr := c.updateStatus(ctx, ds, nodes, podsByNode, hash, true); statusErr != nil {
		err = errors.Join(err, statusErr)
	}
	return err
}

func (c *Controller) controlledRevisions(ds *appsv1.DaemonSet, selector labels.Selector) ([]*appsv1.ControllerRevision, error) {
	all, err := c.revLister.ControllerRevisions(ds.Namespace).List(selector)
	if err != nil {
		return nil, fmt.Errorf("list revisions: %w", err)
	}
	var out []*appsv1.ControllerRevision
	for _, r := range all {
		if metav1.IsControlledBy(r, ds) {
			out = append(out, r.DeepCopy())
		}
	}
	return out, nil
}

// nodesToDaemonPods claims the DaemonSet's pods and groups them by the
// node they are for, leaving out finished pods already being deleted.
func (c *Controller) nodesToDaemonPods(ctx context.Context, ds *appsv1.DaemonSet, selector labels.Selector) (map[string][]*v1.Pod, error) {
	all, err := controllerutil.ControlledPods(c.podIndex, ds, true)
	if err != nil {
		return nil, fmt.Errorf("list pods: %w", err)
	}
	claimed, err := c.podControl.ClaimPods(ctx, ds, controllerKind, selector, all)
	if err != nil {
		return nil, err
	}
	out, homeless := groupByNode(claimed)
	for _, p := range homeless {
		c.log.Warn("daemon pod without a node", "pod", p.Namespace+"/"+p.Name)
	}
	return out, nil
}

// groupByNode groups daemon pods by the node they are for. Finished pods
// already being deleted are left out, as upstream: nothing is left to do
// with them. A pod still terminating stays, so that its node gets no
// replacement until it is gone.
func groupByNode(pods []*v1.Pod) (byNode map[string][]*v1.Pod, homeless []*v1.Pod) {
	byNode = map[string][]*v1.Pod{}
	for _, p := range pods {
		finished := p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed
		if finished && p.DeletionTimestamp != nil {
			continue
		}
		node, err := targetNodeName(p)
		if err != nil {
			homeless = append(homeless, p)
			continue
		}
		byNode[node] = append(byNode[node], p)
	}
	return byNode, homeless
}

// manage creates missing daemon pods and deletes surplus, finished and
// misplaced ones.
func (c *Controller) manage(ctx context.Context, key string, ds *appsv1.DaemonSet, nodes []*v1.Node, podsByNode map[string][]*v1.Pod, hash string) error {
	var create []string
	var del []*v1.Pod
	known := map[string]bool{}
	for _, node := range nodes {
		known[node.Name] = true
		shouldRun, shouldContinue := nodeShouldRunDaemonPod(node, ds)
		a := podsShouldBeOnNode(podsByNode[node.Name], shouldRun, shouldContinue, ds, hash)
		if a.create {
			create = append(create, node.Name)
		}
		del = append(del, a.delete...)
		for _, p := range a.failed {
			bkey := string(ds.UID) + "/" + node.Name
			now := c.backoff.Clock.Now()
			if c.backoff.IsInBackOffSinceUpdate(bkey, now) {
				c.queue.AddAfter(key, c.backoff.Get(bkey))
				continue
			}
			c.backoff.Next(bkey, now)
			c.recorder.Eventf(ds, v1.EventTypeWarning, "FailedDaemonPod", "Found failed daemon pod %s/%s on node %s, will try to kill it", p.Namespace, p.Name, node.Name)
			del = append(del, p)
		}
	}
	for node, pods := range podsByNode {
		if known[node] {
			continue
		}
		for _, p := range pods {
			if p.DeletionTimestamp == nil {
				del = append(del, p)
			}
		}
	}
	return c.syncNodes(ctx, key, ds, del, create, hash)
}

func (c *Controller) rollingUpdate(ctx context.Context, key string, ds *appsv1.DaemonSet, nodes []*v1.Node, podsByNode map[string][]*v1.Pod, hash string) error {
	shouldRun := map[string]bool{}
	nodePods := map[string][]*v1.Pod{}
	for _, node := range nodes {
		run, _ := nodeShouldRunDaemonPod(node, ds)
		shouldRun[node.Name] = run
		if pods, ok := podsByNode[node.Name]; ok || run {
			nodePods[node.Name] = pods
		}
	}
	del, create, err := rollingUpdatePlan(ds, hash, nodePods, shouldRun, time.Now())
	if err != nil {
		return fmt.Errorf("rolling update of %s: %w", key, err)
	}
	return c.syncNodes(ctx, key, ds, del, create, hash)
}

// podTemplate is the DaemonSet's template as its pods get it: the default
// tolerations and the revision labels added.
func podTemplate(ds *appsv1.DaemonSet, hash string) *v1.PodTemplateSpec {
	t := ds.Spec.Template.DeepCopy()
	addDaemonTolerations(&t.Spec)
	if t.Labels == nil {
		t.Labels = map[string]string{}
	}
	if gen, ok := ds.Annotations[appsv1.DeprecatedTemplateGeneration]; ok {
		t.Labels[podTemplateGenerationLabel] = gen
	}
	if hash != "" {
		t.Labels[appsv1.DefaultDaemonSetUniqueLabelKey] = hash
	}
	return t
}

// syncNodes creates pods on the named nodes, in batches that double after
// each success (a failing template costs one create, not hundreds), and
// deletes the given pods, recording expectations for both first.
func (c *Controller) syncNodes(ctx context.Context, key string, ds *appsv1.DaemonSet, del []*v1.Pod, create []string, hash string) error {
	if len(del) == 0 && len(create) == 0 {
		return nil
	}
	create = create[:min(len(create), burstReplicas)]
	del = del[:min(len(del), burstReplicas)]
	uids := make([]string, len(del))
	for i, p := range del {
		uids[i] = string(p.UID)
	}
	c.expectations.ExpectCreationsAndDeletions(key, len(create), uids)

	var mu sync.Mutex
	var errs []error
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	tmpl := podTemplate(ds, hash)
	ref := controllerutil.OwnerRef(ds, controllerKind)
	for pos, batch := 0, 1; pos < len(create); batch *= 2 {
		n := min(batch, len(create)-pos)
		before := len(errs)
		var wg sync.WaitGroup
		for _, node := range create[pos : pos+n] {
			wg.Add(1)
			go func() {
				defer wg.Done()
				pod := controllerutil.PodFromTemplate(tmpl, ds.Namespace, ds.Name, &ref)
				pod.Spec.Affinity = replaceNodeNameAffinity(pod.Spec.Affinity, node)
				if _, err := c.podControl.Create(ctx, pod, ds); err != nil {
					c.expectations.CreationObserved(key)
					if apierrors.HasStatusCause(err, v1.NamespaceTerminatingCause) {
						return
					}
					fail(fmt.Errorf("create daemon pod for node %s: %w", node, err))
				}
			}()
		}
		wg.Wait()
		pos += n
		if len(errs) > before {
			for range len(create) - pos {
				// Never to be created, so never to be observed.
				c.expectations.CreationObserved(key)
			}
			break
		}
	}
	var wg sync.WaitGroup
	for _, p := range del {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.podControl.Delete(ctx, p, ds); err != nil {
				c.expectations.DeletionObserved(key, string(p.UID))
				fail(err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (c *Controller) cleanupHistory(ctx context.Context, ds *appsv1.DaemonSet, podsByNode map[string][]*v1.Pod, old []*appsv1.ControllerRevision) error {
	limit := 10
	if ds.Spec.RevisionHistoryLimit != nil {
		limit = int(*ds.Spec.RevisionHistoryLimit)
	}
	live := map[string]bool{}
	for _, pods := range podsByNode {
		for _, p := range pods {
			if h := p.Labels[appsv1.DefaultDaemonSetUniqueLabelKey]; h != "" {
				live[h] = true
			}
		}
	}
	for _, r := range revisionsToPrune(old, limit, live) {
		err := c.client.AppsV1().ControllerRevisions(ds.Namespace).Delete(ctx, r.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete revision %s: %w", r.Name, err)
		}
	}
	return nil
}

// computeStatus counts, per node, whether the daemon should run there and
// what its oldest pod is doing, as upstream's updateDaemonSetStatus.
func computeStatus(ds *appsv1.DaemonSet, nodes []*v1.Node, podsByNode map[string][]*v1.Pod, hash string, now time.Time) appsv1.DaemonSetStatus {
	st := appsv1.DaemonSetStatus{ObservedGeneration: ds.Status.ObservedGeneration, CollisionCount: ds.Status.CollisionCount, Conditions: ds.Status.Conditions}
	for _, node := range nodes {
		shouldRun, _ := nodeShouldRunDaemonPod(node, ds)
		pods := podsByNode[node.Name]
		if !shouldRun {
			if len(pods) > 0 {
				st.NumberMisscheduled++
			}
			continue
		}
		st.DesiredNumberScheduled++
		if len(pods) == 0 {
			continue
		}
		st.CurrentNumberScheduled++
		sorted := append([]*v1.Pod(nil), pods...)
		byCreation(sorted)
		pod := sorted[0]
		if controllerutil.IsPodReady(pod) {
			st.NumberReady++
			if controllerutil.IsPodAvailable(pod, ds.Spec.MinReadySeconds, now) {
				st.NumberAvailable++
			}
		}
		if isPodUpdated(pod, hash, ds) {
			st.UpdatedNumberScheduled++
		}
	}
	st.NumberUnavailable = st.DesiredNumberScheduled - st.NumberAvailable
	return st
}

func (c *Controller) updateStatus(ctx context.Context, ds *appsv1.DaemonSet, nodes []*v1.Node, podsByNode map[string][]*v1.Pod, hash string, observed bool) error {
	st := computeStatus(ds, nodes, podsByNode, hash, time.Now())
	if observed {
		st.ObservedGeneration = ds.Generation
	}
	if ds.Spec.MinReadySeconds > 0 && st.NumberReady != st.NumberAvailable {
		key, _ := cache.MetaNamespaceKeyFunc(ds)
		c.queue.AddAfter(key, time.Duration(ds.Spec.MinReadySeconds)*time.Second)
	}
	if equality.Semantic.DeepEqual(ds.Status, st) {
		return nil
	}
	upd := ds.DeepCopy()
	upd.Status = st
	_, err := c.client.AppsV1().DaemonSets(ds.Namespace).UpdateStatus(ctx, upd, metav1.UpdateOptions{})
	if apierrors.IsConflict(err) {
		// The next sync, woken by that newer write, recounts.
		return nil
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("update status of %s/%s: %w", ds.Namespace, ds.Name, err)
	}
	return nil
}
