package integration

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"
)

// discoveredVerbs returns the verbs discovery lists for a core resource
// ("pods/ephemeralcontainers"), nil when it is not listed.
func discoveredVerbs(t *testing.T, name string) []string {
	t.Helper()
	list, err := client.Discovery().ServerResourcesForGroupVersion("v1")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range list.APIResources {
		if r.Name == name {
			v := []string(r.Verbs)
			slices.Sort(v)
			return v
		}
	}
	return nil
}

// TestPodEphemeralContainers: pods/ephemeralcontainers as upstream serves
// it. Ephemeral containers are added only there (a strategic merge patch
// as kubectl debug sends, or a whole pod as client-go's
// UpdateEphemeralContainers), each addition bumps the generation, the rest
// of what a write carries is ignored, and nothing may be changed or
// removed. Pod Security admission sees the new container.
func TestPodEphemeralContainers(t *testing.T) {
	ctx := context.Background()
	ns := testNamespace(t, "ephemeral")
	if v := discoveredVerbs(t, "pods/ephemeralcontainers"); !slices.Equal(v, []string{"get", "patch", "update"}) {
		t.Errorf("discovery lists pods/ephemeralcontainers with verbs %v", v)
	}
	pods := client.CoreV1().Pods(ns)
	pod, err := pods.Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "target", Labels: map[string]string{"app": "target"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	patch := `{"spec":{"ephemeralContainers":[{"name":"debugger","image":"busybox","targetContainerName":"main","stdin":true,"tty":true}]}}`
	patched, err := pods.Patch(ctx, pod.Name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "kubectl-debug"}, "ephemeralcontainers")
	if err != nil {
		t.Fatal(err)
	}
	if len(patched.Spec.EphemeralContainers) != 1 || patched.Generation != 2 {
		t.Fatalf("after the patch: %d ephemeral containers, generation %d", len(patched.Spec.EphemeralContainers), patched.Generation)
	}
	ec := patched.Spec.EphemeralContainers[0]
	if ec.TerminationMessagePolicy != corev1.TerminationMessageReadFile || ec.ImagePullPolicy != corev1.PullAlways {
		t.Errorf("ephemeral container not defaulted: %+v", ec)
	}
	var owner *metav1.ManagedFieldsEntry
	for i, m := range patched.ManagedFields {
		if m.Manager == "kubectl-debug" {
			owner = &patched.ManagedFields[i]
		}
	}
	if owner == nil || owner.Subresource != "ephemeralcontainers" || !strings.Contains(string(owner.FieldsV1.Raw), `"f:ephemeralContainers"`) ||
		strings.Contains(string(owner.FieldsV1.Raw), `"f:containers"`) {
		t.Errorf("managed fields of the patch: %+v", owner)
	}

	// A whole pod through the subresource: only its ephemeral containers
	// count. The scheduler writes the pod's status meanwhile.
	var updated *corev1.Pod
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := pods.Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Labels["app"] = "changed"
		cur.Spec.Containers[0].Image = "busybox:2"
		cur.Spec.EphemeralContainers = append(cur.Spec.EphemeralContainers, corev1.EphemeralContainer{
			EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debugger2", Image: "busybox", TerminationMessagePolicy: corev1.TerminationMessageReadFile, ImagePullPolicy: corev1.PullIfNotPresent},
		})
		updated, err = pods.UpdateEphemeralContainers(ctx, pod.Name, cur, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(updated.Spec.EphemeralContainers) != 2 || updated.Generation != 3 || updated.Labels["app"] != "target" || updated.Spec.Containers[0].Image != "busybox" {
		t.Errorf("after the update: %d ephemeral containers, generation %d, labels %v, image %s",
			len(updated.Spec.EphemeralContainers), updated.Generation, updated.Labels, updated.Spec.Containers[0].Image)
	}
	u, err := dynamic.NewForConfigOrDie(restCfg).Resource(schema.GroupVersionResource{Version: "v1", Resource: "pods"}).Namespace(ns).Get(ctx, pod.Name, metav1.GetOptions{}, "ephemeralcontainers")
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := unstructuredSlice(u.Object, "spec", "ephemeralContainers"); got != 2 {
		t.Errorf("GET /ephemeralcontainers shows %d ephemeral containers", got)
	}

	// Nothing may be changed or removed, here or through the pod.
	for _, tc := range []struct {
		name, sub, patch, want string
	}{
		{"remove", "ephemeralcontainers", `{"spec":{"ephemeralContainers":null}}`, `existing ephemeral containers "debugger" may not be removed`},
		{"change", "ephemeralcontainers", `{"spec":{"ephemeralContainers":[{"name":"debugger","image":"busybox:2"}]}}`, `existing ephemeral containers "debugger" may not be changed`},
		{"unknown target", "ephemeralcontainers", `{"spec":{"ephemeralContainers":[{"name":"x","image":"busybox","targetContainerName":"nope"}]}}`, `spec.ephemeralContainers[0].targetContainerName: Not found: "nope"`},
		{"ports", "ephemeralcontainers", `{"spec":{"ephemeralContainers":[{"name":"x","image":"busybox","ports":[{"containerPort":80}]}]}}`, `spec.ephemeralContainers[0].ports: Forbidden: cannot be set for an Ephemeral Container`},
		{"name taken", "ephemeralcontainers", `{"spec":{"ephemeralContainers":[{"name":"main","image":"busybox"}]}}`, `spec.ephemeralContainers[0].name: Duplicate value: "main"`},
		{"through the pod", "", `{"spec":{"ephemeralContainers":[{"name":"x","image":"busybox"}]}}`, `pod updates may not change fields other than`},
	} {
		_, err := pods.Patch(ctx, pod.Name, types.StrategicMergePatchType, []byte(tc.patch), metav1.PatchOptions{}, subresources(tc.sub)...)
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want 422 with %q", tc.name, err, tc.want)
		}
	}

	// A namespace enforcing baseline refuses a privileged debugger.
	if _, err := client.CoreV1().Namespaces().Patch(ctx, ns, types.MergePatchType,
		[]byte(`{"metadata":{"labels":{"pod-security.kubernetes.io/enforce":"baseline"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	priv, _ := json.Marshal(map[string]any{"spec": map[string]any{"ephemeralContainers": []any{map[string]any{
		"name": "root", "image": "busybox", "securityContext": map[string]any{"privileged": true},
	}}}})
	_, err = pods.Patch(ctx, pod.Name, types.StrategicMergePatchType, priv, metav1.PatchOptions{}, "ephemeralcontainers")
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `violates PodSecurity "baseline:latest": privileged (container "root" must not set securityContext.privileged=true)`) {
		t.Errorf("privileged debugger under baseline: %v", err)
	}
}

func subresources(sub string) []string {
	if sub == "" {
		return nil
	}
	return []string{sub}
}

// unstructuredSlice returns the length of the list at path.
func unstructuredSlice(obj map[string]any, path ...string) (int, bool, error) {
	var cur any = obj
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return 0, false, nil
		}
		cur = m[p]
	}
	l, ok := cur.([]any)
	return len(l), ok, nil
}

// TestPodResize: pods/resize as upstream serves it. Only containers' cpu
// and memory change there (the rest of a write is ignored, the QoS class
// stays, nothing is removed), each change bumps the generation, the pod
// itself cannot change them, and a resize beyond what the pod's node
// could ever hold is refused by PodResizeValidator.
func TestPodResize(t *testing.T) {
	ctx := context.Background()
	ns := testNamespace(t, "resize")
	if v := discoveredVerbs(t, "pods/resize"); !slices.Equal(v, []string{"get", "patch", "update"}) {
		t.Errorf("discovery lists pods/resize with verbs %v", v)
	}
	pods := client.CoreV1().Pods(ns)
	pod, err := pods.Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "resized", Labels: map[string]string{"app": "r"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c1", Image: "busybox", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("20m"), corev1.ResourceMemory: resource.MustParse("35Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("30m")},
		}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	patch := `{"metadata":{"labels":{"app":"changed"}},"spec":{"containers":[{"name":"c1","image":"busybox:2","resources":{"requests":{"cpu":"25m"},"limits":{"cpu":"35m"}}}]}}`
	resized, err := pods.Patch(ctx, pod.Name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "resizer"}, "resize")
	if err != nil {
		t.Fatal(err)
	}
	c := resized.Spec.Containers[0]
	if c.Resources.Requests.Cpu().MilliValue() != 25 || c.Resources.Limits.Cpu().MilliValue() != 35 || c.Resources.Requests.Memory().Value() != 35<<20 ||
		c.Image != "busybox" || resized.Labels["app"] != "r" || resized.Generation != 2 {
		t.Errorf("after the resize: resources %v, image %s, labels %v, generation %d", c.Resources, c.Image, resized.Labels, resized.Generation)
	}
	for _, m := range resized.ManagedFields {
		if m.Manager == "resizer" && (m.Subresource != "resize" || !strings.Contains(string(m.FieldsV1.Raw), `"f:resources"`) || strings.Contains(string(m.FieldsV1.Raw), `"f:image"`)) {
			t.Errorf("managed fields of the resize: %+v %s", m, m.FieldsV1.Raw)
		}
	}
	got, err := dynamic.NewForConfigOrDie(restCfg).Resource(schema.GroupVersionResource{Version: "v1", Resource: "pods"}).Namespace(ns).Get(ctx, pod.Name, metav1.GetOptions{}, "resize")
	if err != nil || got.GetGeneration() != 2 {
		t.Errorf("GET /resize: %v, generation %d", err, got.GetGeneration())
	}

	for _, tc := range []struct {
		name, sub, patch, want string
	}{
		{"QoS class", "resize", `{"spec":{"containers":[{"name":"c1","resources":{"requests":{"cpu":"35m","memory":"35Mi"},"limits":{"cpu":"35m","memory":"35Mi"}}}]}}`, "Pod QOS Class may not change as a result of resizing"},
		{"limit removed", "resize", `{"spec":{"containers":[{"name":"c1","resources":{"limits":{"cpu":null}}}]}}`, "spec.containers[0].resources.limits: Forbidden: resource limits cannot be removed"},
		{"storage", "resize", `{"spec":{"containers":[{"name":"c1","resources":{"requests":{"ephemeral-storage":"1Gi"}}}]}}`, "spec: Forbidden: only cpu and memory resources are mutable"},
		{"resize policy", "resize", `{"spec":{"containers":[{"name":"c1","resizePolicy":[{"resourceName":"cpu","restartPolicy":"RestartContainer"}]}]}}`, "spec: Forbidden: only cpu and memory resources are mutable"},
		{"through the pod", "", `{"spec":{"containers":[{"name":"c1","resources":{"requests":{"cpu":"30m"}}}]}}`, "pod updates may not change fields other than"},
	} {
		_, err := pods.Patch(ctx, pod.Name, types.StrategicMergePatchType, []byte(tc.patch), metav1.PatchOptions{}, subresources(tc.sub)...)
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want 422 with %q", tc.name, err, tc.want)
		}
	}

	// On a node, a resize is held to what the node could ever hold.
	node, err := client.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{
		Name: "resize-node-" + ns, Labels: map[string]string{corev1.LabelOSStable: "linux"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.CoreV1().Nodes().Delete(context.Background(), node.Name, metav1.DeleteOptions{}) })
	// The node IPAM controller writes the new node too (its pod CIDR):
	// retry on its conflicts.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		fresh, err := client.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		fresh.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("1Gi"), corev1.ResourcePods: resource.MustParse("10")}
		fresh.Status.Capacity = fresh.Status.Allocatable
		_, err = client.CoreV1().Nodes().UpdateStatus(ctx, fresh, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	bound, err := pods.Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "bound"},
		Spec: corev1.PodSpec{NodeName: node.Name, Containers: []corev1.Container{{Name: "c1", Image: "busybox", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
		}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = pods.Patch(ctx, bound.Name, types.StrategicMergePatchType, []byte(`{"spec":{"containers":[{"name":"c1","resources":{"requests":{"cpu":"3"}}}]}}`), metav1.PatchOptions{}, "resize")
	var status *apierrors.StatusError
	if !errors.As(err, &status) || status.ErrStatus.Reason != metav1.StatusReasonForbidden ||
		!strings.Contains(err.Error(), "node didn't have enough allocatable resources: cpu, requested: 3000, allocatable: 2000") ||
		len(status.ErrStatus.Details.Causes) == 0 || status.ErrStatus.Details.Causes[0].Type != "NodeCapacity" {
		t.Errorf("resize beyond the node: %v", err)
	}
	if _, err := pods.Patch(ctx, bound.Name, types.StrategicMergePatchType, []byte(`{"spec":{"containers":[{"name":"c1","resources":{"requests":{"cpu":"1500m"}}}]}}`), metav1.PatchOptions{}, "resize"); err != nil {
		t.Errorf("resize within the node: %v", err)
	}
}
