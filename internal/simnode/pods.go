package simnode

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/orca-project/orca/internal/controller/controllerutil"
)

// cidrRetry is how soon a pod on a node without a podCIDR is looked at
// again.
const cidrRetry = 2 * time.Second

// podWorker is the kubelet stand-in for every simulated node: one pod
// informer, one queue, a few workers. Deadlines (readiness delays, run
// ends, grace periods) are the queue's delayed adds, kept in its heap.
type podWorker struct {
	s     *Simulator
	nodes corelisters.NodeLister
	pods  cache.Indexer
	queue workqueue.TypedRateLimitingInterface[string]

	mu sync.Mutex
	// written is the resourceVersion of each pod's last status write
	// until the informer has caught up with it, so that a sync never
	// acts on a status older than its own.
	written map[types.UID]uint64
}

// startPods starts the pod informer (pods bound to any node; those of
// other nodes are cut to a stub) and waits until it has synced and the
// addresses of running pods are held.
func (s *Simulator) startPods(ctx context.Context, nodes corelisters.NodeLister) (*podWorker, error) {
	w := &podWorker{s: s, nodes: nodes, written: map[types.UID]uint64{},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](5*time.Millisecond, 10*time.Second),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "simnode-pods"}),
	}
	factory := informers.NewSharedInformerFactoryWithOptions(s.opts.Client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.FieldSelector = "spec.nodeName!=" }),
		informers.WithTransform(s.slim))
	inf := factory.Core().V1().Pods().Informer()
	w.pods = inf.GetIndexer()
	reg, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    w.added,
		UpdateFunc: func(_, obj any) { w.added(obj) },
		DeleteFunc: w.deleted,
	})
	if err != nil {
		return nil, fmt.Errorf("simnode: pod handler: %w", err)
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), reg.HasSynced) {
		return nil, fmt.Errorf("simnode: pod cache did not sync: %w", ctx.Err())
	}
	return w, nil
}

// slim keeps of a pod only what the simulation reads, to keep 150,000
// pods small: a stub for another node's pod, and for ours the spec
// fields the status depends on and the whole status.
func (s *Simulator) slim(obj any) (any, error) {
	p, ok := obj.(*v1.Pod)
	if !ok {
		return obj, nil
	}
	meta := metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, UID: p.UID, ResourceVersion: p.ResourceVersion}
	if !s.ours(p.Spec.NodeName) {
		return &v1.Pod{ObjectMeta: meta, Spec: v1.PodSpec{NodeName: p.Spec.NodeName}}, nil
	}
	meta.Generation = p.Generation
	meta.DeletionTimestamp, meta.DeletionGracePeriodSeconds = p.DeletionTimestamp, p.DeletionGracePeriodSeconds
	for k, v := range p.Annotations {
		if strings.HasPrefix(k, "sim.orca.io/") {
			if meta.Annotations == nil {
				meta.Annotations = map[string]string{}
			}
			meta.Annotations[k] = v
		}
	}
	slimContainers := func(list []v1.Container) []v1.Container {
		out := make([]v1.Container, len(list))
		for i, c := range list {
			out[i] = v1.Container{Name: c.Name, Image: c.Image, Resources: c.Resources, RestartPolicy: c.RestartPolicy}
			if c.ReadinessProbe != nil {
				out[i].ReadinessProbe = &v1.Probe{InitialDelaySeconds: c.ReadinessProbe.InitialDelaySeconds}
			}
		}
		return out
	}
	spec := v1.PodSpec{
		NodeName: p.Spec.NodeName, RestartPolicy: p.Spec.RestartPolicy, HostNetwork: p.Spec.HostNetwork,
		InitContainers: slimContainers(p.Spec.InitContainers), Containers: slimContainers(p.Spec.Containers),
		ReadinessGates: p.Spec.ReadinessGates,
	}
	for _, ec := range p.Spec.EphemeralContainers {
		spec.EphemeralContainers = append(spec.EphemeralContainers, v1.EphemeralContainer{
			EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: ec.Name, Image: ec.Image}})
	}
	return &v1.Pod{ObjectMeta: meta, Spec: spec, Status: p.Status}, nil
}

func (w *podWorker) added(obj any) {
	p, ok := obj.(*v1.Pod)
	if !ok || !w.s.ours(p.Spec.NodeName) {
		return
	}
	w.mu.Lock()
	if rv, ok := w.written[p.UID]; ok && resourceVersion(p) >= rv {
		delete(w.written, p.UID)
	}
	w.mu.Unlock()
	if p.Status.PodIP != "" && !p.Spec.HostNetwork {
		// Held at once, before any worker runs, so that a restarted
		// simulator never gives a running pod's address to a new one.
		if pool := w.pool(p.Spec.NodeName); pool != nil {
			n := w.s.byName[p.Spec.NodeName]
			n.mu.Lock()
			pool.Hold(p.UID, p.Status.PodIP)
			n.mu.Unlock()
		}
	}
	if key, err := cache.MetaNamespaceKeyFunc(p); err == nil {
		w.queue.Add(key)
	}
}

