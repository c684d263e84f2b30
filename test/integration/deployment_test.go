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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"

	"github.com/orca-project/orca/internal/controller/deployment"
)

// deployYAML is a Deployment whose pods are bound to a fake node (the
// fake kubelet runs them) and go at once when deleted.
func deployYAML(name string, replicas int, image, strategy string, extra string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[1]s
spec:
  replicas: %[2]d
  selector:
    matchLabels: {app: %[1]s}
  strategy:
%[4]s
%[5]s
  template:
    metadata:
      labels: {app: %[1]s}
    spec:
      nodeName: fake-node
      terminationGracePeriodSeconds: 0
      containers:
      - name: main
        image: %[3]s
`, name, replicas, image, deployIndent(strategy, "    "), deployIndent(extra, "  "))
}

func deployIndent(s, prefix string) string {
	if s == "" {
		return ""
	}
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i := range lines {
		lines[i] = prefix + lines[i]
	}
	return strings.Join(lines, "\n")
}

const rollingSurge2Unavail1 = "type: RollingUpdate\nrollingUpdate: {maxSurge: 2, maxUnavailable: 1}"

// readyUnless plays the kubelet like fakeKubelet, but leaves the pods
// stuck(pod) says are stuck untouched in Pending (fakeKubelet always
// writes a status, which for a Pending pod would start again at once).
func deployReadyUnless(t *testing.T, namespace string, stuck func(*v1.Pod) bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(namespace))
	inf := factory.Core().V1().Pods().Informer()
	work := make(chan *v1.Pod, 1024)
	handle := func(obj any) {
		p, ok := obj.(*v1.Pod)
		if !ok || p.Spec.NodeName == "" || p.DeletionTimestamp != nil || p.Status.Phase != "" && p.Status.Phase != v1.PodPending || stuck(p) {
			return
		}
		select {
		case work <- p:
		default:
		}
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: handle, UpdateFunc: func(_, o any) { handle(o) }})
	factory.Start(ctx.Done())
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case p := <-work:
				_ = retry.RetryOnConflict(retry.DefaultRetry, func() error {
					cur, err := client.CoreV1().Pods(namespace).Get(ctx, p.Name, metav1.GetOptions{})
					if err != nil || cur.UID != p.UID || (cur.Status.Phase != "" && cur.Status.Phase != v1.PodPending) {
						return nil
					}
					cur.Status = fakeStatus(cur, v1.PodRunning)
					_, err = client.CoreV1().Pods(namespace).UpdateStatus(ctx, cur, metav1.UpdateOptions{})
					return err
				})
			}
		}
	}()
	t.Cleanup(func() { cancel(); factory.Shutdown() })
}

func deployImageIs(img string) func(*v1.Pod) bool {
	return func(p *v1.Pod) bool { return p.Spec.Containers[0].Image == img }
}

func getDeploy(t *testing.T, ns, name string) *appsv1.Deployment {
	t.Helper()
	d, err := client.AppsV1().Deployments(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func deployCondition(d *appsv1.Deployment, typ appsv1.DeploymentConditionType) *appsv1.DeploymentCondition {
	for i := range d.Status.Conditions {
		if d.Status.Conditions[i].Type == typ {
			return &d.Status.Conditions[i]
		}
	}
	return nil
}

// waitComplete waits until the Deployment's status shows a finished
// rollout of its current generation.
func deployWaitComplete(t *testing.T, ns, name string) *appsv1.Deployment {
	t.Helper()
	var d *appsv1.Deployment
	eventually(t, 60*time.Second, func() error {
		d = getDeploy(t, ns, name)
		st, want := d.Status, *d.Spec.Replicas
		if st.ObservedGeneration < d.Generation || st.Replicas != want || st.UpdatedReplicas != want || st.AvailableReplicas != want || st.ReadyReplicas != want {
			return fmt.Errorf("status %+v, want %d replicas", st, want)
		}
		return nil
	})
	return d
}

// replicaSetsOf lists the Deployment's ReplicaSets by pod-template-hash.
func deployReplicaSets(t *testing.T, ns string) map[string]appsv1.ReplicaSet {
	t.Helper()
	list, err := client.AppsV1().ReplicaSets(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]appsv1.ReplicaSet{}
	for _, rs := range list.Items {
		out[rs.Labels[appsv1.DefaultDeploymentUniqueLabelKey]] = rs
	}
	return out
}

func TestDeploymentCreateStatusAndRestart(t *testing.T) {
	ns := newNamespace(t, client, "deploy")
	fakeKubelet(t, ns, nil)
	mustKubectl(t, deployYAML("web", 3, "img:1", rollingSurge2Unavail1, "minReadySeconds: 1"), "-n", ns, "apply", "-f", "-")
	out := mustKubectl(t, "", "-n", ns, "rollout", "status", "deployment/web", "--timeout=60s")
	if !strings.Contains(out, `deployment "web" successfully rolled out`) {
		t.Errorf("rollout status printed %q", out)
	}
	mustKubectl(t, "", "-n", ns, "wait", "--for=condition=Available", "deployment/web", "--timeout=30s")
	d := deployWaitComplete(t, ns, "web")

	hash := deployment.ComputeHash(&d.Spec.Template, nil)
	rs, err := client.AppsV1().ReplicaSets(ns).Get(context.Background(), "web-"+hash, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("ReplicaSet web-%s (upstream's name for this template): %v", hash, err)
	}
	if rs.Labels["pod-template-hash"] != hash || rs.Spec.Selector.MatchLabels["pod-template-hash"] != hash || rs.Spec.Template.Labels["pod-template-hash"] != hash {
		t.Errorf("pod-template-hash missing from the ReplicaSet's labels, selector or template: %+v", rs.ObjectMeta.Labels)
	}
	if ref := metav1.GetControllerOf(rs); ref == nil || ref.UID != d.UID || ref.Kind != "Deployment" {
		t.Errorf("ReplicaSet owner %+v", ref)
	}
	if rs.Spec.MinReadySeconds != 1 {
		t.Errorf("ReplicaSet minReadySeconds %d, want 1", rs.Spec.MinReadySeconds)
	}
	for k, v := range map[string]string{"deployment.kubernetes.io/revision": "1", "deployment.kubernetes.io/desired-replicas": "3", "deployment.kubernetes.io/max-replicas": "5"} {
		if rs.Annotations[k] != v {
			t.Errorf("ReplicaSet annotation %s = %q, want %q", k, rs.Annotations[k], v)
		}
	}
	if d.Annotations["deployment.kubernetes.io/revision"] != "1" {
		t.Errorf("Deployment revision %q, want 1", d.Annotations["deployment.kubernetes.io/revision"])
	}
	if d.Status.UnavailableReplicas != 0 {
		t.Errorf("unavailableReplicas %d", d.Status.UnavailableReplicas)
	}
	if c := deployCondition(d, appsv1.DeploymentAvailable); c == nil || c.Status != v1.ConditionTrue || c.Reason != "MinimumReplicasAvailable" || c.Message != "Deployment has minimum availability." {
		t.Errorf("Available condition %+v", c)
	}
	eventually(t, 10*time.Second, func() error {
		c := deployCondition(getDeploy(t, ns, "web"), appsv1.DeploymentProgressing)
		want := fmt.Sprintf("ReplicaSet %q has successfully progressed.", "web-"+hash)
		if c == nil || c.Status != v1.ConditionTrue || c.Reason != "NewReplicaSetAvailable" || c.Message != want {
			return fmt.Errorf("Progressing condition %+v", c)
		}
		return nil
	})
	eventually(t, 10*time.Second, func() error {
		evs, err := client.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.kind=Deployment,involvedObject.name=web"})
		if err != nil {
			return err
		}
		for _, e := range evs.Items {
			if e.Reason == "ScalingReplicaSet" && e.Message == fmt.Sprintf("Scaled up replica set web-%s from 0 to 3", hash) && e.Source.Component == "deployment-controller" {
				return nil
			}
		}
		return fmt.Errorf("no ScalingReplicaSet event among %d", len(evs.Items))
	})

	// rollout restart changes the template: a second revision.
	mustKubectl(t, "", "-n", ns, "rollout", "restart", "deployment/web")
	mustKubectl(t, "", "-n", ns, "rollout", "status", "deployment/web", "--timeout=60s")
	d = deployWaitComplete(t, ns, "web")
	if d.Annotations["deployment.kubernetes.io/revision"] != "2" || d.Spec.Template.Annotations["kubectl.kubernetes.io/restartedAt"] == "" {
		t.Errorf("after restart: revision %q, template annotations %v", d.Annotations["deployment.kubernetes.io/revision"], d.Spec.Template.Annotations)
	}
	eventually(t, 20*time.Second, func() error {
		rss := deployReplicaSets(t, ns)
		old := rss[hash]
		if len(rss) != 2 || *old.Spec.Replicas != 0 {
			return fmt.Errorf("%d ReplicaSets; the first has %d replicas", len(rss), *old.Spec.Replicas)
		}
		return nil
	})
}

// deployCensus follows a namespace's pods from a watch and checks every
// state it sees, so that a transient violation cannot slip between polls.
type deployCensus struct {
	mu         sync.Mutex
	pods       map[string]*v1.Pod
	violations []string
}

func deployWatchPods(t *testing.T, ns string, check func(pods map[string]*v1.Pod) string) *deployCensus {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	list, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := &deployCensus{pods: map[string]*v1.Pod{}}
	for i := range list.Items {
		c.pods[list.Items[i].Name] = &list.Items[i]
	}
	w, err := client.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer w.Stop()
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*v1.Pod)
			if !ok {
				continue
			}
			c.mu.Lock()
			if ev.Type == watch.Deleted {
				delete(c.pods, p.Name)
			} else {
				c.pods[p.Name] = p
			}
			if v := check(c.pods); v != "" {
				c.violations = append(c.violations, v)
			}
			c.mu.Unlock()
		}
	}()
	return c
}

func (c *deployCensus) failures() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.violations...)
}

func deployPodReady(p *v1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

func TestDeploymentRollingUpdateBounds(t *testing.T) {
	ns := newNamespace(t, client, "deploy")
	fakeKubelet(t, ns, nil)
	mustKubectl(t, deployYAML("web", 10, "img:1", rollingSurge2Unavail1, ""), "-n", ns, "apply", "-f", "-")
	deployWaitComplete(t, ns, "web")

	// Pods being deleted are not counted: they no longer serve, and
	// upstream's surge does not count them either.
	census := deployWatchPods(t, ns, func(pods map[string]*v1.Pod) string {
		live, ready := 0, 0
		for _, p := range pods {
			if p.DeletionTimestamp != nil {
				continue
			}
			live++
			if deployPodReady(p) {
				ready++
			}
		}
		if live > 12 || ready < 9 {
			return fmt.Sprintf("%d pods, %d ready", live, ready)
		}
		return ""
	})
	mustKubectl(t, "", "-n", ns, "set", "image", "deployment/web", "main=img:2")
	mustKubectl(t, "", "-n", ns, "rollout", "status", "deployment/web", "--timeout=90s")
	d := deployWaitComplete(t, ns, "web")
	time.Sleep(500 * time.Millisecond)
	if v := census.failures(); len(v) > 0 {
		t.Errorf("rolling update with maxSurge 2, maxUnavailable 1 of 10 went out of bounds %d times, first: %s", len(v), v[0])
	}
	rss := deployReplicaSets(t, ns)
	newHash := deployment.ComputeHash(&d.Spec.Template, nil)
	if len(rss) != 2 || *rss[newHash].Spec.Replicas != 10 || rss[newHash].Annotations["deployment.kubernetes.io/revision"] != "2" {
		t.Errorf("ReplicaSets after the update: %d, new one %+v", len(rss), rss[newHash].ObjectMeta)
	}
	pods, _ := client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && p.Spec.Containers[0].Image != "img:2" {
			t.Errorf("pod %s still runs %s", p.Name, p.Spec.Containers[0].Image)
		}
	}
}

func TestDeploymentRollbackWithUndo(t *testing.T) {
	ns := newNamespace(t, client, "deploy")
	fakeKubelet(t, ns, nil)
	mustKubectl(t, deployYAML("web", 2, "img:1", rollingSurge2Unavail1, "revisionHistoryLimit: 5"), "-n", ns, "apply", "-f", "-")
	d1 := deployWaitComplete(t, ns, "web")
	hash1 := deployment.ComputeHash(&d1.Spec.Template, nil)
	mustKubectl(t, "", "-n", ns, "set", "image", "deployment/web", "main=img:2")
	mustKubectl(t, "", "-n", ns, "rollout", "status", "deployment/web", "--timeout=60s")

	hist := mustKubectl(t, "", "-n", ns, "rollout", "history", "deployment/web")
	if !strings.Contains(hist, "1 ") || !strings.Contains(hist, "2 ") {
		t.Errorf("rollout history:\n%s", hist)
	}
	rev1 := mustKubectl(t, "", "-n", ns, "rollout", "history", "deployment/web", "--revision=1")
	if !strings.Contains(rev1, "img:1") || !strings.Contains(rev1, "pod-template-hash="+hash1) {
		t.Errorf("rollout history --revision=1:\n%s", rev1)
	}

	mustKubectl(t, "", "-n", ns, "rollout", "undo", "deployment/web")
	mustKubectl(t, "", "-n", ns, "rollout", "status", "deployment/web", "--timeout=60s")
	d := deployWaitComplete(t, ns, "web")
	if img := d.Spec.Template.Spec.Containers[0].Image; img != "img:1" {
		t.Fatalf("after undo the template runs %s", img)
	}
	if h := deployment.ComputeHash(&d.Spec.Template, nil); h != hash1 {
		t.Errorf("after undo the template hashes to %s, want revision 1's %s", h, hash1)
	}
	eventually(t, 20*time.Second, func() error {
		rss := deployReplicaSets(t, ns)
		rs := rss[hash1]
		if len(rss) != 2 {
			return fmt.Errorf("%d ReplicaSets, want 2 (the first one reused)", len(rss))
		}
		if *rs.Spec.Replicas != 2 || rs.Annotations["deployment.kubernetes.io/revision"] != "3" || rs.Annotations["deployment.kubernetes.io/revision-history"] != "1" {
			return fmt.Errorf("revision 1's ReplicaSet: replicas %d, annotations %v", *rs.Spec.Replicas, rs.Annotations)
		}
		return nil
	})
	if rev := getDeploy(t, ns, "web").Annotations["deployment.kubernetes.io/revision"]; rev != "3" {
		t.Errorf("Deployment revision %q, want 3", rev)
	}
	pods, _ := client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && p.Labels["pod-template-hash"] != hash1 {
			t.Errorf("pod %s has pod-template-hash %s, want %s", p.Name, p.Labels["pod-template-hash"], hash1)
		}
	}

	// --to-revision picks a named revision.
	mustKubectl(t, "", "-n", ns, "rollout", "undo", "deployment/web", "--to-revision=2")
	mustKubectl(t, "", "-n", ns, "rollout", "status", "deployment/web", "--timeout=60s")
	if img := deployWaitComplete(t, ns, "web").Spec.Template.Spec.Containers[0].Image; img != "img:2" {
		t.Errorf("after undo --to-revision=2 the template runs %s", img)
	}
}

func TestDeploymentRecreateNeverOverlaps(t *testing.T) {
	ns := newNamespace(t, client, "deploy")
	fakeKubelet(t, ns, nil)
	mustKubectl(t, deployYAML("web", 3, "img:1", "type: Recreate", ""), "-n", ns, "apply", "-f", "-")
	deployWaitComplete(t, ns, "web")
	census := deployWatchPods(t, ns, func(pods map[string]*v1.Pod) string {
		images := map[string]int{}
		for _, p := range pods {
			images[p.Spec.Containers[0].Image]++
		}
		if len(images) > 1 {
			return fmt.Sprintf("old and new pods together: %v", images)
		}
		return ""
	})
	mustKubectl(t, "", "-n", ns, "set", "image", "deployment/web", "main=img:2")
	mustKubectl(t, "", "-n", ns, "rollout", "status", "deployment/web", "--timeout=60s")
	deployWaitComplete(t, ns, "web")
	time.Sleep(300 * time.Millisecond)
	if v := census.failures(); len(v) > 0 {
		t.Errorf("Recreate overlapped %d times, first: %s", len(v), v[0])
	}
	census.mu.Lock()
	n := len(census.pods)
	census.mu.Unlock()
	if n != 3 {
		t.Errorf("%d pods after the recreate, want 3", n)
	}
}

func TestDeploymentPauseResume(t *testing.T) {
	ns := newNamespace(t, client, "deploy")
	fakeKubelet(t, ns, nil)
	mustKubectl(t, deployYAML("web", 2, "img:1", rollingSurge2Unavail1, ""), "-n", ns, "apply", "-f", "-")
	deployWaitComplete(t, ns, "web")

	mustKubectl(t, "", "-n", ns, "rollout", "pause", "deployment/web")
	mustKubectl(t, "", "-n", ns, "set", "image", "deployment/web", "main=img:2")
	eventually(t, 10*time.Second, func() error {
		c := deployCondition(getDeploy(t, ns, "web"), appsv1.DeploymentProgressing)
		if c == nil || c.Status != v1.ConditionUnknown || c.Reason != "DeploymentPaused" || c.Message != "Deployment is paused" {
			return fmt.Errorf("Progressing %+v", c)
		}
		return nil
	})
	// Scaling still happens while paused; the rollout does not.
	mustKubectl(t, "", "-n", ns, "scale", "deployment/web", "--replicas=4")
	eventually(t, 20*time.Second, func() error {
		d := getDeploy(t, ns, "web")
		if d.Status.ObservedGeneration < d.Generation || d.Status.AvailableReplicas != 4 {
			return fmt.Errorf("status %+v", d.Status)
		}
		return nil
	})
	if rss := deployReplicaSets(t, ns); len(rss) != 1 {
		t.Fatalf("a paused Deployment rolled out: %d ReplicaSets", len(rss))
	}
	if d := getDeploy(t, ns, "web"); d.Status.UpdatedReplicas != 0 {
		t.Errorf("paused with a new template: updatedReplicas %d, want 0", d.Status.UpdatedReplicas)
	}

	mustKubectl(t, "", "-n", ns, "rollout", "resume", "deployment/web")
	mustKubectl(t, "", "-n", ns, "rollout", "status", "deployment/web", "--timeout=60s")
	d := deployWaitComplete(t, ns, "web")
	if *d.Spec.Replicas != 4 || d.Spec.Template.Spec.Containers[0].Image != "img:2" {
		t.Errorf("after resume: %d replicas of %s", *d.Spec.Replicas, d.Spec.Template.Spec.Containers[0].Image)
	}
}

func TestDeploymentProportionalScaling(t *testing.T) {
	ns := newNamespace(t, client, "deploy")
	deployReadyUnless(t, ns, deployImageIs("img:stuck"))
	mustKubectl(t, deployYAML("web", 10, "img:1", "type: RollingUpdate\nrollingUpdate: {maxSurge: 3, maxUnavailable: 2}", ""), "-n", ns, "apply", "-f", "-")
	d := deployWaitComplete(t, ns, "web")
	oldHash := deployment.ComputeHash(&d.Spec.Template, nil)

	// The new pods never become ready: the rollout stops at 8 old and 5
	// new (13 = 10 + surge 3; 8 available = 10 - 2).
	mustKubectl(t, "", "-n", ns, "set", "image", "deployment/web", "main=img:stuck")
	var newHash string
	eventually(t, 30*time.Second, func() error {
		rss := deployReplicaSets(t, ns)
		for h := range rss {
			if h != oldHash {
				newHash = h
			}
		}
		if len(rss) != 2 || *rss[oldHash].Spec.Replicas != 8 || *rss[newHash].Spec.Replicas != 5 {
			return fmt.Errorf("%d ReplicaSets: old %d, new %v", len(rss), *rss[oldHash].Spec.Replicas, rss[newHash].Spec.Replicas)
		}
		return nil
	})
	time.Sleep(time.Second)

	// 15 replicas allow 18 pods: 5 more, shared in proportion, 3 and 2.
	mustKubectl(t, "", "-n", ns, "scale", "deployment/web", "--replicas=15")
	eventually(t, 30*time.Second, func() error {
		rss := deployReplicaSets(t, ns)
		if *rss[oldHash].Spec.Replicas != 11 || *rss[newHash].Spec.Replicas != 7 {
			return fmt.Errorf("old %d, new %d; want 11 and 7", *rss[oldHash].Spec.Replicas, *rss[newHash].Spec.Replicas)
		}
		for _, rs := range rss {
			if rs.Annotations["deployment.kubernetes.io/desired-replicas"] != "15" || rs.Annotations["deployment.kubernetes.io/max-replicas"] != "18" {
				return fmt.Errorf("%s annotations %v", rs.Name, rs.Annotations)
			}
		}
		return nil
	})
	// And it stays so: the new pods are still not ready.
	time.Sleep(time.Second)
	rss := deployReplicaSets(t, ns)
	if *rss[oldHash].Spec.Replicas != 11 || *rss[newHash].Spec.Replicas != 7 {
		t.Errorf("after settling: old %d, new %d; want 11 and 7", *rss[oldHash].Spec.Replicas, *rss[newHash].Spec.Replicas)
	}
}

func TestDeploymentProgressDeadlineExceeded(t *testing.T) {
	ns := newNamespace(t, client, "deploy")
	deployReadyUnless(t, ns, deployImageIs("img:stuck"))
	mustKubectl(t, deployYAML("web", 2, "img:stuck", rollingSurge2Unavail1, "progressDeadlineSeconds: 2"), "-n", ns, "apply", "-f", "-")
	eventually(t, 30*time.Second, func() error {
		d := getDeploy(t, ns, "web")
		c := deployCondition(d, appsv1.DeploymentProgressing)
		if c == nil || c.Status != v1.ConditionFalse || c.Reason != "ProgressDeadlineExceeded" {
			return fmt.Errorf("Progressing %+v", c)
		}
		if !strings.HasSuffix(c.Message, "has timed out progressing.") {
			return fmt.Errorf("message %q", c.Message)
		}
		if a := deployCondition(d, appsv1.DeploymentAvailable); a == nil || a.Status != v1.ConditionFalse || a.Reason != "MinimumReplicasUnavailable" {
			return fmt.Errorf("Available %+v", a)
		}
		return nil
	})
	res := runKubectl(t, "", "-n", ns, "rollout", "status", "deployment/web", "--timeout=20s")
	if res.Code == 0 || !strings.Contains(res.Stderr, "exceeded its progress deadline") {
		t.Errorf("rollout status of a stuck deployment: exit %d\nstdout: %s\nstderr: %s", res.Code, res.Stdout, res.Stderr)
	}
}

// A ReplicaSet of another template already holding the name NAME-HASH is a
// hash collision: collisionCount goes up and the new ReplicaSet takes the
// name of the hash with the count, as upstream.
func TestDeploymentHashCollision(t *testing.T) {
	ns := newNamespace(t, client, "deploy")
	fakeKubelet(t, ns, nil)
	// Paused, the Deployment creates no ReplicaSet yet, and its defaulted
	// template can be hashed first.
	mustKubectl(t, deployYAML("web", 1, "img:1", rollingSurge2Unavail1, "paused: true"), "-n", ns, "apply", "-f", "-")
	d := getDeploy(t, ns, "web")
	hash := deployment.ComputeHash(&d.Spec.Template, nil)
	squatter := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web-" + hash, Labels: map[string]string{"app": "other"}},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: new(int32),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "other"}},
			Template: v1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "other"}},
				Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "main", Image: "img:other"}}},
			},
		},
	}
	if _, err := client.AppsV1().ReplicaSets(ns).Create(context.Background(), squatter, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	mustKubectl(t, "", "-n", ns, "rollout", "resume", "deployment/web")
	d = deployWaitComplete(t, ns, "web")
	if d.Status.CollisionCount == nil || *d.Status.CollisionCount != 1 {
		t.Fatalf("collisionCount %v, want 1", d.Status.CollisionCount)
	}
	want := "web-" + deployment.ComputeHash(&d.Spec.Template, d.Status.CollisionCount)
	if _, err := client.AppsV1().ReplicaSets(ns).Get(context.Background(), want, metav1.GetOptions{}); err != nil {
		t.Errorf("ReplicaSet %s: %v", want, err)
	}
}
