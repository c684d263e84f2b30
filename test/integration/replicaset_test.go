package integration

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
)

// rsTemplate is a pod template the fake kubelet runs (it is bound to a
// node by name; no Node object is needed).
func rsTemplate(app string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}},
		Spec: corev1.PodSpec{NodeName: "fake-node", TerminationGracePeriodSeconds: ptr.To[int64](0),
			Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}
}

func createRS(t *testing.T, ns, name string, replicas int32) *appsv1.ReplicaSet {
	t.Helper()
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: rsTemplate(name)},
	}
	out, err := client.AppsV1().ReplicaSets(ns).Create(context.Background(), rs, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create replicaset: %v", err)
	}
	return out
}

// activePods lists the pods with the label app=app that are not
// terminating, by name.
func activePods(t *testing.T, ns, app string) []corev1.Pod {
	t.Helper()
	list, err := client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		t.Fatal(err)
	}
	var out []corev1.Pod
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodFailed && p.Status.Phase != corev1.PodSucceeded {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// waitRSReady waits until the ReplicaSet reports want ready and available
// replicas for its current generation, with want active pods behind it.
func waitRSReady(t *testing.T, ns, name string, want int32) *appsv1.ReplicaSet {
	t.Helper()
	var rs *appsv1.ReplicaSet
	eventually(t, 30*time.Second, func() error {
		var err error
		rs, err = client.AppsV1().ReplicaSets(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		st := rs.Status
		if st.ObservedGeneration != rs.Generation || st.Replicas != want || st.ReadyReplicas != want || st.AvailableReplicas != want || st.FullyLabeledReplicas != want {
			return fmt.Errorf("status %+v at generation %d, want %d ready", st, rs.Generation, want)
		}
		if n := len(activePods(t, ns, name)); n != int(want) {
			return fmt.Errorf("%d active pods, want %d", n, want)
		}
		return nil
	})
	return rs
}

func TestReplicaSetCreatesPodsAndHeals(t *testing.T) {
	ns := newNamespace(t, client, "rs-heal")
	fakeKubelet(t, ns, nil)
	rs := createRS(t, ns, "web", 3)
	waitRSReady(t, ns, "web", 3)

	pods := activePods(t, ns, "web")
	for _, p := range pods {
		ref := metav1.GetControllerOf(&p)
		if ref == nil || ref.UID != rs.UID || ref.Kind != "ReplicaSet" || ref.APIVersion != "apps/v1" || !ptr.Deref(ref.BlockOwnerDeletion, false) {
			t.Errorf("pod %s owner references %+v", p.Name, p.OwnerReferences)
		}
		if !strings.HasPrefix(p.Name, "web-") {
			t.Errorf("pod name %q lacks the ReplicaSet's prefix", p.Name)
		}
	}
	eventually(t, 10*time.Second, func() error {
		return hasEvent(ns, "ReplicaSet", "web", "SuccessfulCreate", "Created pod: "+pods[0].Name)
	})

	victim := pods[1]
	if err := client.CoreV1().Pods(ns).Delete(context.Background(), victim.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, func() error {
		now := activePods(t, ns, "web")
		if len(now) != 3 {
			return fmt.Errorf("%d active pods", len(now))
		}
		for _, p := range now {
			if p.UID == victim.UID {
				return fmt.Errorf("deleted pod %s still active", p.Name)
			}
		}
		return nil
	})
	waitRSReady(t, ns, "web", 3)

	// A pod that fails is replaced too; it stays behind, no longer counted.
	failed := activePods(t, ns, "web")[0]
	failed.Status.Phase = corev1.PodFailed
	if _, err := client.CoreV1().Pods(ns).UpdateStatus(context.Background(), &failed, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitRSReady(t, ns, "web", 3)
}

// hasEvent finds an event about kind/name with reason whose message
// starts with message.
func hasEvent(ns, kind, name, reason, message string) error {
	evs, err := client.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, e := range evs.Items {
		if e.InvolvedObject.Kind == kind && e.InvolvedObject.Name == name && e.Reason == reason && strings.HasPrefix(e.Message, message) {
			return nil
		}
	}
	return fmt.Errorf("no %s event %q about %s %s among %d", reason, message, kind, name, len(evs.Items))
}

func TestReplicaSetScaleWithKubectl(t *testing.T) {
	ns := newNamespace(t, client, "rs-scale")
	fakeKubelet(t, ns, nil)
	createRS(t, ns, "web", 2)
	waitRSReady(t, ns, "web", 2)

	mustKubectl(t, "", "-n", ns, "scale", "rs/web", "--replicas=5")
	waitRSReady(t, ns, "web", 5)

	// Two pods stop being ready; scaling down to 3 removes exactly those.
	pods := activePods(t, ns, "web")
	notReady := map[string]bool{}
	for _, p := range []corev1.Pod{pods[0], pods[3]} {
		for i := range p.Status.Conditions {
			if p.Status.Conditions[i].Type == corev1.PodReady || p.Status.Conditions[i].Type == corev1.ContainersReady {
				p.Status.Conditions[i].Status = corev1.ConditionFalse
			}
		}
		if _, err := client.CoreV1().Pods(ns).UpdateStatus(context.Background(), &p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		notReady[p.Name] = true
	}
	eventually(t, 10*time.Second, func() error {
		rs, err := client.AppsV1().ReplicaSets(ns).Get(context.Background(), "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if rs.Status.ReadyReplicas != 3 {
			return fmt.Errorf("ready %d, want 3", rs.Status.ReadyReplicas)
		}
		return nil
	})
	mustKubectl(t, "", "-n", ns, "scale", "rs/web", "--replicas=3")
	waitRSReady(t, ns, "web", 3)
	for _, p := range activePods(t, ns, "web") {
		if notReady[p.Name] {
			t.Errorf("scale-down kept not-ready pod %s and deleted a ready one", p.Name)
		}
	}
	eventually(t, 10*time.Second, func() error {
		return hasEvent(ns, "ReplicaSet", "web", "SuccessfulDelete", "Deleted pod: ")
	})

	mustKubectl(t, "", "-n", ns, "scale", "rs/web", "--replicas=0")
	waitRSReady(t, ns, "web", 0)
}

func TestReplicaSetAdoptsAndReleases(t *testing.T) {
	ns := newNamespace(t, client, "rs-adopt")
	fakeKubelet(t, ns, nil)
	tmpl := rsTemplate("web")
	orphan := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "orphan", Labels: tmpl.Labels}, Spec: tmpl.Spec}
	orphan, err := client.CoreV1().Pods(ns).Create(context.Background(), orphan, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rs := createRS(t, ns, "web", 2)
	waitRSReady(t, ns, "web", 2)
	got, err := client.CoreV1().Pods(ns).Get(context.Background(), "orphan", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ref := metav1.GetControllerOf(got); ref == nil || ref.UID != rs.UID {
		t.Fatalf("orphan not adopted: %+v", got.OwnerReferences)
	}
	if got.UID != orphan.UID {
		t.Fatal("orphan was replaced rather than adopted")
	}

	// Relabelled away, the pod is released and replaced.
	got.Labels = map[string]string{"app": "elsewhere"}
	if _, err := client.CoreV1().Pods(ns).Update(context.Background(), got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, func() error {
		p, err := client.CoreV1().Pods(ns).Get(context.Background(), "orphan", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(p.OwnerReferences) != 0 {
			return fmt.Errorf("still owned: %+v", p.OwnerReferences)
		}
		return nil
	})
	waitRSReady(t, ns, "web", 2)
}

func TestReplicationController(t *testing.T) {
	ns := newNamespace(t, client, "rc")
	fakeKubelet(t, ns, nil)
	rc := &corev1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Name: "legacy"},
		Spec: corev1.ReplicationControllerSpec{Replicas: ptr.To[int32](2),
			Selector: map[string]string{"app": "legacy"}, Template: ptr.To(rsTemplate("legacy"))},
	}
	rc, err := client.CoreV1().ReplicationControllers(ns).Create(context.Background(), rc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitRC := func(want int32) {
		t.Helper()
		eventually(t, 30*time.Second, func() error {
			cur, err := client.CoreV1().ReplicationControllers(ns).Get(context.Background(), "legacy", metav1.GetOptions{})
			if err != nil {
				return err
			}
			st := cur.Status
			if st.ObservedGeneration != cur.Generation || st.Replicas != want || st.ReadyReplicas != want || st.AvailableReplicas != want || st.FullyLabeledReplicas != want {
				return fmt.Errorf("status %+v, want %d ready", st, want)
			}
			if n := len(activePods(t, ns, "legacy")); n != int(want) {
				return fmt.Errorf("%d active pods, want %d", n, want)
			}
			return nil
		})
	}
	waitRC(2)
	for _, p := range activePods(t, ns, "legacy") {
		if ref := metav1.GetControllerOf(&p); ref == nil || ref.UID != rc.UID || ref.Kind != "ReplicationController" || ref.APIVersion != "v1" {
			t.Errorf("pod %s owner references %+v", p.Name, p.OwnerReferences)
		}
	}
	eventually(t, 10*time.Second, func() error {
		return hasEvent(ns, "ReplicationController", "legacy", "SuccessfulCreate", "Created pod: legacy-")
	})
	mustKubectl(t, "", "-n", ns, "scale", "rc/legacy", "--replicas=3")
	waitRC(3)
	victim := activePods(t, ns, "legacy")[0]
	if err := client.CoreV1().Pods(ns).Delete(context.Background(), victim.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, func() error {
		for _, p := range activePods(t, ns, "legacy") {
			if p.UID == victim.UID {
				return fmt.Errorf("deleted pod still there")
			}
		}
		return nil
	})
	waitRC(3)
	mustKubectl(t, "", "-n", ns, "scale", "rc/legacy", "--replicas=1")
	waitRC(1)
}

func TestReplicaSetFailedCreateCondition(t *testing.T) {
	ns := newNamespace(t, client, "rs-quota")
	quota := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "pods"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("1")}}}
	if _, err := client.CoreV1().ResourceQuotas(ns).Create(context.Background(), quota, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, func() error {
		q, err := client.CoreV1().ResourceQuotas(ns).Get(context.Background(), "pods", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(q.Status.Hard) == 0 {
			return fmt.Errorf("quota not yet computed")
		}
		return nil
	})
	fakeKubelet(t, ns, nil)
	createRS(t, ns, "web", 3)
	eventually(t, 30*time.Second, func() error {
		rs, err := client.AppsV1().ReplicaSets(ns).Get(context.Background(), "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range rs.Status.Conditions {
			if c.Type == appsv1.ReplicaSetReplicaFailure && c.Status == corev1.ConditionTrue && c.Reason == "FailedCreate" && strings.Contains(c.Message, "exceeded quota") {
				if rs.Status.Replicas != 1 {
					return fmt.Errorf("replicas %d, want 1", rs.Status.Replicas)
				}
				return nil
			}
		}
		return fmt.Errorf("conditions %+v", rs.Status.Conditions)
	})
	eventually(t, 10*time.Second, func() error {
		return hasEvent(ns, "ReplicaSet", "web", "FailedCreate", "Error creating: ")
	})
	// Room again: the condition goes away once every pod is created.
	mustKubectl(t, "", "-n", ns, "scale", "rs/web", "--replicas=1")
	eventually(t, 30*time.Second, func() error {
		rs, err := client.AppsV1().ReplicaSets(ns).Get(context.Background(), "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(rs.Status.Conditions) != 0 {
			return fmt.Errorf("conditions %+v", rs.Status.Conditions)
		}
		return nil
	})
}

// TestReplicaSetNoDoubleCreation counts every pod ever created for a
// ReplicaSet of 50: the controller must not create more while its cache
// lags behind its own creations.
func TestReplicaSetNoDoubleCreation(t *testing.T) {
	ns := newNamespace(t, client, "rs-burst")
	fakeKubelet(t, ns, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := client.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{LabelSelector: labels.Set{"app": "burst"}.String()})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[string]bool{}
	go func() {
		for ev := range w.ResultChan() {
			if p, ok := ev.Object.(*corev1.Pod); ok && ev.Type == watch.Added {
				mu.Lock()
				seen[string(p.UID)] = true
				mu.Unlock()
			}
		}
	}()
	createRS(t, ns, "burst", 50)
	waitRSReady(t, ns, "burst", 50)
	// Leave time for any surplus creation to show up.
	time.Sleep(3 * time.Second)
	mu.Lock()
	n := len(seen)
	mu.Unlock()
	if n != 50 {
		t.Fatalf("%d pods created for 50 replicas", n)
	}
	if got := len(activePods(t, ns, "burst")); got != 50 {
		t.Fatalf("%d active pods", got)
	}
}
