package integration

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// ownedBy is an ownerReference to obj.
func ownedBy(apiVersion, kind string, obj metav1.Object, block bool) metav1.OwnerReference {
	ref := metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: obj.GetName(), UID: obj.GetUID()}
	if block {
		ref.BlockOwnerDeletion = ptr.To(true)
	}
	return ref
}

func gcReplicaSet(t *testing.T, ns, name string, finalizers ...string) *appsv1.ReplicaSet {
	t.Helper()
	labels := map[string]string{"app": name}
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Finalizers: finalizers},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To[int32](0),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
			},
		},
	}
	out, err := client.AppsV1().ReplicaSets(ns).Create(context.Background(), rs, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create replicaset: %v", err)
	}
	return out
}

func gcConfigMap(t *testing.T, ns, name string, finalizers []string, owners ...metav1.OwnerReference) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, OwnerReferences: owners, Finalizers: finalizers}}
	out, err := client.CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create configmap %s: %v", name, err)
	}
	return out
}

func configMapGone(ns, name string) error {
	_, err := client.CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	return fmt.Errorf("configmap %s/%s still exists", ns, name)
}

func TestGCBackgroundCascade(t *testing.T) {
	ctx := context.Background()
	ns := "gc-background"
	mkNamespace(t, ns)
	rs := gcReplicaSet(t, ns, "web")
	for i := range 5 {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("web-%d", i), OwnerReferences: []metav1.OwnerReference{ownedBy("apps/v1", "ReplicaSet", rs, true)}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
		}
		if _, err := client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Another owner's dependent must survive.
	keeper := gcConfigMap(t, ns, "keeper", nil)
	gcConfigMap(t, ns, "kept", nil, ownedBy("v1", "ConfigMap", keeper, false))

	if err := client.AppsV1().ReplicaSets(ns).Delete(ctx, rs.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, func() error {
		pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		if len(pods.Items) != 0 {
			return fmt.Errorf("%d pods left", len(pods.Items))
		}
		return nil
	})
	if _, err := client.CoreV1().ConfigMaps(ns).Get(ctx, "kept", metav1.GetOptions{}); err != nil {
		t.Fatalf("dependent of a live owner was touched: %v", err)
	}
}

func TestGCForegroundChain(t *testing.T) {
	ctx := context.Background()
	ns := "gc-foreground"
	mkNamespace(t, ns)
	// The finalizer is set directly, as the API server does for a delete
	// with propagationPolicy=Foreground.
	rs := gcReplicaSet(t, ns, "front", metav1.FinalizerDeleteDependents)
	mid := gcConfigMap(t, ns, "mid", nil, ownedBy("apps/v1", "ReplicaSet", rs, true))
	gcConfigMap(t, ns, "leaf", nil, ownedBy("v1", "ConfigMap", mid, true))
	gcConfigMap(t, ns, "loose", nil, ownedBy("apps/v1", "ReplicaSet", rs, false))

	if err := client.AppsV1().ReplicaSets(ns).Delete(ctx, rs.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, func() error {
		_, err := client.AppsV1().ReplicaSets(ns).Get(ctx, rs.Name, metav1.GetOptions{})
		if err == nil {
			return fmt.Errorf("owner still present")
		}
		if !apierrors.IsNotFound(err) {
			return err
		}
		// The owner is gone: its blocking dependent must have gone first.
		if err := configMapGone(ns, "mid"); err != nil {
			t.Fatalf("owner removed before its blocking dependent: %v", err)
		}
		return nil
	})
	for _, name := range []string{"leaf", "loose"} {
		eventually(t, 30*time.Second, func() error { return configMapGone(ns, name) })
	}
}

