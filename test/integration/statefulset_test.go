package integration

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
)

// stsOf is a StatefulSet whose pods are bound to a fake node (the fake
// kubelet runs them) and go at once when deleted.
func stsOf(name string, replicas int32, mutate ...func(*appsv1.StatefulSet)) *appsv1.StatefulSet {
	labels := map[string]string{"app": name}
	s := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.StatefulSetSpec{
			Replicas:    ptr.To(replicas),
			ServiceName: name,
			Selector:    &metav1.LabelSelector{MatchLabels: labels},
			Template: v1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: v1.PodSpec{
					NodeName:                      "fake-node",
					TerminationGracePeriodSeconds: ptr.To[int64](0),
					Containers:                    []v1.Container{{Name: "app", Image: "busybox:1"}},
				},
			},
		},
	}
	for _, m := range mutate {
		m(s)
	}
	return s
}

// podLog records, from a watch of the namespace's pods, the order in
// which pods were added, became ready and were deleted.
type podLog struct {
	mu     sync.Mutex
	events []string // "added web-0", "ready web-0", "deleted web-2"
	ready  map[string]bool
}

func watchPods(t *testing.T, ns string) *podLog {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w, err := client.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	l := &podLog{ready: map[string]bool{}}
	go func() {
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*v1.Pod)
			if !ok {
				continue
			}
			l.mu.Lock()
			switch ev.Type {
			case watch.Added:
				l.events = append(l.events, "added "+p.Name)
			case watch.Deleted:
				l.events = append(l.events, "deleted "+p.Name)
				delete(l.ready, string(p.UID))
			}
			if ev.Type != watch.Deleted && podReady(p) && !l.ready[string(p.UID)] {
				l.ready[string(p.UID)] = true
				l.events = append(l.events, "ready "+p.Name)
			}
			l.mu.Unlock()
		}
	}()
	t.Cleanup(func() { cancel(); w.Stop() })
	return l
}

func (l *podLog) index(event string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, e := range l.events {
		if e == event {
			return i
		}
	}
	return -1
}

func (l *podLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.events, ", ")
}

// before fails the test unless event a was seen, and before b.
func (l *podLog) before(t *testing.T, a, b string) {
	t.Helper()
	ia, ib := l.index(a), l.index(b)
	if ia < 0 || ib < 0 || ia > ib {
		t.Fatalf("want %q before %q; pods: %s", a, b, l)
	}
}

