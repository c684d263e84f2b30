package main

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/orca-project/orca/internal/imagebuild"
)

const namespace = "bench"

// podTimes are one pod's moments. sent, sandboxSeen, running and ready
// are the benchmark's own clock; sandbox, created and started come from
// containerd (nanoseconds) and decided from the agent's log
// (milliseconds), all on the same machine's clock.
type podTimes struct {
	sent        time.Time // just before the create request
	sandboxSeen time.Time // watch: PodReadyToStartContainers True
	running     time.Time // watch: phase Running with the container running
	ready       time.Time // watch: condition Ready True, first time
	// readyAgain is when Ready last turned True after having dropped to
	// False: a pod reported Ready before its first readiness probe ran.
	readyAgain time.Time
	dropped    bool
	sandbox    time.Time // containerd: sandbox CreatedAt
	created    time.Time // containerd: container CreatedAt
	started    time.Time // containerd: container StartedAt
	decided    time.Time // agent log: the kubelet computed phase Running
	// updates counts the changes of the pod a watch saw from its creation
	// until the round settled: the kubelet's status writes, mostly.
	updates int
}

func benchPod(name string) *v1.Pod {
	grace := int64(0)
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: v1.PodSpec{
			NodeName:                      nodeName,
			TerminationGracePeriodSeconds: &grace,
			Containers: []v1.Container{{
				Name: "main", Image: imagebuild.BusyboxRef, ImagePullPolicy: v1.PullNever,
				Command: []string{"sleep", "3600"},
				ReadinessProbe: &v1.Probe{
					ProbeHandler:  v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"true"}}},
					PeriodSeconds: 1,
				},
			}},
		},
	}
}

func containerRunning(p *v1.Pod) bool {
	if p.Status.Phase != v1.PodRunning {
		return false
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Running != nil {
			return true
		}
	}
	return false
}

func condTrue(p *v1.Pod, t v1.PodConditionType) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == t && c.Status == v1.ConditionTrue {
			return true
		}
	}
	return false
}

// probed is when the pod was Ready with its probe passed.
func (t *podTimes) probed() time.Time {
	if t.dropped {
		return t.readyAgain
	}
	return t.ready
}

// runRound creates n pods named prefix-NN at once and waits until every
// one is Ready; the moments of each come from an informer on the
// namespace, containerd and the agent's log.
func runRound(ctx context.Context, c *cluster, prefix string, n int, timeout time.Duration) (map[string]*podTimes, error) {
	times := map[string]*podTimes{}
	names := make([]string, n)
	for i := range n {
		names[i] = fmt.Sprintf("%s-%02d", prefix, i)
		times[names[i]] = &podTimes{}
	}
	var mu sync.Mutex
	lastChange := time.Now()
	seen := func(obj any, update bool) {
		now := time.Now()
		p, ok := obj.(*v1.Pod)
		if !ok {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		t := times[p.Name]
		if t == nil {
			return
		}
		if update {
			t.updates++
		}
		if t.sandboxSeen.IsZero() && condTrue(p, v1.PodReadyToStartContainers) {
			t.sandboxSeen = now
		}
		if t.running.IsZero() && containerRunning(p) {
			t.running = now
		}
		ready := condTrue(p, v1.PodReady)
		switch {
		case t.ready.IsZero() && ready:
			t.ready, lastChange = now, now
		case !t.ready.IsZero() && !ready:
			t.dropped, t.readyAgain, lastChange = true, time.Time{}, now
		case t.dropped && ready && t.readyAgain.IsZero():
			t.readyAgain, lastChange = now, now
		}
	}
	// An informer rather than a bare watch: it resumes by itself if the
	// server drops the watch.
	factory := informers.NewSharedInformerFactoryWithOptions(c.client, 0, informers.WithNamespace(namespace))
	inf := factory.Core().V1().Pods().Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(o any) { seen(o, false) }, UpdateFunc: func(_, o any) { seen(o, true) }}); err != nil {
		return nil, err
	}
	ictx, icancel := context.WithCancel(ctx)
	defer icancel()
	factory.Start(ictx.Done())
	factory.WaitForCacheSync(ictx.Done())

	errs := make(chan error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for _, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pod := benchPod(name)
			<-start
			mu.Lock()
			times[name].sent = time.Now()
			mu.Unlock()
			if _, err := c.client.CoreV1().Pods(namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
				errs <- fmt.Errorf("create %s: %w", name, err)
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return nil, err
	}
	// Done when every pod is Ready and has stayed so for three probe
	// periods: a pod may be reported Ready before its first probe and
	// drop back until the probe passes.
	settled := func() (int, bool) {
		mu.Lock()
		defer mu.Unlock()
		ready := 0
		for _, t := range times {
			if !t.ready.IsZero() && (!t.dropped || !t.readyAgain.IsZero()) {
				ready++
			}
		}
		return ready, ready == n && time.Since(lastChange) >= 3*time.Second
	}
	deadline := time.After(timeout)
	for {
		ready, ok := settled()
		if ok {
			break
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-deadline:
			return nil, fmt.Errorf("%d of %d pods Ready after %v: %w", ready, n, timeout, errTimeout)
		case <-time.After(100 * time.Millisecond):
		}
	}
	icancel()
	mu.Lock()
	defer mu.Unlock()
	if err := runtimeTimes(ctx, c, times); err != nil {
		return nil, err
	}
	if f, err := os.Open(c.agentLog); err == nil {
		decided := phaseTimes(f, string(v1.PodRunning))
		f.Close()
		for name, t := range times {
			t.decided = decided[namespace+"/"+name]
		}
	}
	return times, nil
}

