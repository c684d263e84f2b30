package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A Deployment of real containers rolls out, and a change of its template
// replaces every pod through a rolling update that `kubectl rollout
// status` follows to the end.
func TestDeploymentRollsOutRealPods(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	manifest := fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: sleepers
spec:
  replicas: 2
  selector:
    matchLabels: {app: sleepers}
  strategy:
    rollingUpdate: {maxSurge: 1, maxUnavailable: 0}
  template:
    metadata:
      labels: {app: sleepers}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: main
        image: %s
        imagePullPolicy: Never
        command: ["sh", "-c", "exec sleep 3600"]
        env: [{name: VERSION, value: "1"}]
        readinessProbe:
          exec: {command: ["true"]}
          periodSeconds: 1
`, busybox)
	kubectlOK(t, manifest, "-n", ns, "apply", "-f", "-")
	t.Cleanup(func() {
		if t.Failed() {
			res := runKubectl(t, nil, "", "-n", ns, "describe", "deployment,rs,pods")
			t.Logf("state at failure:\n%s%s", res.Stdout, res.Stderr)
		}
		_ = client.AppsV1().Deployments(ns).Delete(context.Background(), "sleepers", metav1.DeleteOptions{})
	})
	kubectlOK(t, "", "-n", ns, "rollout", "status", "deployment/sleepers", "--timeout=90s")

	kubectlOK(t, "", "-n", ns, "set", "env", "deployment/sleepers", "VERSION=2")
	out := kubectlOK(t, "", "-n", ns, "rollout", "status", "deployment/sleepers", "--timeout=120s")
	if !strings.Contains(out, "successfully rolled out") {
		t.Errorf("rollout status printed %q", out)
	}
	eventually(t, time.Minute, func() error {
		pods, err := client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "app=sleepers"})
		if err != nil {
			return err
		}
		n := 0
		for _, p := range pods.Items {
			if p.DeletionTimestamp != nil {
				return fmt.Errorf("pod %s still terminating", p.Name)
			}
			if p.Spec.Containers[0].Env[0].Value != "2" || !running(&p) || !ready(&p) || p.Spec.NodeName != nodeName {
				return fmt.Errorf("pod %s: %s", p.Name, describeStatus(&p))
			}
			n++
		}
		if n != 2 {
			return fmt.Errorf("%d pods, want 2", n)
		}
		return nil
	})
	hist := kubectlOK(t, "", "-n", ns, "rollout", "history", "deployment/sleepers")
	if !strings.Contains(hist, "1 ") || !strings.Contains(hist, "2 ") {
		t.Errorf("rollout history:\n%s", hist)
	}
}
