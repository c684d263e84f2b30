package integration

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
)

func mkNamespace(t *testing.T, name string) {
	t.Helper()
	if _, err := client.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// rootCAName is the ConfigMap the root CA publisher keeps in every
// namespace, as upstream's does. Tests that count ConfigMaps or their
// events either wait for it and allow for it, or select it away.
const rootCAName = "kube-root-ca.crt"

// notRootCA is a field selector for every ConfigMap but rootCAName.
const notRootCA = "metadata.name!=" + rootCAName

// waitRootCA waits until rootCAName exists in ns, so that a test which then
// counts the namespace's ConfigMaps, or events after a resourceVersion,
// knows it is there and does not see it arrive half-way.
func waitRootCA(t *testing.T, c kubernetes.Interface, ns string) {
	t.Helper()
	eventually(t, 30*time.Second, func() error {
		_, err := c.CoreV1().ConfigMaps(ns).Get(context.Background(), rootCAName, metav1.GetOptions{})
		return err
	})
}

func protobufClient(t *testing.T) kubernetes.Interface {
	cfg := rest.CopyConfig(restCfg)
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf"
	var protoResponses atomic.Int64
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(r)
			if err == nil && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/vnd.kubernetes.protobuf") {
				protoResponses.Add(1)
			}
			return resp, err
		})
	})
	t.Cleanup(func() {
		if protoResponses.Load() == 0 {
			t.Errorf("no response was protobuf")
		}
	})
	return kubernetes.NewForConfigOrDie(cfg)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestProtobufRoundTrip(t *testing.T) {
	ctx := context.Background()
	mkNamespace(t, "proto")
	pc := protobufClient(t)
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "pb", Labels: map[string]string{"a": "b"}},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "pb"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "pb"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
			},
		},
	}
	w, err := pc.AppsV1().Deployments("proto").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	created, err := pc.AppsV1().Deployments("proto").Create(ctx, dep, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *created.Spec.Replicas != 1 || created.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType || created.Generation != 1 {
		t.Errorf("defaults not applied: replicas %v strategy %q generation %d", created.Spec.Replicas, created.Spec.Strategy.Type, created.Generation)
	}
	select {
	case ev := <-w.ResultChan():
		d, ok := ev.Object.(*appsv1.Deployment)
		if ev.Type != watch.Added || !ok || d.Name != "pb" {
			t.Fatalf("protobuf watch event %v %T", ev.Type, ev.Object)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event over protobuf")
	}
	list, err := pc.AppsV1().Deployments("proto").List(ctx, metav1.ListOptions{LabelSelector: "a=b"})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("protobuf list: %v %v", err, list)
	}
	// The deployment controller writes the object's status meanwhile, so
	// the scale's resourceVersion may be stale: retry as clients do.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		sc, err := pc.AppsV1().Deployments("proto").GetScale(ctx, "pb", metav1.GetOptions{})
		if err != nil {
			return err
		}
		sc.Spec.Replicas = 4
		_, err = pc.AppsV1().Deployments("proto").UpdateScale(ctx, "pb", sc, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := pc.AppsV1().Deployments("proto").Get(ctx, "pb", metav1.GetOptions{})
	if *got.Spec.Replicas != 4 || got.Generation != 2 {
		t.Errorf("after scale: replicas %d generation %d", *got.Spec.Replicas, got.Generation)
	}
	if err := pc.AppsV1().Deployments("proto").Delete(ctx, "pb", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestStatusSubresourceSeparatesSpecAndStatus(t *testing.T) {
	ctx := context.Background()
	mkNamespace(t, "status")
	d, err := client.AppsV1().Deployments("status").Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "s"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "s"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "s"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}},
		},
		Status: appsv1.DeploymentStatus{Replicas: 9},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Status.Replicas != 0 {
		t.Errorf("status set on create: %d", d.Status.Replicas)
	}
	// The deployment controller writes the object too: each write is
	// retried on a fresh read when it conflicts with one of the
	// controller's, and what must stay is compared with what was read.
	var out *appsv1.Deployment
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := client.AppsV1().Deployments("status").Get(ctx, "s", metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Status.Replicas = 3
		cur.Spec.Replicas = ptr.To[int32](7)
		out, err = client.AppsV1().Deployments("status").UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if out.Status.Replicas != 3 || *out.Spec.Replicas != 1 {
		t.Errorf("status update: status %d spec %d (spec must not change)", out.Status.Replicas, *out.Spec.Replicas)
	}
	var out2 *appsv1.Deployment
	var stored int32
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := client.AppsV1().Deployments("status").Get(ctx, "s", metav1.GetOptions{})
		if err != nil {
			return err
		}
		stored = cur.Status.Replicas
		cur.Status.Replicas = stored + 2
		cur.Spec.Replicas = ptr.To[int32](2)
		out2, err = client.AppsV1().Deployments("status").Update(ctx, cur, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if out2.Status.Replicas != stored || *out2.Spec.Replicas != 2 {
		t.Errorf("main update: status %d (must stay %d) spec %d", out2.Status.Replicas, stored, *out2.Spec.Replicas)
	}
}

func TestDynamicClientAndPatchTypes(t *testing.T) {
	ctx := context.Background()
	mkNamespace(t, "dyn")
	dc := dynamic.NewForConfigOrDie(restCfg)
	cms := dc.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("dyn")
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"generateName": "gen-"},
		"data":     map[string]any{"a": "1"},
	}}
	created, err := cms.Create(ctx, u, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	name := created.GetName()
	if !strings.HasPrefix(name, "gen-") || len(name) != len("gen-")+5 {
		t.Errorf("generateName produced %q", name)
	}
	for _, p := range []struct {
		pt   types.PatchType
		body string
	}{
		{types.MergePatchType, `{"data":{"b":"2"}}`},
		{types.StrategicMergePatchType, `{"data":{"c":"3"}}`},
		{types.JSONPatchType, `[{"op":"add","path":"/data/d","value":"4"}]`},
	} {
		if _, err := cms.Patch(ctx, name, p.pt, []byte(p.body), metav1.PatchOptions{}); err != nil {
			t.Fatalf("%s: %v", p.pt, err)
		}
	}
	got, err := cms.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	data, _, _ := unstructured.NestedStringMap(got.Object, "data")
	if fmt.Sprint(data) != "map[a:1 b:2 c:3 d:4]" {
		t.Errorf("after patches: %v", data)
	}
	// A patch that carries a stale resourceVersion conflicts.
	_, err = cms.Patch(ctx, name, types.MergePatchType, []byte(`{"metadata":{"resourceVersion":"1"},"data":{"e":"5"}}`), metav1.PatchOptions{})
	if !apierrors.IsConflict(err) {
		t.Errorf("stale patch: want Conflict, got %v", err)
	}
	// Dry run changes nothing.
	if _, err := cms.Patch(ctx, name, types.MergePatchType, []byte(`{"data":{"dry":"x"}}`), metav1.PatchOptions{DryRun: []string{"All"}}); err != nil {
		t.Fatal(err)
	}
	got, _ = cms.Get(ctx, name, metav1.GetOptions{})
	if _, ok := got.Object["data"].(map[string]any)["dry"]; ok {
		t.Errorf("dry-run patch was stored")
	}
}

