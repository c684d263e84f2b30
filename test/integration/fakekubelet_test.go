package integration

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
)

// fakeKubelet stands in for a node agent in tests of the workload
// controllers, which need pods that run, become ready, succeed or fail,
// but no containers. It is a test helper, not a simulation of the kubelet:
// every pod of the namespace that is bound to a node (spec.nodeName set, in
// the template or by the scheduler) is given the phase outcome returns —
// Running with every container running and Ready, or Succeeded/Failed with
// every container terminated — once, shortly after it appears.
//
// outcome may be nil (every pod runs and is ready).
func fakeKubelet(t *testing.T, namespace string, outcome func(*v1.Pod) v1.PodPhase) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(namespace))
	inf := factory.Core().V1().Pods().Informer()
	work := make(chan *v1.Pod, 1024)
	handle := func(obj any) {
		p, ok := obj.(*v1.Pod)
		if !ok || p.Spec.NodeName == "" || p.DeletionTimestamp != nil || p.Status.Phase != "" && p.Status.Phase != v1.PodPending {
			return
		}
		select {
		case work <- p:
		default:
		}
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: handle, UpdateFunc: func(_, o any) { handle(o) }})
	factory.Start(ctx.Done())
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case p := <-work:
				phase := v1.PodRunning
				if outcome != nil {
					phase = outcome(p)
				}
				_ = retry.RetryOnConflict(retry.DefaultRetry, func() error {
					cur, err := client.CoreV1().Pods(namespace).Get(ctx, p.Name, metav1.GetOptions{})
					if err != nil || cur.UID != p.UID || (cur.Status.Phase != "" && cur.Status.Phase != v1.PodPending) {
						return nil
					}
					cur.Status = fakeStatus(cur, phase)
					_, err = client.CoreV1().Pods(namespace).UpdateStatus(ctx, cur, metav1.UpdateOptions{})
					return err
				})
			}
		}
	}()
	t.Cleanup(func() { cancel(); factory.Shutdown() })
}

// fakeStatus is the status a kubelet would report for a pod in phase.
func fakeStatus(p *v1.Pod, phase v1.PodPhase) v1.PodStatus {
	now := metav1.NewTime(time.Now())
	st := v1.PodStatus{Phase: phase, HostIP: "192.0.2.1", PodIP: "10.42.9.9", StartTime: &now, QOSClass: p.Status.QOSClass}
	ready := v1.ConditionFalse
	if phase == v1.PodRunning {
		ready = v1.ConditionTrue
	}
	for _, t := range []v1.PodConditionType{v1.PodScheduled, v1.PodInitialized, v1.ContainersReady, v1.PodReady} {
		s := ready
		if t == v1.PodScheduled || t == v1.PodInitialized {
			s = v1.ConditionTrue
		}
		st.Conditions = append(st.Conditions, v1.PodCondition{Type: t, Status: s, LastTransitionTime: now})
	}
	for _, c := range p.Spec.Containers {
		cs := v1.ContainerStatus{Name: c.Name, Image: c.Image, Ready: phase == v1.PodRunning, Started: &[]bool{phase == v1.PodRunning}[0]}
		switch phase {
		case v1.PodRunning:
			cs.State.Running = &v1.ContainerStateRunning{StartedAt: now}
		case v1.PodSucceeded:
			cs.State.Terminated = &v1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", StartedAt: now, FinishedAt: now}
		case v1.PodFailed:
			cs.State.Terminated = &v1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", StartedAt: now, FinishedAt: now}
		}
		st.ContainerStatuses = append(st.ContainerStatuses, cs)
	}
	return st
}
