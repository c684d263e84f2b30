package integration

import (
	"context"
	"encoding/json"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stypes "k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/dynamic"
)

// crudCase describes a resource the way upstream's generic conformance
// test (e2e framework/conformance.TestResource) drives it: an object to
// create, a change to its spec (or labels) and, for resources with
// /status, a change to its status, each also sent as every kind of
// patch.
type crudCase struct {
	gvr        schema.GroupVersionResource
	namespaced bool
	// object is the JSON of the object without apiVersion, kind and name.
	object string
	// spec is a merge patch that changes the object; it doubles as its
	// strategic and apply form, as upstream's cases do.
	spec string
	// status, when set, is the merge patch of a status change; check
	// reads the status back.
	status string
	check  func(status map[string]any) error
}

// runCRUD creates, reads, updates (object and status), patches with
// merge, strategic, apply and JSON patches, lists by label and deletes by
// collection, as the conformance test does, failing on any refusal.
func runCRUD(t *testing.T, ns string, tc crudCase) {
	t.Helper()
	ctx := context.Background()
	dyn := dynamic.NewForConfigOrDie(restCfg)
	var res dynamic.ResourceInterface = dyn.Resource(tc.gvr)
	if tc.namespaced {
		res = dyn.Resource(tc.gvr).Namespace(ns)
	}
	label := "crud-" + utilrand.String(6)
	name := "test-" + label
	kind := kindOf(t, tc.gvr)
	initial := func() *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		if err := json.Unmarshal([]byte(tc.object), &u.Object); err != nil {
			t.Fatal(err)
		}
		u.SetAPIVersion(tc.gvr.GroupVersion().String())
		u.SetKind(kind)
		u.SetName(name)
		u.SetLabels(map[string]string{"crud": label})
		return u
	}
	recreate := func() {
		t.Helper()
		if err := res.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatalf("delete %s: %v", tc.gvr.Resource, err)
		}
		if _, err := res.Create(ctx, initial(), metav1.CreateOptions{FieldValidation: "Strict"}); err != nil {
			t.Fatalf("create %s: %v", tc.gvr.Resource, err)
		}
	}
	patchOpts := func(pt k8stypes.PatchType) metav1.PatchOptions {
		o := metav1.PatchOptions{FieldValidation: "Strict"}
		if pt == k8stypes.ApplyPatchType {
			o.FieldManager, o.Force = "crud-apply", new(bool)
			*o.Force = true
		}
		return o
	}
	// An apply patch names what it applies to, as upstream's test
	// completes its patches.
	withType := func(patch string) string {
		u := &unstructured.Unstructured{}
		if err := json.Unmarshal([]byte(patch), &u.Object); err != nil {
			t.Fatal(err)
		}
		u.SetAPIVersion(tc.gvr.GroupVersion().String())
		u.SetKind(kind)
		u.SetName(name)
		b, _ := json.Marshal(u.Object)
		return string(b)
	}

	recreate()
	cur, err := res.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var change map[string]any
	if err := json.Unmarshal([]byte(tc.spec), &change); err != nil {
		t.Fatal(err)
	}
	merged, _ := json.Marshal(mergeJSON(cur.Object, change))
	next := &unstructured.Unstructured{}
	_ = json.Unmarshal(merged, &next.Object)
	if _, err := res.Update(ctx, next, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update %s: %v", tc.gvr.Resource, err)
	}
	if tc.status != "" {
		cur, err := res.Get(ctx, name, metav1.GetOptions{}, "status")
		if err != nil {
			t.Fatalf("get %s/status: %v", tc.gvr.Resource, err)
		}
		var st map[string]any
		_ = json.Unmarshal([]byte(tc.status), &st)
		merged, _ := json.Marshal(mergeJSON(cur.Object, st))
		next := &unstructured.Unstructured{}
		_ = json.Unmarshal(merged, &next.Object)
		out, err := res.UpdateStatus(ctx, next, metav1.UpdateOptions{})
		if err != nil {
			t.Fatalf("update %s/status: %v", tc.gvr.Resource, err)
		}
		if err := tc.check(statusOf(out)); err != nil {
			t.Errorf("%s/status after update: %v", tc.gvr.Resource, err)
		}
	}
	for _, pt := range []k8stypes.PatchType{k8stypes.MergePatchType, k8stypes.StrategicMergePatchType, k8stypes.ApplyPatchType} {
		recreate()
		patch := tc.spec
		if pt == k8stypes.ApplyPatchType {
			patch = withType(patch)
		}
		if _, err := res.Patch(ctx, name, pt, []byte(patch), patchOpts(pt)); err != nil {
			t.Errorf("%s patch of %s: %v", pt, tc.gvr.Resource, err)
		}
		if tc.status == "" {
			continue
		}
		recreate()
		patch = tc.status
		if pt == k8stypes.ApplyPatchType {
			patch = withType(patch)
		}
		out, err := res.Patch(ctx, name, pt, []byte(patch), patchOpts(pt), "status")
		if err != nil {
			t.Errorf("%s patch of %s/status: %v", pt, tc.gvr.Resource, err)
		} else if err := tc.check(statusOf(out)); err != nil {
			t.Errorf("%s patch of %s/status: %v", pt, tc.gvr.Resource, err)
		}
	}

	list, err := res.List(ctx, metav1.ListOptions{LabelSelector: "crud=" + label})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("list %s by label: %v, %d items", tc.gvr.Resource, err, len(list.Items))
	}
	if err := res.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "crud=" + label}); err != nil {
		t.Fatalf("delete collection of %s: %v", tc.gvr.Resource, err)
	}
	if _, err := res.Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("%s after delete collection: %v", tc.gvr.Resource, err)
	}
}

// kindOf reads a resource's kind from discovery, as clients do.
func kindOf(t *testing.T, gvr schema.GroupVersionResource) string {
	t.Helper()
	list, err := client.Discovery().ServerResourcesForGroupVersion(gvr.GroupVersion().String())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range list.APIResources {
		if r.Name == gvr.Resource {
			return r.Kind
		}
	}
	t.Fatalf("discovery of %s lacks %s", gvr.GroupVersion(), gvr.Resource)
	return ""
}

// mergeJSON applies a JSON merge patch (objects merge, anything else
// replaces) to a copy of obj.
func mergeJSON(obj, patch map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range obj {
		out[k] = v
	}
	for k, v := range patch {
		if pm, ok := v.(map[string]any); ok {
			if om, ok := out[k].(map[string]any); ok {
				out[k] = mergeJSON(om, pm)
				continue
			}
		}
		out[k] = v
	}
	return out
}

func statusOf(u *unstructured.Unstructured) map[string]any {
	st, _ := u.Object["status"].(map[string]any)
	return st
}
