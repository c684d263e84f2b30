package main

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// simKubelet is a SIMULATED kubelet for every node at once: no containers
// run. It does through the API the two writes a real kubelet makes for a
// pod that starts at once and stops at once: it reports a bound pod
// Running with every container Ready, and it finishes a graceful deletion
// by deleting the pod with grace period 0. So the benchmark measures the
// control plane and not container start-up (bench/podstartup measures
// that).
type simKubelet struct {
	client kubernetes.Interface
	pods   cache.Indexer
	queue  workqueue.TypedRateLimitingInterface[string]
	writes atomic.Int64
}

// newSimKubelet feeds the kubelet from inf, a pod informer over every
// namespace; run starts it.
func newSimKubelet(client kubernetes.Interface, inf cache.SharedIndexInformer) (*simKubelet, error) {
	k := &simKubelet{
		client: client, pods: inf.GetIndexer(),
		queue: workqueue.NewTypedRateLimitingQueue(workqueue.NewTypedItemExponentialFailureRateLimiter[string](5*time.Millisecond, time.Second)),
	}
	enqueue := func(obj any) {
		if p, ok := obj.(*v1.Pod); ok && k.needsWork(p) {
			if key, err := cache.MetaNamespaceKeyFunc(p); err == nil {
				k.queue.Add(key)
			}
		}
	}
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: enqueue, UpdateFunc: func(_, o any) { enqueue(o) }})
	return k, err
}

// needsWork says whether a kubelet would write anything for p now.
func (k *simKubelet) needsWork(p *v1.Pod) bool {
	if p.Spec.NodeName == "" {
		return false
	}
	if p.DeletionTimestamp != nil {
		return true
	}
	return p.Status.Phase == "" || p.Status.Phase == v1.PodPending
}

// run works the queue on workers goroutines until ctx ends.
func (k *simKubelet) run(ctx context.Context, workers int) {
	go func() { <-ctx.Done(); k.queue.ShutDown() }()
	for range workers {
		go func() {
			for {
				key, quit := k.queue.Get()
				if quit {
					return
				}
				if err := k.sync(ctx, key); err != nil && ctx.Err() == nil {
					k.queue.AddRateLimited(key)
				} else {
					k.queue.Forget(key)
				}
				k.queue.Done(key)
			}
		}()
	}
}

func (k *simKubelet) sync(ctx context.Context, key string) error {
	obj, ok, err := k.pods.GetByKey(key)
	if err != nil || !ok {
		return err
	}
	p := obj.(*v1.Pod)
	if !k.needsWork(p) {
		return nil
	}
	k.writes.Add(1)
	if p.DeletionTimestamp != nil {
		err := k.client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{
			GracePeriodSeconds: new(int64), Preconditions: metav1.NewUIDPreconditions(string(p.UID)),
		})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return nil
		}
		return err
	}
	p = p.DeepCopy()
	p.Status = runningStatus(p)
	_, err = k.client.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	// A conflict means the informer has a newer pod on its way, which
	// queues the key again; retrying here as well does no harm.
	return err
}

// runningStatus is what a kubelet reports once every container of p has
// started and passed its readiness probe.
func runningStatus(p *v1.Pod) v1.PodStatus {
	now := metav1.Now()
	st := v1.PodStatus{
		Phase: v1.PodRunning, HostIP: "192.0.2.1", HostIPs: []v1.HostIP{{IP: "192.0.2.1"}},
		PodIP: podIP(p), StartTime: &now, QOSClass: p.Status.QOSClass,
	}
	st.PodIPs = []v1.PodIP{{IP: st.PodIP}}
	for _, t := range []v1.PodConditionType{v1.PodInitialized, v1.PodScheduled, v1.ContainersReady, v1.PodReady} {
		st.Conditions = append(st.Conditions, v1.PodCondition{Type: t, Status: v1.ConditionTrue, LastTransitionTime: now})
	}
	started := true
	for _, c := range p.Spec.Containers {
		st.ContainerStatuses = append(st.ContainerStatuses, v1.ContainerStatus{
			Name: c.Name, Image: c.Image, ImageID: c.Image, Ready: true, Started: &started,
			State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: now}},
		})
	}
	return st
}

// podIP gives each pod a distinct address so the endpoint controllers see
// as many endpoints as pods, as they would in a real cluster.
func podIP(p *v1.Pod) string {
	var h uint32 = 2166136261
	for _, c := range []byte(p.UID) {
		h = (h ^ uint32(c)) * 16777619
	}
	return fmt.Sprintf("10.%d.%d.%d", 64+h>>16%64, h>>8&0xff, 1+h%254)
}
