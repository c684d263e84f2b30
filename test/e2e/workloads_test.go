package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
)

// readyProbe is ready once the container runs. Its timeout is generous:
// a rollout of ten pods on a 2-core machine keeps runc busy, and an exec
// then takes more than upstream's default second, which would fail
// probes of healthy pods.
func readyProbe() *v1.Probe {
	return &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"true"}}}, PeriodSeconds: 1, TimeoutSeconds: 5}
}

// A rolling update of ten real replicas with maxSurge 2 and maxUnavailable
// 1 never has fewer than nine ready pods nor more than twelve, watched
// continuously; `kubectl rollout undo` brings the first template back.
func TestRollingUpdateOfTenStaysWithinBounds(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	labels := map[string]string{"app": "ten"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "ten", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](10),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{
				MaxSurge: ptr.To(intstr.FromInt32(2)), MaxUnavailable: ptr.To(intstr.FromInt32(1)),
			}},
			Template: v1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: v1.PodSpec{
					TerminationGracePeriodSeconds: ptr.To[int64](1),
					Containers: []v1.Container{{
						Name: "main", Image: busybox, ImagePullPolicy: v1.PullNever,
						Command: []string{"sh", "-c", "exec sleep 3600"}, ReadinessProbe: readyProbe(),
						Env: []v1.EnvVar{{Name: "VERSION", Value: "1"}},
					}},
				},
			},
		},
	}
	ctx := context.Background()
	if _, err := client.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kubectlOK(t, "", "rollout", "status", "deployment/ten", "-n", ns, "--timeout=3m")

	// Watch every pod change while the template changes.
	w, err := client.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{LabelSelector: "app=ten"})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	pods := map[string]*v1.Pod{}
	minReady, maxPods := 10, 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*v1.Pod)
			if !ok {
				continue
			}
			mu.Lock()
			if ev.Type == watch.Deleted {
				delete(pods, p.Name)
			} else {
				pods[p.Name] = p
			}
			readyN, live := 0, 0
			for _, q := range pods {
				if q.DeletionTimestamp == nil {
					live++
				}
				if ready(q) && q.DeletionTimestamp == nil {
					readyN++
				}
			}
			// The watch starts with the ten existing pods one by one;
			// count only once all ten have been seen.
			if len(pods) >= 10 {
				minReady = min(minReady, readyN)
			}
			maxPods = max(maxPods, live)
			mu.Unlock()
		}
	}()
	time.Sleep(time.Second)
	kubectlOK(t, "", "set", "env", "deployment/ten", "-n", ns, "VERSION=2")
	kubectlOK(t, "", "rollout", "status", "deployment/ten", "-n", ns, "--timeout=4m")
	w.Stop()
	<-done
	if minReady < 9 || maxPods > 12 {
		t.Errorf("during the rollout: at least %d ready (want ≥ 9), at most %d pods (want ≤ 12)", minReady, maxPods)
	}
	first, err := client.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=ten"})
	if err != nil || len(first.Items) != 2 {
		t.Fatalf("replica sets: %v %d", err, len(first.Items))
	}
	kubectlOK(t, "", "rollout", "undo", "deployment/ten", "-n", ns)
	kubectlOK(t, "", "rollout", "status", "deployment/ten", "-n", ns, "--timeout=4m")
	got, err := client.AppsV1().Deployments(ns).Get(ctx, "ten", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if env := got.Spec.Template.Spec.Containers[0].Env; len(env) != 1 || env[0].Value != "1" {
		t.Errorf("after undo the template has env %+v, want VERSION=1", env)
	}
}

// A DaemonSet runs one pod on every node of a three-node cluster.
func TestDaemonSetCoversEveryNode(t *testing.T) {
	nodes := needNodes(t, 3)
	ns := namespace(t)
	labels := map[string]string{"app": "everywhere"}
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "everywhere", Namespace: ns},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: v1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: v1.PodSpec{
					TerminationGracePeriodSeconds: ptr.To[int64](1),
					Tolerations:                   []v1.Toleration{{Key: extraNodeTaint.Key, Operator: v1.TolerationOpExists}},
					Containers:                    []v1.Container{{Name: "main", Image: busybox, ImagePullPolicy: v1.PullNever, Command: []string{"sleep", "3600"}}},
				},
			},
		},
	}
	if _, err := client.AppsV1().DaemonSets(ns).Create(context.Background(), ds, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Minute, func() error {
		list, err := client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "app=everywhere"})
		if err != nil {
			return err
		}
		on := map[string]bool{}
		for _, p := range list.Items {
			if ready(&p) {
				on[p.Spec.NodeName] = true
			}
		}
		for _, n := range nodes {
			if !on[n] {
				return fmt.Errorf("no ready pod on %s (have %v)", n, on)
			}
		}
		if len(list.Items) != len(nodes) {
			return fmt.Errorf("%d pods for %d nodes", len(list.Items), len(nodes))
		}
		return nil
	})
}

// A Job of ten completions with parallelism three never runs more than
// three pods at once and completes; `kubectl wait` sees it.
func TestJobOfTenCompletionsParallelismThree(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "ten", Namespace: ns},
		Spec: batchv1.JobSpec{
			Completions: ptr.To[int32](10), Parallelism: ptr.To[int32](3),
			Template: v1.PodTemplateSpec{Spec: v1.PodSpec{
				RestartPolicy:                 v1.RestartPolicyNever,
				TerminationGracePeriodSeconds: ptr.To[int64](1),
				Containers:                    []v1.Container{{Name: "main", Image: busybox, ImagePullPolicy: v1.PullNever, Command: []string{"sh", "-c", "sleep 1"}}},
			}},
		},
	}
	ctx := context.Background()
	if _, err := client.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	w, err := client.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{LabelSelector: "job-name=ten"})
	if err != nil {
		t.Fatal(err)
	}
	maxActive := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		pods := map[string]*v1.Pod{}
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*v1.Pod)
			if !ok {
				continue
			}
			if ev.Type == watch.Deleted {
				delete(pods, p.Name)
			} else {
				pods[p.Name] = p
			}
			active := 0
			for _, q := range pods {
				if q.Status.Phase != v1.PodSucceeded && q.Status.Phase != v1.PodFailed && q.DeletionTimestamp == nil {
					active++
				}
			}
			maxActive = max(maxActive, active)
		}
	}()
	out := kubectlOK(t, "", "wait", "--for=condition=complete", "job/ten", "-n", ns, "--timeout=4m")
	w.Stop()
	<-done
	if !strings.Contains(out, "condition met") {
		t.Errorf("kubectl wait: %q", out)
	}
	if maxActive > 3 {
		t.Errorf("%d pods active at once, want at most 3", maxActive)
	}
	got, err := client.BatchV1().Jobs(ns).Get(ctx, "ten", metav1.GetOptions{})
	if err != nil || got.Status.Succeeded != 10 {
		t.Errorf("job status %+v %v", got.Status, err)
	}
}
