package main

import (
	"context"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// podTimes is what the tracker saw of one pod: its creationTimestamp and
// when the watch first showed it, bound, and with every container
// started (Running).
type podTimes struct {
	created, seen, bound, running time.Time
}

// podTracker measures pod start-up as upstream's SLI defines it: from
// the pod's creationTimestamp to the moment a watch observes all its
// containers reported started. The timestamp has a resolution of one
// second, so a pod's latency is overstated by up to a second, as
// upstream's measurement is; the first watch sighting gives a second,
// finer reading (create as seen to Running as seen).
type podTracker struct {
	mu      sync.Mutex
	pods    map[types.UID]*podTimes
	running int
}

func newPodTracker() *podTracker { return &podTracker{pods: map[types.UID]*podTimes{}} }

// start watches the run's pods. Only metadata, the node name, the phase
// and the container states are kept: 150,000 pods are held here too.
func (t *podTracker) start(ctx context.Context, cs kubernetes.Interface, run string) {
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector = runLabel + "=" + run
	}))
	inf := f.Core().V1().Pods().Informer()
	_ = inf.SetTransform(func(obj any) (any, error) {
		p, ok := obj.(*v1.Pod)
		if !ok {
			return obj, nil
		}
		return &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, UID: p.UID,
				ResourceVersion: p.ResourceVersion, CreationTimestamp: p.CreationTimestamp},
			Spec:   v1.PodSpec{NodeName: p.Spec.NodeName},
			Status: v1.PodStatus{Phase: p.Status.Phase, ContainerStatuses: p.Status.ContainerStatuses},
		}, nil
	})
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { t.observe(obj) },
		UpdateFunc: func(_, obj any) { t.observe(obj) },
	})
	f.Start(ctx.Done())
}

func (t *podTracker) observe(obj any) {
	p, ok := obj.(*v1.Pod)
	if !ok {
		return
	}
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	pt := t.pods[p.UID]
	if pt == nil {
		pt = &podTimes{created: p.CreationTimestamp.Time, seen: now}
		t.pods[p.UID] = pt
	}
	if pt.bound.IsZero() && p.Spec.NodeName != "" {
		pt.bound = now
	}
	if pt.running.IsZero() && started(p) {
		pt.running = now
		t.running++
	}
}

// started reports whether the pod runs with every container started.
func started(p *v1.Pod) bool {
	if p.Status.Phase != v1.PodRunning || len(p.Status.ContainerStatuses) == 0 {
		return false
	}
	for _, c := range p.Status.ContainerStatuses {
		if c.State.Running == nil || (c.Started != nil && !*c.Started) {
			return false
		}
	}
	return true
}

// counts are the pods seen and the pods running.
func (t *podTracker) counts() (seen, running int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.pods), t.running
}

// startup is the pods' start-up latencies: from creationTimestamp
// (upstream's SLI), from the first sighting, and to the bind.
type startup struct {
	sli, seen, schedule []time.Duration
}

func (t *podTracker) latencies() startup {
	t.mu.Lock()
	defer t.mu.Unlock()
	var s startup
	for _, pt := range t.pods {
		if !pt.running.IsZero() {
			s.sli = append(s.sli, pt.running.Sub(pt.created))
			s.seen = append(s.seen, pt.running.Sub(pt.seen))
		}
		if !pt.bound.IsZero() {
			s.schedule = append(s.schedule, pt.bound.Sub(pt.seen))
		}
	}
	return s
}
