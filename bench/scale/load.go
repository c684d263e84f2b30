package main

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// runLabel marks every object of the load, so the trackers see those
// alone.
const runLabel = "scale.orca.io/run"

// plan is the shape of the load: how many Deployments of how many
// replicas, spread over namespaces, created at a steady pod rate, every
// serviceEvery-th with a Service selecting its pods.
type plan struct {
	deployments, replicas, namespaces, serviceEvery int
	podsPerSecond                                   float64
}

func newPlan(pods, replicas, namespaces, serviceEvery int, rate float64) plan {
	return plan{
		deployments: (pods + replicas - 1) / replicas, replicas: replicas,
		namespaces: namespaces, serviceEvery: serviceEvery, podsPerSecond: rate,
	}
}

// interval is the pause between two Deployments that keeps the pod rate.
func (p plan) interval() time.Duration {
	return time.Duration(float64(p.replicas) / p.podsPerSecond * float64(time.Second))
}

func (p plan) namespace(i int) string { return fmt.Sprintf("scale-%d", i%p.namespaces) }

// createNamespaces creates the plan's namespaces and waits for each
// one's default service account, which pods need.
func createNamespaces(ctx context.Context, cs kubernetes.Interface, p plan) error {
	for i := range p.namespaces {
		ns := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: p.namespace(i)}}
		if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("namespace %s: %w", ns.Name, err)
		}
	}
	for i := range p.namespaces {
		for {
			_, err := cs.CoreV1().ServiceAccounts(p.namespace(i)).Get(ctx, "default", metav1.GetOptions{})
			if err == nil {
				break
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
	return nil
}

// createLoad creates the plan's Deployments (and Services) at its pace,
// from several goroutines so that one slow call does not stall the rate;
// it returns when every one was created or ctx ends.
func createLoad(ctx context.Context, cs kubernetes.Interface, p plan, run string, errs chan<- error) {
	tick := time.NewTicker(p.interval())
	defer tick.Stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	sem := make(chan struct{}, 32)
	for i := range p.deployments {
		select {
		case <-ctx.Done():
			return
		case sem <- struct{}{}:
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := createApp(ctx, cs, p, i, run); err != nil && ctx.Err() == nil {
				select {
				case errs <- err:
				default:
				}
			}
		}()
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func createApp(ctx context.Context, cs kubernetes.Interface, p plan, i int, run string) error {
	ns, name := p.namespace(i), fmt.Sprintf("app-%d", i)
	labels := map[string]string{"app": name, runLabel: run}
	replicas := int32(p.replicas)
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: v1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: v1.PodSpec{Containers: []v1.Container{{
					Name: "app", Image: "registry.k8s.io/pause:3.10",
					Ports: []v1.ContainerPort{{ContainerPort: 8080}},
					Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
						v1.ResourceCPU: resource.MustParse("10m"), v1.ResourceMemory: resource.MustParse("16Mi"),
					}},
				}}},
			},
		},
	}
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("deployment %s/%s: %w", ns, name, err)
	}
	if p.serviceEvery > 0 && i%p.serviceEvery == 0 {
		svc := &v1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{runLabel: run}},
			Spec: v1.ServiceSpec{Selector: map[string]string{"app": name},
				Ports: []v1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}},
		}
		if _, err := cs.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("service %s/%s: %w", ns, name, err)
		}
	}
	return nil
}

// startWatchers starts n list-watch clients as a node's service proxy
// is: Services and EndpointSlices across the cluster, each with its own
// connection (clients built by newClient). It returns once they synced.
func startWatchers(ctx context.Context, n int, newClient func() (kubernetes.Interface, error)) error {
	for i := range n {
		cs, err := newClient()
		if err != nil {
			return err
		}
		f := informers.NewSharedInformerFactory(cs, 0)
		f.Core().V1().Services().Informer()
		f.Discovery().V1().EndpointSlices().Informer()
		f.Start(ctx.Done())
		for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
			if !ok {
				return fmt.Errorf("watcher %d: %v did not sync", i, typ)
			}
		}
	}
	return nil
}

// probe measures watch latency: every period it writes a ConfigMap
// stamped with the time, and each of n watchers (own connections)
// records how long after the stamp the event reached it.
type probe struct {
	mu  sync.Mutex
	lat []time.Duration
}

const probeNS = "scale-probe"

func (pr *probe) run(ctx context.Context, cs kubernetes.Interface, n int, period time.Duration, newClient func() (kubernetes.Interface, error)) error {
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: probeNS}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	for range n {
		wc, err := newClient()
		if err != nil {
			return err
		}
		f := informers.NewSharedInformerFactoryWithOptions(wc, 0, informers.WithNamespace(probeNS))
		inf := f.Core().V1().ConfigMaps().Informer()
		record := func(obj any) {
			cm, ok := obj.(*v1.ConfigMap)
			if !ok {
				return
			}
			ns, err := strconv.ParseInt(cm.Data["sent"], 10, 64)
			if err != nil {
				return
			}
			d := time.Since(time.Unix(0, ns))
			pr.mu.Lock()
			pr.lat = append(pr.lat, d)
			pr.mu.Unlock()
		}
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			UpdateFunc: func(_, obj any) { record(obj) },
		}); err != nil {
			return err
		}
		f.Start(ctx.Done())
		f.WaitForCacheSync(ctx.Done())
	}
	cm := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "probe"}, Data: map[string]string{"sent": "0"}}
	if _, err := cs.CoreV1().ConfigMaps(probeNS).Create(ctx, cm, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	go wait.UntilWithContext(ctx, func(ctx context.Context) {
		patch := fmt.Sprintf(`{"data":{"sent":"%d"}}`, time.Now().UnixNano())
		_, _ = cs.CoreV1().ConfigMaps(probeNS).Patch(ctx, "probe", types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	}, period)
	return nil
}

// take returns the latencies recorded so far and forgets them.
func (pr *probe) take() []time.Duration {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	out := pr.lat
	pr.lat = nil
	return out
}