func TestListPaginationAndSelectors(t *testing.T) {
	ctx := context.Background()
	mkNamespace(t, "page")
	// The namespace's kube-root-ca.crt is part of every list below.
	waitRootCA(t, client, "page")
	for i := 0; i < 25; i++ {
		_, err := client.CoreV1().ConfigMaps("page").Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%02d", i), Labels: map[string]string{"parity": []string{"even", "odd"}[i%2]}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	opts := metav1.ListOptions{Limit: 10}
	pages := 0
	var firstRV string
	for {
		l, err := client.CoreV1().ConfigMaps("page").List(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if firstRV == "" {
			firstRV = l.ResourceVersion
			if l.RemainingItemCount == nil || *l.RemainingItemCount != 16 {
				t.Errorf("remainingItemCount on first page: %v", l.RemainingItemCount)
			}
		} else if l.ResourceVersion != firstRV {
			t.Errorf("pages read at different revisions: %s vs %s", l.ResourceVersion, firstRV)
		}
		for _, it := range l.Items {
			names = append(names, it.Name)
		}
		if l.Continue == "" {
			break
		}
		opts.Continue = l.Continue
		// Writes between pages do not show up in a paginated list.
		_, _ = client.CoreV1().ConfigMaps("page").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("late-%d", pages)}}, metav1.CreateOptions{})
	}
	if pages != 3 || len(names) != 26 || names[0] != "cm-00" || names[24] != "cm-24" || names[25] != rootCAName {
		t.Errorf("pagination: %d pages, %d names (%v)", pages, len(names), names)
	}
	odd, err := client.CoreV1().ConfigMaps("page").List(ctx, metav1.ListOptions{LabelSelector: "parity=odd", Limit: 5})
	if err != nil || len(odd.Items) != 5 || odd.Items[0].Name != "cm-01" {
		t.Errorf("label selector with limit: %v %d", err, len(odd.Items))
	}
	notEven, err := client.CoreV1().ConfigMaps("page").List(ctx, metav1.ListOptions{LabelSelector: "parity notin (even)"})
	// "notin" also matches objects without the label: the 12 odd ones,
	// the two written between pages and kube-root-ca.crt.
	if err != nil || len(notEven.Items) != 15 {
		t.Errorf("set-based selector: %v %d", err, len(notEven.Items))
	}
	byName, err := client.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{FieldSelector: "metadata.namespace=page,metadata.name=cm-07"})
	if err != nil || len(byName.Items) != 1 {
		t.Errorf("field selector: %v %d", err, len(byName.Items))
	}
	// A continue token from before a compaction is rejected with 410.
	_, err = client.CoreV1().ConfigMaps("page").List(ctx, metav1.ListOptions{Limit: 1, Continue: "bm90LWEtdG9rZW4"})
	if !apierrors.IsBadRequest(err) {
		t.Errorf("garbage continue token: want 400, got %v", err)
	}
}