func (w *podWorker) deleted(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	p, ok := obj.(*v1.Pod)
	if !ok || !w.s.ours(p.Spec.NodeName) {
		return
	}
	w.release(p)
	w.mu.Lock()
	delete(w.written, p.UID)
	w.mu.Unlock()
}

// pool is a node's address pool, made when the node first shows a
// podCIDR; nil until then.
func (w *podWorker) pool(node string) *Pool {
	n := w.s.byName[node]
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.pool != nil {
		return n.pool
	}
	obj, err := w.nodes.Get(node)
	if err != nil || obj.Spec.PodCIDR == "" {
		return nil
	}
	p, err := NewPool(obj.Spec.PodCIDR)
	if err != nil {
		return nil
	}
	n.pool = p
	return p
}

func (w *podWorker) release(p *v1.Pod) {
	if pool := w.pool(p.Spec.NodeName); pool != nil {
		n := w.s.byName[p.Spec.NodeName]
		n.mu.Lock()
		pool.Release(p.UID)
		n.mu.Unlock()
	}
}

// address is the pod's address: the one its status shows, or a new one
// from its node's podCIDR. ok is false while the node has no podCIDR.
func (w *podWorker) address(p *v1.Pod) (ip string, ok bool, err error) {
	if p.Spec.HostNetwork {
		return "", true, nil
	}
	if p.Status.PodIP != "" {
		return p.Status.PodIP, true, nil
	}
	n := w.s.byName[p.Spec.NodeName]
	pool := w.pool(p.Spec.NodeName)
	if pool == nil {
		n.mu.Lock()
		if !n.waitLogged {
			n.waitLogged = true
			w.s.opts.Log.Warn("simulated node has no podCIDR yet; its pods wait for one (is the cluster CIDR large enough for every node?)", "node", p.Spec.NodeName)
		}
		n.mu.Unlock()
		return "", false, nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	ip, err = pool.Allocate(p.UID)
	return ip, err == nil, err
}

func (w *podWorker) run(ctx context.Context, workers int) {
	go func() { <-ctx.Done(); w.queue.ShutDown() }()
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			controllerutil.ProcessQueue(ctx, w.queue, w.sync, w.s.opts.Log, "pod")
		}()
	}
	wg.Wait()
}

// sync does what a kubelet would do for the pod now and asks to be woken
// when the clock alone would change that.
func (w *podWorker) sync(ctx context.Context, key string) error {
	obj, exists, err := w.pods.GetByKey(key)
	if err != nil || !exists {
		return err
	}
	p := obj.(*v1.Pod)
	n, ok := w.s.byName[p.Spec.NodeName]
	if !ok {
		return nil
	}
	w.mu.Lock()
	rv, stale := w.written[p.UID]
	w.mu.Unlock()
	if stale && resourceVersion(p) < rv {
		return nil // our newer write is on its way and queues the pod again
	}
	terminal := p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed
	ip := p.Status.PodIP
	if p.DeletionTimestamp == nil && !terminal {
		var ok bool
		if ip, ok, err = w.address(p); err != nil {
			return fmt.Errorf("pod %s: %w", key, err)
		} else if !ok {
			w.queue.AddAfter(key, cidrRetry)
			return nil
		}
	}
	plan := Plan(PodInput{Pod: p, PodIP: ip, HostIP: n.profile.Spec.Addresses[0].Address, Now: time.Now()})
	pods := w.s.opts.Client.CoreV1().Pods(p.Namespace)
	if plan.Delete {
		err := pods.Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64), Preconditions: metav1.NewUIDPreconditions(string(p.UID))})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("delete pod %s: %w", key, err)
		}
		w.s.podDeletions.Add(1)
		w.release(p)
		return nil
	}
	if plan.Status != nil {
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"uid": p.UID}, "status": plan.Status})
		if err != nil {
			return err
		}
		updated, err := pods.Patch(ctx, p.Name, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("pod %s status: %w", key, err)
		}
		w.s.podStatuses.Add(1)
		w.mu.Lock()
		w.written[p.UID] = resourceVersion(updated)
		w.mu.Unlock()
		if plan.Status.Phase == v1.PodSucceeded || plan.Status.Phase == v1.PodFailed {
			w.release(p) // the sandbox is gone; the status keeps the address
		}
	}
	if !plan.Wake.IsZero() {
		w.queue.AddAfter(key, time.Until(plan.Wake))
	}
	return nil
}

// resourceVersion is an object's resourceVersion as a number (etcd's
// revision); 0 when it is not one.
func resourceVersion(p metav1.Object) uint64 {
	n, _ := strconv.ParseUint(p.GetResourceVersion(), 10, 64)
	return n
}