func podReady(p *v1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

// waitSet waits until the set's status satisfies ok.
func waitSet(t *testing.T, ns, name string, timeout time.Duration, ok func(*appsv1.StatefulSet) error) *appsv1.StatefulSet {
	t.Helper()
	var set *appsv1.StatefulSet
	eventually(t, timeout, func() error {
		var err error
		set, err = client.AppsV1().StatefulSets(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if set.Status.ObservedGeneration < set.Generation {
			return fmt.Errorf("observed generation %d < %d", set.Status.ObservedGeneration, set.Generation)
		}
		return ok(set)
	})
	return set
}

// settled is every replica created, ready and at the update revision, and
// that revision current.
func settled(set *appsv1.StatefulSet) error {
	st, want := set.Status, *set.Spec.Replicas
	if st.Replicas != want || st.ReadyReplicas != want || st.UpdatedReplicas != want || st.CurrentReplicas != want || st.CurrentRevision != st.UpdateRevision {
		return fmt.Errorf("status %+v, want %d replicas settled", st, want)
	}
	return nil
}

func getPod(t *testing.T, ns, name string) *v1.Pod {
	t.Helper()
	p, err := client.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func podNames(t *testing.T, ns string) string {
	t.Helper()
	pods, err := client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pods.Items {
		names = append(names, p.Name)
	}
	return strings.Join(names, ",")
}

func TestStatefulSetOrderedReadyScaleUpAndDown(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, client, "sts-ordered")
	// The fake kubelet takes its time, so that a controller that did
	// not wait would create the next pod before this one is ready.
	fakeKubelet(t, ns, func(*v1.Pod) v1.PodPhase { time.Sleep(300 * time.Millisecond); return v1.PodRunning })
	log := watchPods(t, ns)
	if _, err := client.AppsV1().StatefulSets(ns).Create(ctx, stsOf("web", 3), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	set := waitSet(t, ns, "web", 30*time.Second, settled)
	log.before(t, "ready web-0", "added web-1")
	log.before(t, "ready web-1", "added web-2")

	for i := 0; i < 3; i++ {
		p := getPod(t, ns, fmt.Sprintf("web-%d", i))
		if p.Spec.Hostname != p.Name || p.Spec.Subdomain != "web" {
			t.Errorf("%s: hostname %q subdomain %q", p.Name, p.Spec.Hostname, p.Spec.Subdomain)
		}
		if p.Labels["statefulset.kubernetes.io/pod-name"] != p.Name || p.Labels["apps.kubernetes.io/pod-index"] != fmt.Sprint(i) ||
			p.Labels["controller-revision-hash"] != set.Status.UpdateRevision {
			t.Errorf("%s: labels %v (update revision %s)", p.Name, p.Labels, set.Status.UpdateRevision)
		}
		if ref := metav1.GetControllerOf(p); ref == nil || ref.Kind != "StatefulSet" || ref.UID != set.UID {
			t.Errorf("%s: controller %v", p.Name, ref)
		}
	}
	rev, err := client.AppsV1().ControllerRevisions(ns).Get(ctx, set.Status.UpdateRevision, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("update revision: %v", err)
	}
	if rev.Revision != 1 || metav1.GetControllerOf(rev) == nil || metav1.GetControllerOf(rev).UID != set.UID {
		t.Fatalf("revision %s: number %d, owners %v", rev.Name, rev.Revision, rev.OwnerReferences)
	}
	eventually(t, 10*time.Second, func() error {
		evs, err := client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=web,reason=SuccessfulCreate"})
		if err != nil {
			return err
		}
		for _, e := range evs.Items {
			if e.Message == "create Pod web-2 in StatefulSet web successful" && e.Source.Component == "statefulset-controller" {
				return nil
			}
		}
		return fmt.Errorf("no SuccessfulCreate event for web-2 among %d", len(evs.Items))
	})

	mustKubectl(t, "", "-n", ns, "scale", "sts/web", "--replicas=1")
	waitSet(t, ns, "web", 30*time.Second, settled)
	log.before(t, "deleted web-2", "deleted web-1")
	if got := podNames(t, ns); got != "web-0" {
		t.Fatalf("after scaling to 1: pods %s", got)
	}
	eventually(t, 10*time.Second, func() error {
		evs, err := client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=web,reason=SuccessfulDelete"})
		if err != nil {
			return err
		}
		for _, e := range evs.Items {
			if e.Message == "delete Pod web-1 in StatefulSet web successful" {
				return nil
			}
		}
		return fmt.Errorf("no SuccessfulDelete event for web-1")
	})
}

func TestStatefulSetParallelDoesNotWait(t *testing.T) {
	ns := newNamespace(t, client, "sts-parallel")
	// No kubelet: the pods stay Pending, and Parallel creates them all anyway.
	set := stsOf("db", 3, func(s *appsv1.StatefulSet) { s.Spec.PodManagementPolicy = appsv1.ParallelPodManagement })
	if _, err := client.AppsV1().StatefulSets(ns).Create(context.Background(), set, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitSet(t, ns, "db", 20*time.Second, func(s *appsv1.StatefulSet) error {
		if s.Status.Replicas != 3 || s.Status.ReadyReplicas != 0 {
			return fmt.Errorf("status %+v", s.Status)
		}
		return nil
	})
	if got := podNames(t, ns); got != "db-0,db-1,db-2" {
		t.Fatalf("pods %s", got)
	}
}

func claimTemplate(name string) v1.PersistentVolumeClaim {
	return v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Resources:   v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
}

func TestStatefulSetClaimsSurviveScaleDown(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, client, "sts-claims")
	fakeKubelet(t, ns, nil)
	set := stsOf("web", 2, func(s *appsv1.StatefulSet) {
		s.Spec.VolumeClaimTemplates = []v1.PersistentVolumeClaim{claimTemplate("www")}
	})
	if _, err := client.AppsV1().StatefulSets(ns).Create(ctx, set, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitSet(t, ns, "web", 30*time.Second, settled)
	uids := map[string]string{}
	for i := 0; i < 2; i++ {
		name := fmt.Sprintf("www-web-%d", i)
		pvc, err := client.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("claim %s: %v", name, err)
		}
		if pvc.Labels["app"] != "web" || len(pvc.OwnerReferences) != 0 {
			t.Fatalf("claim %s: labels %v owners %v", name, pvc.Labels, pvc.OwnerReferences)
		}
		uids[name] = string(pvc.UID)
		p := getPod(t, ns, fmt.Sprintf("web-%d", i))
		if v := p.Spec.Volumes[0]; v.Name != "www" || v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != name {
			t.Fatalf("pod web-%d volume %+v", i, v)
		}
	}

	mustKubectl(t, "", "-n", ns, "scale", "sts/web", "--replicas=1")
	waitSet(t, ns, "web", 30*time.Second, settled)
	time.Sleep(time.Second) // give a wrong controller or GC time to delete the claim
	pvc, err := client.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "www-web-1", metav1.GetOptions{})
	if err != nil || string(pvc.UID) != uids["www-web-1"] {
		t.Fatalf("claim of the scaled-down ordinal: %v", err)
	}

	mustKubectl(t, "", "-n", ns, "scale", "sts/web", "--replicas=2")
	waitSet(t, ns, "web", 30*time.Second, settled)
	pvc, err = client.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "www-web-1", metav1.GetOptions{})
	if err != nil || string(pvc.UID) != uids["www-web-1"] {
		t.Fatalf("claim after scaling back up: %v (uid %v, was %s)", err, pvc.UID, uids["www-web-1"])
	}
	if v := getPod(t, ns, "web-1").Spec.Volumes[0]; v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != "www-web-1" {
		t.Fatalf("recreated web-1 volume %+v", v)
	}
}

func TestStatefulSetClaimRetentionDelete(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, client, "sts-retention")
	fakeKubelet(t, ns, nil)
	set := stsOf("web", 2, func(s *appsv1.StatefulSet) {
		s.Spec.VolumeClaimTemplates = []v1.PersistentVolumeClaim{claimTemplate("data")}
		s.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
			WhenDeleted: appsv1.DeletePersistentVolumeClaimRetentionPolicyType,
			WhenScaled:  appsv1.DeletePersistentVolumeClaimRetentionPolicyType,
		}
	})
	created, err := client.AppsV1().StatefulSets(ns).Create(ctx, set, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitSet(t, ns, "web", 30*time.Second, settled)
	eventually(t, 10*time.Second, func() error {
		pvc, err := client.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "data-web-1", metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, r := range pvc.OwnerReferences {
			if r.Kind == "StatefulSet" && r.UID == created.UID {
				return nil
			}
		}
		return fmt.Errorf("owners %v", pvc.OwnerReferences)
	})
	old, _ := client.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "data-web-1", metav1.GetOptions{})

	mustKubectl(t, "", "-n", ns, "scale", "sts/web", "--replicas=1")
	eventually(t, 30*time.Second, func() error {
		_, err := client.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "data-web-1", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("claim of the scaled-down ordinal still there (%v)", err)
	})
	mustKubectl(t, "", "-n", ns, "scale", "sts/web", "--replicas=2")
	waitSet(t, ns, "web", 30*time.Second, settled)
	pvc, err := client.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "data-web-1", metav1.GetOptions{})
	if err != nil || pvc.UID == old.UID {
		t.Fatalf("claim after scaling back up: %v (a new claim expected)", err)
	}
}