func TestPodFieldSelectorsAndBinding(t *testing.T) {
	ctx := context.Background()
	mkNamespace(t, "bind")
	for _, n := range []string{"a", "b"} {
		// A scheduler of another name: the in-process one would race the
		// test's own binding and mark the pod unschedulable (no nodes).
		_, err := client.CoreV1().Pods("bind").Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: n},
			Spec:       corev1.PodSpec{SchedulerName: "bound-by-hand", Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	err := client.CoreV1().Pods("bind").Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Target: corev1.ObjectReference{Kind: "Node", Name: "node-1"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	err = client.CoreV1().Pods("bind").Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Target: corev1.ObjectReference{Kind: "Node", Name: "node-2"}}, metav1.CreateOptions{})
	if !apierrors.IsConflict(err) {
		t.Errorf("second binding: want Conflict, got %v", err)
	}
	pods, err := client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=node-1"})
	if err != nil || len(pods.Items) != 1 || pods.Items[0].Name != "a" {
		t.Fatalf("spec.nodeName selector: %v %v", err, pods)
	}
	if c := pods.Items[0].Status.Conditions; len(c) == 0 || c[0].Type != corev1.PodScheduled || c[0].Status != corev1.ConditionTrue {
		t.Errorf("binding did not set PodScheduled: %+v", c)
	}
	unbound, err := client.CoreV1().Pods("bind").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=,status.phase=Pending"})
	if err != nil || len(unbound.Items) != 1 || unbound.Items[0].Name != "b" {
		t.Errorf("unbound pending pods: %v %+v", err, unbound)
	}
	// A bound pod is deleted gracefully: it stays, marked, until its
	// kubelet (or a forced delete) finishes it.
	if err := client.CoreV1().Pods("bind").Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	p, err := client.CoreV1().Pods("bind").Get(ctx, "a", metav1.GetOptions{})
	if err != nil || p.DeletionTimestamp == nil || p.DeletionGracePeriodSeconds == nil || *p.DeletionGracePeriodSeconds != 30 {
		t.Fatalf("graceful delete: %v %+v", err, p)
	}
	if err := client.CoreV1().Pods("bind").Delete(ctx, "a", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().Pods("bind").Get(ctx, "a", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("forced delete left the pod: %v", err)
	}
	// An unbound pod goes at once.
	if err := client.CoreV1().Pods("bind").Delete(ctx, "b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().Pods("bind").Get(ctx, "b", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("unbound pod not deleted at once: %v", err)
	}
}

func TestFinalizersHoldDeletion(t *testing.T) {
	ctx := context.Background()
	cm, err := client.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "fin", Finalizers: []string{"example.com/hold"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// A precondition on a wrong uid refuses the delete.
	err = client.CoreV1().ConfigMaps("default").Delete(ctx, "fin", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptr.To(types.UID("wrong"))}})
	if !apierrors.IsConflict(err) {
		t.Errorf("wrong uid precondition: want Conflict, got %v", err)
	}
	if err := client.CoreV1().ConfigMaps("default").Delete(ctx, "fin", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &cm.UID}}); err != nil {
		t.Fatal(err)
	}
	got, err := client.CoreV1().ConfigMaps("default").Get(ctx, "fin", metav1.GetOptions{})
	if err != nil || got.DeletionTimestamp == nil {
		t.Fatalf("object with finalizer: %v %+v", err, got)
	}
	got.Finalizers = nil
	if _, err := client.CoreV1().ConfigMaps("default").Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().ConfigMaps("default").Get(ctx, "fin", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("removing the last finalizer did not delete: %v", err)
	}
}

