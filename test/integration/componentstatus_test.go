package integration

import (
	"context"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kubectl get componentstatuses shows the control plane this server runs,
// with upstream's columns and deprecation warning; the view is read-only.
func TestComponentStatuses(t *testing.T) {
	res := runKubectl(t, "", "get", "componentstatuses")
	if res.Code != 0 {
		t.Fatalf("kubectl get cs: exit %d: %s", res.Code, res.Stderr)
	}
	if !strings.Contains(res.Stderr, "Warning: v1 ComponentStatus is deprecated in v1.19+") {
		t.Errorf("stderr %q lacks the deprecation warning", res.Stderr)
	}
	lines := strings.Split(strings.TrimSpace(res.Stdout), "\n")
	if len(lines) < 2 || strings.Join(strings.Fields(lines[0]), " ") != "NAME STATUS MESSAGE ERROR" {
		t.Fatalf("kubectl get cs:\n%s", res.Stdout)
	}
	var rows []string
	for _, l := range lines[1:] {
		rows = append(rows, strings.Join(strings.Fields(l), " "))
	}
	for _, want := range []string{"controller-manager Healthy ok", "etcd-0 Healthy ok", "scheduler Healthy ok"} {
		if !slices.Contains(rows, want) {
			t.Errorf("rows %q lack %q", rows, want)
		}
	}

	ctx := context.Background()
	cs, err := client.CoreV1().ComponentStatuses().Get(ctx, "etcd-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cs.Conditions) != 1 || cs.Conditions[0].Type != corev1.ComponentHealthy || cs.Conditions[0].Status != corev1.ConditionTrue {
		t.Errorf("etcd-0 conditions %+v, want Healthy True", cs.Conditions)
	}
	if _, err := client.CoreV1().ComponentStatuses().Get(ctx, "nope", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get of an unknown component: %v, want NotFound", err)
	}
	list, err := client.CoreV1().ComponentStatuses().List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=scheduler"})
	if err != nil || len(list.Items) != 1 || list.Items[0].Name != "scheduler" {
		t.Errorf("list by field selector: %v, %+v", err, list)
	}
	_, err = client.CoreV1().ComponentStatuses().Create(ctx, &corev1.ComponentStatus{ObjectMeta: metav1.ObjectMeta{Name: "mine"}}, metav1.CreateOptions{})
	if !apierrors.IsMethodNotSupported(err) {
		t.Errorf("create: %v, want MethodNotSupported", err)
	}

	rl, err := client.Discovery().ServerResourcesForGroupVersion("v1")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rl.APIResources {
		if r.Name == "componentstatuses" {
			if strings.Join(r.Verbs, ",") != "get,list" || r.Namespaced || !slices.Contains(r.ShortNames, "cs") {
				t.Errorf("discovery of componentstatuses: %+v", r)
			}
			return
		}
	}
	t.Error("componentstatuses is not in discovery")
}