func setImage(t *testing.T, ns, name, image string, mutate ...func(*appsv1.StatefulSet)) {
	t.Helper()
	eventually(t, 10*time.Second, func() error {
		s, err := client.AppsV1().StatefulSets(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		s.Spec.Template.Spec.Containers[0].Image = image
		for _, m := range mutate {
			m(s)
		}
		_, err = client.AppsV1().StatefulSets(ns).Update(context.Background(), s, metav1.UpdateOptions{})
		return err
	})
}

func TestStatefulSetRollingUpdatePartitionAndUndo(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, client, "sts-rolling")
	fakeKubelet(t, ns, func(*v1.Pod) v1.PodPhase { time.Sleep(200 * time.Millisecond); return v1.PodRunning })
	if _, err := client.AppsV1().StatefulSets(ns).Create(ctx, stsOf("web", 3), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	first := waitSet(t, ns, "web", 30*time.Second, settled).Status.UpdateRevision
	log := watchPods(t, ns)

	setImage(t, ns, "web", "busybox:2", func(s *appsv1.StatefulSet) {
		s.Spec.UpdateStrategy.RollingUpdate.Partition = ptr.To[int32](1)
	})
	set := waitSet(t, ns, "web", 30*time.Second, func(s *appsv1.StatefulSet) error {
		if st := s.Status; st.UpdatedReplicas != 2 || st.ReadyReplicas != 3 || st.CurrentRevision != first || st.UpdateRevision == first {
			return fmt.Errorf("status %+v", st)
		}
		return nil
	})
	second := set.Status.UpdateRevision
	log.before(t, "deleted web-2", "deleted web-1")
	log.before(t, "ready web-2", "deleted web-1")
	if p := getPod(t, ns, "web-0"); p.Labels["controller-revision-hash"] != first || p.Spec.Containers[0].Image != "busybox:1" {
		t.Fatalf("web-0 below the partition was updated: %v %s", p.Labels, p.Spec.Containers[0].Image)
	}
	if p := getPod(t, ns, "web-1"); p.Labels["controller-revision-hash"] != second || p.Spec.Containers[0].Image != "busybox:2" {
		t.Fatalf("web-1 not updated: %v %s", p.Labels, p.Spec.Containers[0].Image)
	}
	if log.index("deleted web-0") >= 0 {
		t.Fatalf("web-0 deleted: %s", log)
	}

	mustKubectl(t, "", "-n", ns, "patch", "sts/web", "-p", `{"spec":{"updateStrategy":{"rollingUpdate":{"partition":0}}}}`)
	out := mustKubectl(t, "", "-n", ns, "rollout", "status", "sts/web", "--timeout=60s")
	// kubectl reports a set with a rollingUpdate struct as partitioned,
	// whatever the partition.
	if !strings.Contains(out, "partitioned roll out complete: 3 new pods have been updated") {
		t.Fatalf("rollout status: %s", out)
	}
	waitSet(t, ns, "web", 30*time.Second, settled)

	hist := mustKubectl(t, "", "-n", ns, "rollout", "history", "sts/web")
	if !strings.Contains(hist, "1 ") || !strings.Contains(hist, "2 ") {
		t.Fatalf("rollout history:\n%s", hist)
	}
	mustKubectl(t, "", "-n", ns, "rollout", "undo", "sts/web")
	set = waitSet(t, ns, "web", 30*time.Second, func(s *appsv1.StatefulSet) error {
		if err := settled(s); err != nil {
			return err
		}
		if s.Status.UpdateRevision != first {
			return fmt.Errorf("update revision %s, want the first one %s back", s.Status.UpdateRevision, first)
		}
		return nil
	})
	if img := getPod(t, ns, "web-0").Spec.Containers[0].Image; img != "busybox:1" {
		t.Fatalf("after undo web-0 runs %s", img)
	}
	rev, err := client.AppsV1().ControllerRevisions(ns).Get(ctx, first, metav1.GetOptions{})
	if err != nil || rev.Revision != 3 {
		t.Fatalf("rolled-back revision: %v, number %d (want 3)", err, rev.Revision)
	}
}

func TestStatefulSetOnDelete(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, client, "sts-ondelete")
	fakeKubelet(t, ns, nil)
	set := stsOf("web", 2, func(s *appsv1.StatefulSet) {
		s.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}
	})
	if _, err := client.AppsV1().StatefulSets(ns).Create(ctx, set, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	first := waitSet(t, ns, "web", 30*time.Second, settled).Status.UpdateRevision
	uid1 := getPod(t, ns, "web-1").UID

	setImage(t, ns, "web", "busybox:2")
	waitSet(t, ns, "web", 10*time.Second, func(s *appsv1.StatefulSet) error {
		if s.Status.UpdateRevision == first || s.Status.CurrentRevision != first || s.Status.UpdatedReplicas != 0 {
			return fmt.Errorf("status %+v", s.Status)
		}
		return nil
	})
	time.Sleep(time.Second)
	if p := getPod(t, ns, "web-1"); p.UID != uid1 || p.Spec.Containers[0].Image != "busybox:1" {
		t.Fatal("OnDelete replaced a pod nobody deleted")
	}

	if err := client.CoreV1().Pods(ns).Delete(ctx, "web-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitSet(t, ns, "web", 30*time.Second, func(s *appsv1.StatefulSet) error {
		if st := s.Status; st.UpdatedReplicas != 1 || st.CurrentReplicas != 1 || st.ReadyReplicas != 2 {
			return fmt.Errorf("status %+v", st)
		}
		return nil
	})
	if p := getPod(t, ns, "web-1"); p.UID == uid1 || p.Spec.Containers[0].Image != "busybox:2" {
		t.Fatalf("recreated web-1 runs %s", p.Spec.Containers[0].Image)
	}
	if img := getPod(t, ns, "web-0").Spec.Containers[0].Image; img != "busybox:1" {
		t.Fatalf("web-0 runs %s", img)
	}
}

