package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
)

// TestRuntimeClassesThroughKubectl: RuntimeClasses as kubectl lists them,
// and what the RuntimeClass admission plugin does to pods created with
// kubectl: upstream's refusal for a class that does not exist or an
// overhead of the pod's own, and the class's overhead, node selector and
// tolerations given to the pod. PodTemplates print as upstream's too.
func TestRuntimeClassesThroughKubectl(t *testing.T) {
	ctx := context.Background()
	ns := testNamespace(t, "runtimeclass")
	suffix := utilrand.String(5)
	sandboxed, plain := "sandboxed-"+suffix, "plain-"+suffix
	t.Cleanup(func() {
		runKubectl(t, "", "delete", "runtimeclass", sandboxed, plain, "--ignore-not-found")
	})
	mustKubectl(t, fmt.Sprintf(`
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: %s}
handler: kata
overhead:
  podFixed: {cpu: 250m, memory: 120Mi}
scheduling:
  nodeSelector: {sandbox: kata}
  tolerations:
  - {key: sandbox, operator: Exists, effect: NoSchedule}
---
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: %s}
handler: runc
`, sandboxed, plain), "apply", "-f", "-")

	out := mustKubectl(t, "", "get", "runtimeclasses")
	if h := header(out); h != "NAME HANDLER AGE" {
		t.Errorf("header %q, want NAME HANDLER AGE", h)
	}
	if row := tableRow(t, out, sandboxed); row[1] != "kata" {
		t.Errorf("row %q, want handler kata", row)
	}

	res := runKubectl(t, "", "patch", "runtimeclass", plain, "--type=merge", "-p", `{"handler":"crun"}`)
	if want := `The RuntimeClass "` + plain + `" is invalid: handler: Invalid value: "crun": field is immutable`; res.Code == 0 || !strings.Contains(res.Stderr, want) {
		t.Errorf("changing the handler: exit %d, stderr %q, want %q", res.Code, res.Stderr, want)
	}

	pod := func(name, class, overhead string) string {
		return fmt.Sprintf(`
apiVersion: v1
kind: Pod
metadata: {name: %s, namespace: %s}
spec:
  runtimeClassName: %s
  nodeSelector: {zone: a}
  containers: [{name: c, image: busybox}]
%s`, name, ns, class, overhead)
	}
	res = runKubectl(t, pod("nowhere", "missing-"+suffix, ""), "create", "-f", "-")
	want := `Error from server (Forbidden): error when creating "STDIN": pods "nowhere" is forbidden: pod rejected: RuntimeClass "missing-` + suffix + `" not found`
	if res.Code == 0 || strings.TrimSpace(res.Stderr) != want {
		t.Errorf("missing class: exit %d, stderr %q, want %q", res.Code, res.Stderr, want)
	}
	res = runKubectl(t, pod("own-overhead", sandboxed, "  overhead: {cpu: '1'}"), "create", "-f", "-")
	want = `Error from server (Forbidden): error when creating "STDIN": pods "own-overhead" is forbidden: pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead`
	if res.Code == 0 || strings.TrimSpace(res.Stderr) != want {
		t.Errorf("own overhead: exit %d, stderr %q, want %q", res.Code, res.Stderr, want)
	}

	mustKubectl(t, pod("kata", sandboxed, ""), "create", "-f", "-")
	got, err := client.CoreV1().Pods(ns).Get(ctx, "kata", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cpu, mem := got.Spec.Overhead[corev1.ResourceCPU], got.Spec.Overhead[corev1.ResourceMemory]; cpu.Cmp(resource.MustParse("250m")) != 0 || mem.Cmp(resource.MustParse("120Mi")) != 0 {
		t.Errorf("overhead %v, want the class's cpu 250m, memory 120Mi", got.Spec.Overhead)
	}
	if sel := got.Spec.NodeSelector; len(sel) != 2 || sel["zone"] != "a" || sel["sandbox"] != "kata" {
		t.Errorf("node selector %v, want the pod's zone=a and the class's sandbox=kata", sel)
	}
	tolerated := false
	for _, tol := range got.Spec.Tolerations {
		tolerated = tolerated || tol.Key == "sandbox" && tol.Operator == corev1.TolerationOpExists && tol.Effect == corev1.TaintEffectNoSchedule
	}
	if !tolerated {
		t.Errorf("tolerations %v lack the class's sandbox:NoSchedule", got.Spec.Tolerations)
	}
	mustKubectl(t, pod("runc", plain, ""), "create", "-f", "-")
	if got, err := client.CoreV1().Pods(ns).Get(ctx, "runc", metav1.GetOptions{}); err != nil || got.Spec.Overhead != nil {
		t.Errorf("a class without overhead: pod overhead %v (%v), want none", got.Spec.Overhead, err)
	}

	mustKubectl(t, `
apiVersion: v1
kind: PodTemplate
metadata: {name: web, namespace: `+ns+`}
template:
  metadata: {labels: {app: web}}
  spec:
    containers: [{name: nginx, image: nginx}, {name: log, image: busybox}]
`, "apply", "-f", "-")
	out = mustKubectl(t, "", "get", "podtemplates", "-n", ns)
	if h := header(out); h != "NAME CONTAINERS IMAGES POD LABELS" {
		t.Errorf("podtemplates header %q", h)
	}
	if row := tableRow(t, out, "web"); strings.Join(row[1:], " ") != "nginx,log nginx,busybox app=web" {
		t.Errorf("podtemplate row %q", row)
	}
}