func TestInformerSeesEveryChange(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mkNamespace(t, "inf")
	// kube-root-ca.crt arrives whenever the publisher gets to it; the
	// informer watches the test's own ConfigMaps only.
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace("inf"),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.FieldSelector = notRootCA }))
	inf := factory.Core().V1().ConfigMaps().Informer()
	var adds, updates, deletes atomic.Int64
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { adds.Add(1) },
		UpdateFunc: func(_, _ any) { updates.Add(1) },
		DeleteFunc: func(any) { deletes.Add(1) },
	})
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("informer did not sync")
	}
	for i := 0; i < 20; i++ {
		name := fmt.Sprintf("c%d", i)
		if _, err := client.CoreV1().ConfigMaps("inf").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := client.CoreV1().ConfigMaps("inf").Patch(ctx, name, types.MergePatchType, []byte(`{"data":{"x":"y"}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			if err := client.CoreV1().ConfigMaps("inf").Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	eventually(t, 10*time.Second, func() error {
		if adds.Load() != 20 || updates.Load() != 20 || deletes.Load() != 10 {
			return fmt.Errorf("adds %d updates %d deletes %d", adds.Load(), updates.Load(), deletes.Load())
		}
		if n := len(inf.GetStore().List()); n != 10 {
			return fmt.Errorf("store holds %d", n)
		}
		return nil
	})
}

func TestWatchSemantics(t *testing.T) {
	ctx := context.Background()
	mkNamespace(t, "wsem")
	// kube-root-ca.crt must come before a, or it is the first event after
	// a's version.
	waitRootCA(t, client, "wsem")
	cms := client.CoreV1().ConfigMaps("wsem")
	a, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"k": "v"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	t.Run("resume from a resourceVersion", func(t *testing.T) {
		w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: a.ResourceVersion})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		ev := next(t, w)
		if ev.Type != watch.Added || ev.Object.(*corev1.ConfigMap).Name != "b" {
			t.Errorf("first event after a's version: %v %s", ev.Type, ev.Object.(*corev1.ConfigMap).Name)
		}
	})
	t.Run("label selector transitions", func(t *testing.T) {
		w, err := cms.Watch(ctx, metav1.ListOptions{LabelSelector: "k=v", ResourceVersion: a.ResourceVersion})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		if _, err := cms.Patch(ctx, "a", types.MergePatchType, []byte(`{"metadata":{"labels":{"k":"other"}}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		if ev := next(t, w); ev.Type != watch.Deleted {
			t.Errorf("object leaving the selector: %v, want DELETED", ev.Type)
		}
		if _, err := cms.Patch(ctx, "b", types.MergePatchType, []byte(`{"metadata":{"labels":{"k":"v"}}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		if ev := next(t, w); ev.Type != watch.Added || ev.Object.(*corev1.ConfigMap).Name != "b" {
			t.Errorf("object entering the selector: %v, want ADDED b", ev.Type)
		}
	})
	t.Run("initial events end with a bookmark", func(t *testing.T) {
		w, err := cms.Watch(ctx, metav1.ListOptions{FieldSelector: notRootCA, SendInitialEvents: ptr.To(true), AllowWatchBookmarks: true, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		var added []string
		for {
			ev := next(t, w)
			if ev.Type == watch.Bookmark {
				cm := ev.Object.(*corev1.ConfigMap)
				if cm.Annotations[metav1.InitialEventsAnnotationKey] != "true" || cm.ResourceVersion == "" {
					t.Errorf("bookmark without the initial-events-end annotation: %+v", cm.ObjectMeta)
				}
				break
			}
			added = append(added, ev.Object.(*corev1.ConfigMap).Name)
		}
		if fmt.Sprint(added) != "[a b]" {
			t.Errorf("initial events: %v", added)
		}
	})
	t.Run("too old resourceVersion is 410", func(t *testing.T) {
		if _, err := client.CoreV1().ConfigMaps("wsem").Watch(ctx, metav1.ListOptions{SendInitialEvents: ptr.To(true), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}); !apierrors.IsBadRequest(err) {
			t.Errorf("sendInitialEvents without bookmarks: want 400, got %v", err)
		}
		// The watch cache keeps the last 1024 events of a resource; push
		// a's version out of that window.
		var wg sync.WaitGroup
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				for i := 0; i < 140; i++ {
					_, _ = cms.Patch(ctx, "b", types.MergePatchType, []byte(fmt.Sprintf(`{"data":{"g%d":"%d"}}`, g, i)), metav1.PatchOptions{})
				}
			}(g)
		}
		wg.Wait()
		// Out of the cache's window but still in etcd: served from etcd,
		// so a client resuming after a restart does not have to relist.
		w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: a.ResourceVersion})
		if err != nil {
			t.Fatal(err)
		}
		ev := next(t, w)
		w.Stop()
		if ev.Type != watch.Added || ev.Object.(*corev1.ConfigMap).Name != "b" {
			t.Errorf("resume from a version out of the cache's window: %v %v", ev.Type, ev.Object)
		}
		// Once etcd has compacted it away, the answer is 410 Gone.
		rev, err := inst.Etcd.Get(ctx, "/registry/health")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := inst.Etcd.Compact(ctx, rev.Header.Revision); err != nil {
			t.Fatal(err)
		}
		w, err = cms.Watch(ctx, metav1.ListOptions{ResourceVersion: a.ResourceVersion})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		ev = next(t, w)
		st, ok := ev.Object.(*metav1.Status)
		if ev.Type != watch.Error || !ok || st.Code != 410 || st.Reason != metav1.StatusReasonExpired {
			t.Errorf("watch from a compacted version: %v %+v", ev.Type, ev.Object)
		}
	})
}

func next(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("watch closed")
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event within 10s")
	}
	return watch.Event{}
}