func TestStatefulSetRecreatesFailedPod(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, client, "sts-failed")
	var mu sync.Mutex
	failed := false
	// The first web-0 fails; every later pod runs.
	fakeKubelet(t, ns, func(p *v1.Pod) v1.PodPhase {
		mu.Lock()
		defer mu.Unlock()
		if p.Name == "web-0" && !failed {
			failed = true
			return v1.PodFailed
		}
		return v1.PodRunning
	})
	log := watchPods(t, ns)
	if _, err := client.AppsV1().StatefulSets(ns).Create(ctx, stsOf("web", 2), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitSet(t, ns, "web", 30*time.Second, settled)
	log.before(t, "deleted web-0", "ready web-0")
	log.before(t, "ready web-0", "added web-1")
	eventually(t, 10*time.Second, func() error {
		evs, err := client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=web,reason=RecreatingFailedPod"})
		if err != nil {
			return err
		}
		if len(evs.Items) == 0 || evs.Items[0].Message != "StatefulSet "+ns+"/web is recreating failed Pod web-0" {
			return fmt.Errorf("no RecreatingFailedPod event: %v", evs.Items)
		}
		return nil
	})
}

// setPodReady flips a pod's Ready condition, as a failing or recovering
// readiness probe would. With mayBeGone a pod already deleted is no error.
func setPodReady(t *testing.T, ns, name string, ready, mayBeGone bool) {
	t.Helper()
	status := v1.ConditionFalse
	if ready {
		status = v1.ConditionTrue
	}
	eventually(t, 10*time.Second, func() error {
		p, err := client.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
		if mayBeGone && apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		for i := range p.Status.Conditions {
			if c := &p.Status.Conditions[i]; c.Type == v1.PodReady || c.Type == v1.ContainersReady {
				c.Status, c.LastTransitionTime = status, metav1.Now()
			}
		}
		for i := range p.Status.ContainerStatuses {
			p.Status.ContainerStatuses[i].Ready = ready
		}
		_, err = client.CoreV1().Pods(ns).UpdateStatus(context.Background(), p, metav1.UpdateOptions{})
		return err
	})
}