// TestGCDependencyCycle is upstream's "should not be blocked by
// dependency circle": three objects owning each other in a circle, every
// reference blocking, one deleted in the foreground; all must go.
func TestGCDependencyCycle(t *testing.T) {
	ctx := context.Background()
	ns := "gc-cycle"
	mkNamespace(t, ns)
	one, two, three := gcConfigMap(t, ns, "one", nil), gcConfigMap(t, ns, "two", nil), gcConfigMap(t, ns, "three", nil)
	for _, link := range []struct{ dep, owner *corev1.ConfigMap }{{one, three}, {two, one}, {three, two}} {
		ref := ownedBy("v1", "ConfigMap", link.owner, true)
		patch := fmt.Sprintf(`{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":%q,"uid":%q,"controller":true,"blockOwnerDeletion":true}]}}`, ref.Name, ref.UID)
		if _, err := client.CoreV1().ConfigMaps(ns).Patch(ctx, link.dep.Name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	foreground := metav1.DeletePropagationForeground
	if err := client.CoreV1().ConfigMaps(ns).Delete(ctx, one.Name, metav1.DeleteOptions{
		PropagationPolicy: &foreground, Preconditions: metav1.NewUIDPreconditions(string(one.UID)),
	}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"one", "two", "three"} {
		eventually(t, 30*time.Second, func() error { return configMapGone(ns, name) })
	}
}

func TestGCOrphan(t *testing.T) {
	ctx := context.Background()
	ns := "gc-orphan"
	mkNamespace(t, ns)
	other := gcConfigMap(t, ns, "other", nil)
	owner := gcConfigMap(t, ns, "parent", []string{metav1.FinalizerOrphanDependents})
	for i := range 3 {
		gcConfigMap(t, ns, fmt.Sprintf("child-%d", i), nil, ownedBy("v1", "ConfigMap", owner, true), ownedBy("v1", "ConfigMap", other, false))
	}
	if err := client.CoreV1().ConfigMaps(ns).Delete(ctx, owner.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, func() error { return configMapGone(ns, owner.Name) })
	for i := range 3 {
		cm, err := client.CoreV1().ConfigMaps(ns).Get(ctx, fmt.Sprintf("child-%d", i), metav1.GetOptions{})
		if err != nil {
			t.Fatalf("orphaned dependent was deleted: %v", err)
		}
		if len(cm.OwnerReferences) != 1 || cm.OwnerReferences[0].UID != other.UID {
			t.Fatalf("child-%d owners = %+v, want only the reference to %q", i, cm.OwnerReferences, other.Name)
		}
	}
}

func TestGCDanglingDependent(t *testing.T) {
	ns := "gc-dangling"
	mkNamespace(t, ns)
	ghost := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "ghost", UID: types.UID("00000000-0000-0000-0000-00000000dead")}
	gcConfigMap(t, ns, "dangling", nil, ghost)
	// Same name as a live object but another uid: still dangling.
	live := gcConfigMap(t, ns, "live", nil)
	impostor := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: live.Name, UID: types.UID("00000000-0000-0000-0000-00000000beef")}
	gcConfigMap(t, ns, "impostor-child", nil, impostor)
	gcConfigMap(t, ns, "real-child", nil, ownedBy("v1", "ConfigMap", live, false))
	for _, name := range []string{"dangling", "impostor-child"} {
		eventually(t, 30*time.Second, func() error { return configMapGone(ns, name) })
	}
	if _, err := client.CoreV1().ConfigMaps(ns).Get(context.Background(), "real-child", metav1.GetOptions{}); err != nil {
		t.Fatalf("dependent of a live owner was deleted: %v", err)
	}
}

func TestNamespaceDeletionWithContent(t *testing.T) {
	ctx := context.Background()
	ns := "gc-namespace"
	mkNamespace(t, ns)
	const n, workers = 1000, 20
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%04d", i)}, Data: map[string]string{"k": "v"}}
				if _, err := client.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	start := time.Now()
	if err := client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("namespace with content vanished at once (want Terminating): %v", err)
	}
	if got.Status.Phase != corev1.NamespaceTerminating {
		t.Fatalf("phase = %q, want Terminating", got.Status.Phase)
	}
	eventually(t, 60*time.Second, func() error {
		_, err := client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		return fmt.Errorf("namespace %s still exists", ns)
	})
	t.Logf("namespace with %d ConfigMaps deleted in %v", n, time.Since(start).Round(time.Millisecond))
	cms, err := client.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cms.Items) != 0 {
		t.Fatalf("%d ConfigMaps outlived their namespace", len(cms.Items))
	}
}

func TestDefaultServiceAccount(t *testing.T) {
	ctx := context.Background()
	ns := "gc-serviceaccount"
	mkNamespace(t, ns)
	get := func() error {
		_, err := client.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		return err
	}
	eventually(t, 30*time.Second, get)
	if err := client.CoreV1().ServiceAccounts(ns).Delete(ctx, "default", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, get)
}
