package integration

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
)

// managerEntry finds the managedFields entry of one manager and operation.
func managerEntry(obj metav1.Object, manager string, op metav1.ManagedFieldsOperationType, sub string) (metav1.ManagedFieldsEntry, bool) {
	for _, e := range obj.GetManagedFields() {
		if e.Manager == manager && e.Operation == op && e.Subresource == sub {
			return e, true
		}
	}
	return metav1.ManagedFieldsEntry{}, false
}

func applyCM(name string, data map[string]string) *corev1ac.ConfigMapApplyConfiguration {
	return corev1ac.ConfigMap(name, "ssa").WithData(data)
}

func TestServerSideApplyOwnership(t *testing.T) {
	ctx := context.Background()
	mkNamespace(t, "ssa")
	cms := client.CoreV1().ConfigMaps("ssa")

	cm, err := cms.Apply(ctx, applyCM("owned", map[string]string{"key": "a", "other": "1"}), metav1.ApplyOptions{FieldManager: "mgr-a"})
	if err != nil {
		t.Fatalf("apply creating the object: %v", err)
	}
	e, ok := managerEntry(cm, "mgr-a", metav1.ManagedFieldsOperationApply, "")
	if !ok || !strings.Contains(string(e.FieldsV1.Raw), `"f:key"`) || e.APIVersion != "v1" || e.FieldsType != "FieldsV1" {
		t.Fatalf("managedFields after create: %+v", cm.ManagedFields)
	}

	_, err = cms.Apply(ctx, applyCM("owned", map[string]string{"key": "b"}), metav1.ApplyOptions{FieldManager: "mgr-b"})
	var st apierrors.APIStatus
	if !errors.As(err, &st) || st.Status().Code != http.StatusConflict {
		t.Fatalf("second manager: want 409, got %v", err)
	}
	if msg := st.Status().Message; !strings.Contains(msg, `Apply failed with 1 conflict: conflict with "mgr-a": .data.key`) {
		t.Errorf("conflict message: %q", msg)
	}
	if d := st.Status().Details; d == nil || len(d.Causes) != 1 || d.Causes[0].Field != ".data.key" || d.Causes[0].Type != metav1.CauseTypeFieldManagerConflict {
		t.Errorf("conflict causes: %+v", d)
	}

	cm, err = cms.Apply(ctx, applyCM("owned", map[string]string{"key": "b"}), metav1.ApplyOptions{FieldManager: "mgr-b", Force: true})
	if err != nil {
		t.Fatalf("forced apply: %v", err)
	}
	if cm.Data["key"] != "b" {
		t.Errorf("forced apply left key=%q", cm.Data["key"])
	}
	if e, ok := managerEntry(cm, "mgr-b", metav1.ManagedFieldsOperationApply, ""); !ok || !strings.Contains(string(e.FieldsV1.Raw), `"f:key"`) {
		t.Errorf("mgr-b should own .data.key: %+v", cm.ManagedFields)
	}
	if e, _ := managerEntry(cm, "mgr-a", metav1.ManagedFieldsOperationApply, ""); strings.Contains(string(e.FieldsV1.Raw), `"f:key"`) {
		t.Errorf("mgr-a should have lost .data.key: %s", e.FieldsV1.Raw)
	}

	// mgr-a drops "other" from its configuration: nobody else owns it, so
	// it goes; "key" belongs to mgr-b now and stays.
	cm, err = cms.Apply(ctx, applyCM("owned", map[string]string{"keep": "x"}), metav1.ApplyOptions{FieldManager: "mgr-a"})
	if err != nil {
		t.Fatalf("re-apply without a field: %v", err)
	}
	if _, has := cm.Data["other"]; has || cm.Data["key"] != "b" || cm.Data["keep"] != "x" {
		t.Errorf("after re-apply data = %v, want key=b keep=x", cm.Data)
	}

	// A plain update is recorded as an Update by the user-agent's prefix.
	cfg := rest.CopyConfig(restCfg)
	cfg.UserAgent = "ssa-tester/v9 (linux/amd64)"
	other := kubernetes.NewForConfigOrDie(cfg)
	cm.Data["extra"] = "y"
	cm, err = other.CoreV1().ConfigMaps("ssa").Update(ctx, cm, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := managerEntry(cm, "ssa-tester", metav1.ManagedFieldsOperationUpdate, ""); !ok || !strings.Contains(string(e.FieldsV1.Raw), `"f:extra"`) {
		t.Errorf("update by user-agent not recorded: %+v", cm.ManagedFields)
	}
	// Merge patches record the fieldManager the client names.
	cm, err = cms.Patch(ctx, "owned", types.MergePatchType, []byte(`{"data":{"patched":"z"}}`), metav1.PatchOptions{FieldManager: "patcher"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := managerEntry(cm, "patcher", metav1.ManagedFieldsOperationUpdate, ""); !ok {
		t.Errorf("patch not recorded: %+v", cm.ManagedFields)
	}
}

func TestServerSideApplyRules(t *testing.T) {
	ctx := context.Background()
	mkNamespace(t, "ssa-rules")
	rc := client.CoreV1().RESTClient()
	apply := func(query map[string]string, body string) rest.Result {
		req := rc.Patch(types.ApplyPatchType).Namespace("ssa-rules").Resource("configmaps").Name("r").Body([]byte(body))
		for k, v := range query {
			req = req.Param(k, v)
		}
		return req.Do(ctx)
	}
	const body = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: r\ndata:\n  a: \"1\"\n"

	var code int
	err := apply(nil, body).StatusCode(&code).Error()
	if code != http.StatusUnprocessableEntity || !strings.Contains(err.Error(), "fieldManager: Required value: is required for apply patch") {
		t.Errorf("apply without fieldManager: %d %v", code, err)
	}
	if err := apply(map[string]string{"fieldManager": "m", "dryRun": "All"}, body).StatusCode(&code).Error(); err != nil || code != http.StatusCreated {
		t.Errorf("dry-run apply creating: %d %v", code, err)
	}
	if _, err := client.CoreV1().ConfigMaps("ssa-rules").Get(ctx, "r", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("dry-run apply stored the object: %v", err)
	}
	if err := apply(map[string]string{"fieldManager": "m"}, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: r\nbogus: 1\n").StatusCode(&code).Error(); code != http.StatusBadRequest {
		t.Errorf("apply with an unknown field: %d %v", code, err)
	}
	if err := apply(map[string]string{"fieldManager": "m"}, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\n").StatusCode(&code).Error(); code != http.StatusBadRequest {
		t.Errorf("apply naming another object: %d %v", code, err)
	}
	err = rc.Patch(types.MergePatchType).Namespace("ssa-rules").Resource("configmaps").Name("r").Param("force", "true").Body([]byte(`{}`)).Do(ctx).StatusCode(&code).Error()
	if code != http.StatusUnprocessableEntity || !strings.Contains(err.Error(), "force: Forbidden") {
		t.Errorf("force on a merge patch: %d %v", code, err)
	}
	err = rc.Patch("application/x-unknown").Namespace("ssa-rules").Resource("configmaps").Name("r").Body([]byte(`{}`)).Do(ctx).StatusCode(&code).Error()
	if code != http.StatusUnsupportedMediaType || !strings.Contains(err.Error(), "application/apply-patch+yaml") {
		t.Errorf("unknown patch type: %d %v", code, err)
	}

	// Writes to /status are recorded with their subresource.
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "d"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "d"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "d"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
			},
		},
	}
	dep, err = client.AppsV1().Deployments("ssa-rules").Create(ctx, dep, metav1.CreateOptions{FieldManager: "creator"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := managerEntry(dep, "creator", metav1.ManagedFieldsOperationUpdate, ""); !ok {
		t.Errorf("create not recorded: %+v", dep.ManagedFields)
	}
	// The deployment controller writes the status too: on a conflict the
	// write is made again on a fresh read, always changing the field so
	// that the writer owns it.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := client.AppsV1().Deployments("ssa-rules").Get(ctx, "d", metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Status.ObservedGeneration++
		dep, err = client.AppsV1().Deployments("ssa-rules").UpdateStatus(ctx, cur, metav1.UpdateOptions{FieldManager: "status-writer"})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if e, ok := managerEntry(dep, "status-writer", metav1.ManagedFieldsOperationUpdate, "status"); !ok || !strings.Contains(string(e.FieldsV1.Raw), "observedGeneration") {
		t.Errorf("status write not recorded with its subresource: %+v", dep.ManagedFields)
	}
}

const ssaManifest = `apiVersion: v1
kind: ConfigMap
metadata:
  name: app
  namespace: ssa-kubectl
data:
  color: blue
`

func TestKubectlServerSideApply(t *testing.T) {
	mustKubectl(t, "", "create", "namespace", "ssa-kubectl")
	out := mustKubectl(t, ssaManifest, "apply", "--server-side", "-f", "-")
	if !strings.Contains(out, "configmap/app serverside-applied") {
		t.Errorf("apply --server-side output: %q", out)
	}
	yaml := mustKubectl(t, "", "-n", "ssa-kubectl", "get", "cm", "app", "-o", "yaml", "--show-managed-fields")
	for _, want := range []string{"managedFields:", "manager: kubectl", "operation: Apply", "f:color: {}"} {
		if !strings.Contains(yaml, want) {
			t.Errorf("get -o yaml --show-managed-fields lacks %q:\n%s", want, yaml)
		}
	}
	if y := mustKubectl(t, "", "-n", "ssa-kubectl", "get", "cm", "app", "-o", "yaml"); strings.Contains(y, "managedFields") {
		t.Errorf("managedFields shown without --show-managed-fields:\n%s", y)
	}

	changed := strings.Replace(ssaManifest, "blue", "red", 1)
	res := runKubectl(t, changed, "apply", "--server-side", "--field-manager=other", "-f", "-")
	if res.Code == 0 || !strings.Contains(res.Stderr, `conflict with "kubectl"`) || !strings.Contains(res.Stderr, ".data.color") {
		t.Errorf("conflicting apply: exit %d stderr %q", res.Code, res.Stderr)
	}
	mustKubectl(t, changed, "apply", "--server-side", "--field-manager=other", "--force-conflicts", "-f", "-")
	if got := mustKubectl(t, "", "-n", "ssa-kubectl", "get", "cm", "app", "-o", "jsonpath={.data.color}"); got != "red" {
		t.Errorf("after --force-conflicts color = %q", got)
	}
}

const csaManifest = `apiVersion: v1
kind: ConfigMap
metadata:
  name: web
  namespace: csa-edit
data:
  a: "1"
  b: "2"
`

func TestKubectlClientSideApplyAfterEdit(t *testing.T) {
	mustKubectl(t, "", "create", "namespace", "csa-edit")
	mustKubectl(t, csaManifest, "apply", "-f", "-")
	// The editor changes a field the manifest sets and adds one it does
	// not mention.
	script := t.TempDir() + "/editor.sh"
	if err := os.WriteFile(script, []byte("#!/bin/sh\nsed -i -e 's/^  a: \"1\"/  a: edited/' -e 's/^  b: \"2\"/  b: \"2\"\\n  added: by-edit/' \"$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBE_EDITOR", script)
	mustKubectl(t, "", "-n", "csa-edit", "edit", "cm", "web")
	if got := mustKubectl(t, "", "-n", "csa-edit", "get", "cm", "web", "-o", "jsonpath={.data.a} {.data.added}"); got != "edited by-edit" {
		t.Fatalf("after edit: %q", got)
	}
	out := mustKubectl(t, csaManifest, "apply", "-f", "-")
	if !strings.Contains(out, "configmap/web configured") {
		t.Errorf("re-apply output: %q", out)
	}
	// As upstream: the manifest's own field is put back, the edit's
	// addition (never in the last-applied configuration) stays.
	if got := mustKubectl(t, "", "-n", "csa-edit", "get", "cm", "web", "-o", "jsonpath={.data.a} {.data.b} {.data.added}"); got != "1 2 by-edit" {
		t.Errorf("after re-apply: %q", got)
	}
	cm, err := client.CoreV1().ConfigMaps("csa-edit").Get(context.Background(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"kubectl-client-side-apply", "kubectl-edit"} {
		if _, ok := managerEntry(cm, m, metav1.ManagedFieldsOperationUpdate, ""); !ok {
			t.Errorf("no Update entry for %s: %+v", m, cm.ManagedFields)
		}
	}
}

func TestKubectlDiff(t *testing.T) {
	mustKubectl(t, "", "create", "namespace", "kdiff")
	// Each mode diffs an object applied the same way: a server-side diff
	// of a client-side applied object rightly shows the last-applied
	// annotation being rewritten.
	for _, mode := range [][]string{nil, {"--server-side"}} {
		manifest := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: d" + strings.Join(mode, "") + "\n  namespace: kdiff\ndata:\n  v: one\n"
		args := append([]string{"diff", "-f", "-"}, mode...)
		// Against nothing: the whole object is new.
		if res := runKubectl(t, manifest, args...); res.Code != 1 || !strings.Contains(res.Stdout, "+  v: one") {
			t.Errorf("diff %v before create: exit %d\n%s%s", mode, res.Code, res.Stdout, res.Stderr)
		}
		mustKubectl(t, manifest, append([]string{"apply", "-f", "-"}, mode...)...)
		if res := runKubectl(t, manifest, args...); res.Code != 0 || res.Stdout != "" {
			t.Errorf("diff %v of an unchanged object: exit %d\n%s%s", mode, res.Code, res.Stdout, res.Stderr)
		}
		res := runKubectl(t, strings.Replace(manifest, "v: one", "v: two", 1), args...)
		if res.Code != 1 || !strings.Contains(res.Stdout, "-  v: one") || !strings.Contains(res.Stdout, "+  v: two") {
			t.Errorf("diff %v of a change: exit %d\n%s%s", mode, res.Code, res.Stdout, res.Stderr)
		}
		for _, noise := range []string{"managedFields", "resourceVersion", "generation"} {
			if strings.Contains(res.Stdout, noise) {
				t.Errorf("diff %v shows %s:\n%s", mode, noise, res.Stdout)
			}
		}
	}
	if got := mustKubectl(t, "", "-n", "kdiff", "get", "cm", "d", "d--server-side", "-o", "jsonpath={.items[*].data.v}"); got != "one one" {
		t.Errorf("diff changed the objects: %q", got)
	}
}

// deleteWith deletes a ConfigMap with options and returns what the server
// answered (the object while it waits for finalizers).
func deleteWith(t *testing.T, ns, name string, opts metav1.DeleteOptions) (*corev1.ConfigMap, int) {
	t.Helper()
	var code int
	raw, err := client.CoreV1().RESTClient().Delete().Namespace(ns).Resource("configmaps").Name(name).
		Body(&opts).Do(context.Background()).StatusCode(&code).Raw()
	if err != nil {
		t.Fatalf("delete %s: %v", name, err)
	}
	cm := &corev1.ConfigMap{}
	if err := json.Unmarshal(raw, cm); err != nil {
		t.Fatal(err)
	}
	return cm, code
}

func TestDeletionPropagationFinalizers(t *testing.T) {
	ctx := context.Background()
	mkNamespace(t, "propagation")
	cms := client.CoreV1().ConfigMaps("propagation")
	// The "hold" finalizer keeps every object here until the test lets it
	// go, whatever the garbage collector does with its own finalizers.
	const hold = "example.com/hold"
	mk := func(name string) {
		t.Helper()
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Finalizers: []string{hold}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name string
		opts metav1.DeleteOptions
		want string
		code int
	}{
		{"foreground", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationForeground)}, metav1.FinalizerDeleteDependents, http.StatusOK},
		{"orphan", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationOrphan)}, metav1.FinalizerOrphanDependents, http.StatusOK},
		{"orphan-dependents", metav1.DeleteOptions{OrphanDependents: ptr.To(true)}, metav1.FinalizerOrphanDependents, http.StatusOK},
		{"cascade-legacy", metav1.DeleteOptions{OrphanDependents: ptr.To(false)}, "", http.StatusAccepted},
		{"background", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}, "", http.StatusOK},
	}
	for _, c := range cases {
		mk(c.name)
		got, code := deleteWith(t, "propagation", c.name, c.opts)
		if code != c.code || got.DeletionTimestamp == nil {
			t.Errorf("%s: code %d deletionTimestamp %v", c.name, code, got.DeletionTimestamp)
		}
		want := []string{hold}
		if c.want != "" {
			want = append(want, c.want)
		}
		if strings.Join(got.Finalizers, ",") != strings.Join(want, ",") {
			t.Errorf("%s: finalizers %v, want %v", c.name, got.Finalizers, want)
		}
	}

	bad := metav1.DeleteOptions{OrphanDependents: ptr.To(true), PropagationPolicy: ptr.To(metav1.DeletePropagationOrphan)}
	mk("both")
	err := cms.Delete(ctx, "both", bad)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "orphanDependents and deletionPropagation cannot be both set") {
		t.Errorf("both options: %v", err)
	}

	// No finalizer may be added to an object being deleted.
	cm, err := cms.Get(ctx, "background", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Finalizers = append(cm.Finalizers, "example.com/late")
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "no new finalizers can be added if the object is being deleted") {
		t.Errorf("adding a finalizer while deleting: %v", err)
	}

	// Removing the last finalizer removes the object.
	for _, c := range append(cases, struct {
		name string
		opts metav1.DeleteOptions
		want string
		code int
	}{name: "both"}) {
		_, err := cms.Patch(ctx, c.name, types.JSONPatchType, []byte(`[{"op":"replace","path":"/metadata/finalizers","value":[]}]`), metav1.PatchOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("%s: clearing finalizers: %v", c.name, err)
		}
		if c.name == "both" {
			continue
		}
		if _, err := cms.Get(ctx, c.name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("%s: still there after its last finalizer went: %v", c.name, err)
		}
	}
}