func scaleSet(t *testing.T, ns, name string, replicas int32) {
	t.Helper()
	patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas)
	if _, err := client.AppsV1().StatefulSets(ns).Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// holds fails the test if the namespace's pods are not exactly want at
// any moment during d.
func holds(t *testing.T, ns, want string, d time.Duration) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if got := podNames(t, ns); got != want {
			t.Fatalf("pods %s, want %s to stay", got, want)
		}
	}
}

// TestStatefulSetHaltsWhileUnhealthy is upstream's "Scaling should happen
// in predictable order and halt if any stateful pod is unhealthy": with
// OrderedReady no pod is created while one is unready, none is deleted
// while any is unready, and scale-down goes from the highest ordinal.
func TestStatefulSetHaltsWhileUnhealthy(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, client, "sts-halt")
	fakeKubelet(t, ns, nil)
	log := watchPods(t, ns)
	if _, err := client.AppsV1().StatefulSets(ns).Create(ctx, stsOf("ss", 1), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitSet(t, ns, "ss", 30*time.Second, settled)

	setPodReady(t, ns, "ss-0", false, false)
	waitSet(t, ns, "ss", 10*time.Second, func(s *appsv1.StatefulSet) error {
		if s.Status.ReadyReplicas != 0 {
			return fmt.Errorf("ready replicas %d", s.Status.ReadyReplicas)
		}
		return nil
	})
	scaleSet(t, ns, "ss", 3)
	holds(t, ns, "ss-0", 2*time.Second)
	setPodReady(t, ns, "ss-0", true, false)
	waitSet(t, ns, "ss", 30*time.Second, settled)
	log.before(t, "added ss-1", "added ss-2")

	for _, name := range []string{"ss-0", "ss-1", "ss-2"} {
		setPodReady(t, ns, name, false, false)
	}
	waitSet(t, ns, "ss", 10*time.Second, func(s *appsv1.StatefulSet) error {
		if s.Status.ReadyReplicas != 0 {
			return fmt.Errorf("ready replicas %d", s.Status.ReadyReplicas)
		}
		return nil
	})
	scaleSet(t, ns, "ss", 0)
	holds(t, ns, "ss-0,ss-1,ss-2", 2*time.Second)
	// Readiness comes back pod by pod, as when the probes pass again; the
	// highest pod may go as soon as it is the only unready one.
	for _, name := range []string{"ss-0", "ss-1", "ss-2"} {
		setPodReady(t, ns, name, true, true)
	}
	eventually(t, 30*time.Second, func() error {
		if got := podNames(t, ns); got != "" {
			return fmt.Errorf("pods left: %s", got)
		}
		return nil
	})
	log.before(t, "deleted ss-2", "deleted ss-1")
	log.before(t, "deleted ss-1", "deleted ss-0")
}

