package main

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// replaceReplicas is the Deployment's size in the replace phase, as in the
// self-healing end-to-end test.
const replaceReplicas = 6

// replaceResult holds the self-healing figures: how long a Deployment
// takes to report every replica ready again after one of its pods is
// deleted, against one fresh pod's create → Ready in the same run.
type replaceResult struct {
	replace, fresh []time.Duration
}

// runReplace measures rounds of "delete one replica, wait until the
// Deployment is fully ready again", then as many single-pod starts.
func runReplace(ctx context.Context, c *cluster, rounds int, timeout time.Duration) (replaceResult, error) {
	var res replaceResult
	labels := map[string]string{"app": "replace"}
	tmpl := benchPod("")
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "replace", Namespace: namespace},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](replaceReplicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: tmpl.Spec},
		},
	}
	d.Spec.Template.Spec.NodeName = ""
	if _, err := c.client.AppsV1().Deployments(namespace).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		return res, fmt.Errorf("create deployment: %w", err)
	}
	defer func() {
		_ = c.client.AppsV1().Deployments(namespace).Delete(context.Background(), "replace", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationForeground)})
	}()
	if err := waitDeploymentReady(ctx, c, "", timeout); err != nil {
		return res, err
	}
	for range rounds {
		pods, err := c.client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: "app=replace"})
		if err != nil || len(pods.Items) == 0 {
			return res, fmt.Errorf("list replicas: %v", err)
		}
		victim := pods.Items[0].Name
		start := time.Now()
		if err := c.client.CoreV1().Pods(namespace).Delete(ctx, victim, metav1.DeleteOptions{}); err != nil {
			return res, fmt.Errorf("delete replica: %w", err)
		}
		if err := waitDeploymentReady(ctx, c, victim, timeout); err != nil {
			return res, err
		}
		res.replace = append(res.replace, time.Since(start))
		// The old pod's termination must not overlap the next round.
		if err := waitGone(ctx, c, victim, timeout); err != nil {
			return res, err
		}
	}
	for i := range rounds {
		name := fmt.Sprintf("fresh-%02d", i)
		start := time.Now()
		if _, err := c.client.CoreV1().Pods(namespace).Create(ctx, benchPod(name), metav1.CreateOptions{}); err != nil {
			return res, fmt.Errorf("create pod: %w", err)
		}
		for {
			p, err := c.client.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
			if err == nil && condTrue(p, v1.PodReady) {
				break
			}
			if time.Since(start) > timeout {
				return res, fmt.Errorf("pod %s not Ready: %w", name, errTimeout)
			}
			time.Sleep(20 * time.Millisecond)
		}
		res.fresh = append(res.fresh, time.Since(start))
		if err := c.client.CoreV1().Pods(namespace).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
			return res, fmt.Errorf("delete pod: %w", err)
		}
		if err := waitGone(ctx, c, name, timeout); err != nil {
			return res, err
		}
	}
	return res, nil
}

// waitDeploymentReady waits until the replace Deployment reports every
// replica ready and available, and every pod but gone is Ready.
func waitDeploymentReady(ctx context.Context, c *cluster, gone string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for ; time.Now().Before(deadline) && ctx.Err() == nil; time.Sleep(20 * time.Millisecond) {
		d, err := c.client.AppsV1().Deployments(namespace).Get(ctx, "replace", metav1.GetOptions{})
		if err != nil || d.Status.ReadyReplicas != replaceReplicas || d.Status.AvailableReplicas != replaceReplicas {
			continue
		}
		pods, err := c.client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: "app=replace"})
		if err != nil {
			continue
		}
		n := 0
		for i := range pods.Items {
			p := &pods.Items[i]
			if p.Name != gone && p.DeletionTimestamp == nil && condTrue(p, v1.PodReady) {
				n++
			}
		}
		if n == replaceReplicas {
			return nil
		}
	}
	return fmt.Errorf("deployment not back to %d ready replicas: %w", replaceReplicas, errTimeout)
}

func waitGone(ctx context.Context, c *cluster, name string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for ; time.Now().Before(deadline) && ctx.Err() == nil; time.Sleep(50 * time.Millisecond) {
		if _, err := c.client.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{}); err != nil {
			return nil
		}
	}
	return fmt.Errorf("pod %s still present: %w", name, errTimeout)
}

func reportReplace(w interface{ Write([]byte) (int, error) }, r replaceResult) {
	rep, fresh := distOf(r.replace), distOf(r.fresh)
	fmt.Fprintf(w, "\nreplace one replica: a %d-replica Deployment (readiness probe every 1 s), one pod deleted at a time; seconds\n", replaceReplicas)
	fmt.Fprintf(w, "%-52s %7s %7s %7s\n", "", "p50", "p99", "max")
	fmt.Fprintf(w, "%-52s %7.3f %7.3f %7.3f\n", fmt.Sprintf("delete → Deployment fully ready (%d rounds)", len(r.replace)), rep.p50.Seconds(), rep.p99.Seconds(), rep.max.Seconds())
	fmt.Fprintf(w, "%-52s %7.3f %7.3f %7.3f\n", fmt.Sprintf("baseline: one fresh pod create → Ready (%d)", len(r.fresh)), fresh.p50.Seconds(), fresh.p99.Seconds(), fresh.max.Seconds())
	fmt.Fprintf(w, "%-52s p50 %5.2f×  p99 %5.2f×\n", "replace / fresh pod", ratio(rep.p50, fresh.p50), ratio(rep.p99, fresh.p99))
}