// runtimeTimes fills the containerd-side moments, which carry
// nanoseconds where the API's timestamps carry seconds.
func runtimeTimes(ctx context.Context, c *cluster, times map[string]*podTimes) error {
	sel := map[string]string{"io.kubernetes.pod.namespace": namespace}
	sbs, err := c.rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{Filter: &runtimeapi.PodSandboxFilter{LabelSelector: sel}})
	if err != nil {
		return fmt.Errorf("list sandboxes: %w", err)
	}
	for _, sb := range sbs.Items {
		if t := times[sb.GetMetadata().GetName()]; t != nil && sb.State == runtimeapi.PodSandboxState_SANDBOX_READY {
			t.sandbox = time.Unix(0, sb.CreatedAt)
		}
	}
	cs, err := c.rt.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{LabelSelector: sel}})
	if err != nil {
		return fmt.Errorf("list containers: %w", err)
	}
	for _, ctr := range cs.Containers {
		t := times[ctr.Labels["io.kubernetes.pod.name"]]
		if t == nil || ctr.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
			continue
		}
		st, err := c.rt.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: ctr.Id})
		if err != nil {
			return fmt.Errorf("container status: %w", err)
		}
		t.created, t.started = time.Unix(0, st.Status.CreatedAt), time.Unix(0, st.Status.StartedAt)
	}
	return nil
}

// deleteRound deletes the round's pods and waits until the API and the
// runtime hold none, so the next round starts on a quiet node.
func deleteRound(ctx context.Context, c *cluster, timeout time.Duration) error {
	zero := int64(0)
	if err := c.client.CoreV1().Pods(namespace).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{}); err != nil {
		return fmt.Errorf("delete pods: %w", err)
	}
	deadline := time.Now().Add(timeout)
	sel := map[string]string{"io.kubernetes.pod.namespace": namespace}
	for time.Now().Before(deadline) && ctx.Err() == nil {
		pods, err := c.client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
		if err == nil && len(pods.Items) == 0 {
			sbs, err := c.rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{Filter: &runtimeapi.PodSandboxFilter{
				LabelSelector: sel, State: &runtimeapi.PodSandboxStateValue{State: runtimeapi.PodSandboxState_SANDBOX_READY},
			}})
			if err == nil && len(sbs.Items) == 0 {
				return nil
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	return fmt.Errorf("pods still present %v after delete: %w", timeout, errTimeout)
}

// waitServiceAccount waits for the namespace's default ServiceAccount,
// without which admission refuses pods.
func waitServiceAccount(ctx context.Context, c *cluster) error {
	if _, err := c.client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace: %w", err)
	}
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if _, err := c.client.CoreV1().ServiceAccounts(namespace).Get(ctx, "default", metav1.GetOptions{}); err == nil {
			return nil
		}
	}
	return fmt.Errorf("no default ServiceAccount in %s: %w", namespace, errTimeout)
}