func TestNamespaceDeletion(t *testing.T) {
	ctx := context.Background()
	const hold = "example.com/hold"
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "doomed", Finalizers: []string{hold}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	out := mustKubectl(t, "", "delete", "namespace", "doomed", "--wait=false")
	if !strings.Contains(out, `namespace "doomed" deleted`) {
		t.Errorf("delete output: %q", out)
	}
	ns, err := client.CoreV1().Namespaces().Get(ctx, "doomed", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("namespace gone at once: %v", err)
	}
	if ns.DeletionTimestamp == nil || ns.Status.Phase != corev1.NamespaceTerminating {
		t.Errorf("deleted namespace: deletionTimestamp %v phase %q", ns.DeletionTimestamp, ns.Status.Phase)
	}
	if got := mustKubectl(t, "", "get", "ns", "doomed", "-o", "jsonpath={.status.phase}"); got != "Terminating" {
		t.Errorf("kubectl sees phase %q", got)
	}

	for _, name := range []string{"default", "kube-system", "kube-public", "kube-node-lease"} {
		res := runKubectl(t, "", "delete", "namespace", name, "--wait=false")
		want := `namespaces "` + name + `" is forbidden: this namespace may not be deleted`
		if res.Code == 0 || !strings.Contains(res.Stderr, want) {
			t.Errorf("delete %s: exit %d stderr %q", name, res.Code, res.Stderr)
		}
	}
	err = client.CoreV1().Namespaces().Delete(ctx, "default", metav1.DeleteOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("client-go delete of default: %v", err)
	}
	if ns, err := client.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err != nil || ns.DeletionTimestamp != nil {
		t.Errorf("default after refused delete: %v %v", err, ns.DeletionTimestamp)
	}
}