// TestStatefulSetRecreatesEvictedPod is upstream's "Should recreate
// evicted statefulset": while something on its node rejects it (there a
// conflicting host port), the pod fails again and again and is deleted
// and recreated under its name each time; once the conflict is gone the
// new pod runs.
func TestStatefulSetRecreatesEvictedPod(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, client, "sts-evicted")
	var mu sync.Mutex
	conflict, first := true, types.UID("")
	fakeKubelet(t, ns, func(p *v1.Pod) v1.PodPhase {
		mu.Lock()
		defer mu.Unlock()
		if first == "" {
			first = p.UID
		}
		if conflict {
			return v1.PodFailed
		}
		return v1.PodRunning
	})
	log := watchPods(t, ns)
	if _, err := client.AppsV1().StatefulSets(ns).Create(ctx, stsOf("ss", 1), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, func() error {
		if log.count("deleted ss-0") < 2 {
			return fmt.Errorf("pods: %s", log)
		}
		return nil
	})
	mu.Lock()
	conflict = false
	mu.Unlock()
	eventually(t, 30*time.Second, func() error {
		p, err := client.CoreV1().Pods(ns).Get(ctx, "ss-0", metav1.GetOptions{})
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		if p.Status.Phase != v1.PodRunning || p.UID == first {
			return fmt.Errorf("ss-0 %s in phase %s (first %s)", p.UID, p.Status.Phase, first)
		}
		return nil
	})
}

func (l *podLog) count(event string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, e := range l.events {
		if e == event {
			n++
		}
	}
	return n
}
