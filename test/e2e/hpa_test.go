package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestHorizontalPodAutoscaler runs pods that burn cpu while a file on the
// node says so, under an HPA at 50% of their cpu request (kubectl
// autoscale): the HPA scales the Deployment up from the kubelet's resource
// metrics (metrics.k8s.io), and back down once the load stops, after a
// short scale-down stabilization window.
func TestHorizontalPodAutoscaler(t *testing.T) {
	needCluster(t)
	if _, err := client.Discovery().ServerResourcesForGroupVersion("metrics.k8s.io/v1beta1"); err != nil {
		t.Skipf("metrics.k8s.io/v1beta1 is not served: %v", err)
	}
	ns := namespace(t)
	// The single node is this machine: a hostPath file is the switch.
	loadDir := filepath.Join(workDir, "hpa-load", ns)
	if err := os.MkdirAll(loadDir, 0o755); err != nil {
		t.Fatal(err)
	}
	mode := filepath.Join(loadDir, "mode")
	if err := os.WriteFile(mode, []byte("on\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	manifest := fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: burner
spec:
  replicas: 1
  selector:
    matchLabels: {app: burner}
  template:
    metadata:
      labels: {app: burner}
    spec:
      nodeName: %s
      terminationGracePeriodSeconds: 1
      volumes:
      - name: load
        hostPath: {path: %s, type: Directory}
      containers:
      - name: main
        image: %s
        imagePullPolicy: Never
        command: ["sh", "-c", "while true; do read m < /load/mode; if [ \"$m\" = on ]; then i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; else sleep 5; fi; done"]
        volumeMounts: [{name: load, mountPath: /load}]
        resources:
          requests: {cpu: 100m}
          limits: {cpu: 300m}
`, nodeName, loadDir, busybox)
	kubectlOK(t, manifest, "-n", ns, "apply", "-f", "-")
	t.Cleanup(func() {
		if t.Failed() {
			res := runKubectl(t, nil, "", "-n", ns, "describe", "hpa,deployment")
			t.Logf("state at failure:\n%s%s", res.Stdout, res.Stderr)
		}
		_ = client.AppsV1().Deployments(ns).Delete(context.Background(), "burner", metav1.DeleteOptions{})
	})
	kubectlOK(t, "", "-n", ns, "rollout", "status", "deployment/burner", "--timeout=60s")
	kubectlOK(t, "", "-n", ns, "autoscale", "deployment", "burner", "--cpu=50%", "--min=1", "--max=3")
	// A short scale-down window, so the test need not wait upstream's 5 minutes.
	kubectlOK(t, "", "-n", ns, "patch", "hpa", "burner", "--type=merge", "-p", `{"spec":{"behavior":{"scaleDown":{"stabilizationWindowSeconds":10}}}}`)

	replicas := func(want int32) func() error {
		return func() error {
			d, err := client.AppsV1().Deployments(ns).Get(context.Background(), "burner", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if *d.Spec.Replicas != want {
				return fmt.Errorf("deployment wants %d replicas, not %d; hpa: %s", *d.Spec.Replicas, want,
					strings.TrimSpace(runKubectl(t, nil, "", "-n", ns, "get", "hpa", "burner", "--no-headers").Stdout))
			}
			return nil
		}
	}
	// Up to 300m against a 100m request is up to 300%: as many as allowed.
	// Idle, a pod reads a file every 5 s without forking, far below 50%.
	eventually(t, 60*time.Second, replicas(3))
	out := kubectlOK(t, "", "-n", ns, "get", "hpa", "burner", "--no-headers")
	if f := strings.Fields(out); len(f) < 7 || f[1] != "Deployment/burner" || f[2] != "cpu:" || !strings.HasSuffix(f[3], "/50%") || strings.HasPrefix(f[3], "<unknown>") {
		t.Errorf("kubectl get hpa: %q", out)
	}
	if err := os.WriteFile(mode, []byte("off\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, replicas(1))
	evs := events(t, ns, "burner")
	if !hasEvent(evs, "SuccessfulRescale: New size: 3; reason: cpu resource utilization (percentage of request) above target") ||
		!hasEvent(evs, "SuccessfulRescale: New size: 1; reason: All metrics below target") {
		t.Errorf("events of the hpa: %q", evs)
	}
}
