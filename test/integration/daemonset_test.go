package integration

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
)

// dsIsolation marks the nodes of one DaemonSet test (label and NoSchedule
// taint, value the namespace): the test's DaemonSets select and tolerate
// it, and nothing else lands there.
const dsIsolation = "test.orca.dev/daemonset"

type dsEnv struct {
	t  *testing.T
	ns string
}

func newDSEnv(t *testing.T) *dsEnv {
	t.Helper()
	e := &dsEnv{t: t, ns: newNamespace(t, client, "ds")}
	ctx := context.Background()
	t.Cleanup(func() {
		_ = client.AppsV1().DaemonSets(e.ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
		pods, _ := client.CoreV1().Pods(e.ns).List(ctx, metav1.ListOptions{})
		for _, p := range pods.Items {
			_ = client.CoreV1().Pods(e.ns).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
		}
		nodes, _ := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: dsIsolation + "=" + e.ns})
		for _, n := range nodes.Items {
			_ = client.CoreV1().Nodes().Delete(ctx, n.Name, metav1.DeleteOptions{})
		}
		_ = client.CoreV1().Namespaces().Delete(ctx, e.ns, metav1.DeleteOptions{})
	})
	return e
}

// node creates a ready node with room for pods; mutate adjusts it first.
func (e *dsEnv) node(suffix string, mutate func(*v1.Node)) string {
	e.t.Helper()
	name := e.ns + "-" + suffix
	n := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.LabelHostname: name, dsIsolation: e.ns}},
		Spec:       v1.NodeSpec{Taints: []v1.Taint{{Key: dsIsolation, Value: e.ns, Effect: v1.TaintEffectNoSchedule}}},
	}
	if mutate != nil {
		mutate(n)
	}
	if _, err := client.CoreV1().Nodes().Create(context.Background(), n, metav1.CreateOptions{}); err != nil {
		e.t.Fatalf("create node %s: %v", name, err)
	}
	alloc := v1.ResourceList{v1.ResourceCPU: resource.MustParse("4"), v1.ResourceMemory: resource.MustParse("8Gi"), v1.ResourcePods: resource.MustParse("110")}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := client.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Status = v1.NodeStatus{Capacity: alloc, Allocatable: alloc, Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}}
		_, err = client.CoreV1().Nodes().UpdateStatus(context.Background(), cur, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		e.t.Fatalf("node %s status: %v", name, err)
	}
	return name
}

func (e *dsEnv) updateNode(name string, mutate func(*v1.Node)) {
	e.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := client.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		mutate(n)
		_, err = client.CoreV1().Nodes().Update(context.Background(), n, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		e.t.Fatalf("update node %s: %v", name, err)
	}
}

// daemonSet creates a DaemonSet of the test's nodes that carry role=edge.
func (e *dsEnv) daemonSet(name string, mutate func(*appsv1.DaemonSet)) *appsv1.DaemonSet {
	e.t.Helper()
	labels := map[string]string{"app": name}
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: v1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: v1.PodSpec{
					NodeSelector: map[string]string{dsIsolation: e.ns, "role": "edge"},
					Tolerations:  []v1.Toleration{{Key: dsIsolation, Operator: v1.TolerationOpExists}},
					// No kubelet finishes graceful deletion here.
					TerminationGracePeriodSeconds: ptr.To[int64](0),
					Containers:                    []v1.Container{{Name: "agent", Image: "agent:v1"}},
				},
			},
		},
	}
	if mutate != nil {
		mutate(ds)
	}
	out, err := client.AppsV1().DaemonSets(e.ns).Create(context.Background(), ds, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatalf("create daemonset: %v", err)
	}
	return out
}

// placement maps node name to the images of the live pods bound there.
func (e *dsEnv) placement() (map[string][]string, error) {
	pods, err := client.CoreV1().Pods(e.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		if p.Spec.NodeName == "" {
			return nil, fmt.Errorf("pod %s not scheduled yet", p.Name)
		}
		out[p.Spec.NodeName] = append(out[p.Spec.NodeName], p.Spec.Containers[0].Image)
	}
	return out, nil
}

// waitPlacement waits until exactly the given nodes run one pod each of
// image.
func (e *dsEnv) waitPlacement(image string, nodes ...string) {
	e.t.Helper()
	want := map[string]bool{}
	for _, n := range nodes {
		want[n] = true
	}
	eventually(e.t, 30*time.Second, func() error {
		got, err := e.placement()
		if err != nil {
			return err
		}
		for n, images := range got {
			if !want[n] {
				return fmt.Errorf("pod on %s, which should have none (%v)", n, got)
			}
			if len(images) != 1 || images[0] != image {
				return fmt.Errorf("node %s runs %v", n, images)
			}
		}
		for n := range want {
			if _, ok := got[n]; !ok {
				return fmt.Errorf("no pod on %s yet (%v)", n, got)
			}
		}
		return nil
	})
}

func (e *dsEnv) waitStatus(name string, want appsv1.DaemonSetStatus) *appsv1.DaemonSet {
	e.t.Helper()
	var ds *appsv1.DaemonSet
	eventually(e.t, 30*time.Second, func() error {
		var err error
		ds, err = client.AppsV1().DaemonSets(e.ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		got := ds.Status
		got.CollisionCount, got.Conditions = nil, nil
		want.ObservedGeneration = ds.Generation
		if !equality.Semantic.DeepEqual(got, want) {
			return fmt.Errorf("status %+v, want %+v", got, want)
		}
		return nil
	})
	return ds
}

func dsEdge(n *v1.Node) { n.Labels["role"] = "edge" }

func TestDaemonSetFollowsNodes(t *testing.T) {
	e := newDSEnv(t)
	fakeKubelet(t, e.ns, nil)
	a := e.node("a", dsEdge)
	cordoned := e.node("cordoned", func(n *v1.Node) {
		dsEdge(n)
		n.Spec.Unschedulable = true
		n.Spec.Taints = append(n.Spec.Taints, v1.Taint{Key: v1.TaintNodeUnschedulable, Effect: v1.TaintEffectNoSchedule})
	})
	gpu := e.node("gpu", func(n *v1.Node) {
		dsEdge(n)
		n.Spec.Taints = append(n.Spec.Taints, v1.Taint{Key: "gpu", Value: "true", Effect: v1.TaintEffectNoSchedule})
	})
	plain := e.node("plain", nil)

	e.daemonSet("agent", nil)
	e.waitPlacement("agent:v1", a, cordoned)
	e.waitStatus("agent", appsv1.DaemonSetStatus{DesiredNumberScheduled: 2, CurrentNumberScheduled: 2, NumberReady: 2,
		NumberAvailable: 2, UpdatedNumberScheduled: 2})

	pods, err := client.CoreV1().Pods(e.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p := pods.Items[0]
	if !strings.HasPrefix(p.Name, "agent-") || p.Labels[appsv1.DefaultDaemonSetUniqueLabelKey] == "" || p.Labels["pod-template-generation"] != "1" {
		t.Errorf("pod %s labels %v", p.Name, p.Labels)
	}
	terms := p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) != 1 || terms[0].MatchFields[0].Key != "metadata.name" || terms[0].MatchFields[0].Values[0] != p.Spec.NodeName {
		t.Errorf("pod %s on %s pinned by %+v", p.Name, p.Spec.NodeName, terms)
	}
	tolerated := map[string]bool{}
	for _, tol := range p.Spec.Tolerations {
		tolerated[tol.Key+":"+string(tol.Effect)] = true
	}
	for _, k := range []string{"node.kubernetes.io/not-ready:NoExecute", "node.kubernetes.io/unreachable:NoExecute",
		"node.kubernetes.io/disk-pressure:NoSchedule", "node.kubernetes.io/memory-pressure:NoSchedule",
		"node.kubernetes.io/pid-pressure:NoSchedule", "node.kubernetes.io/unschedulable:NoSchedule"} {
		if !tolerated[k] {
			t.Errorf("pod lacks the default toleration %s: %+v", k, p.Spec.Tolerations)
		}
	}
	revs, err := client.AppsV1().ControllerRevisions(e.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil || len(revs.Items) != 1 || revs.Items[0].Revision != 1 ||
		revs.Items[0].Labels[appsv1.DefaultDaemonSetUniqueLabelKey] != p.Labels[appsv1.DefaultDaemonSetUniqueLabelKey] {
		t.Errorf("controller revisions %+v, %v", revs, err)
	}

	// Nodes joining, being relabelled in and out, and leaving.
	joined := e.node("joined", dsEdge)
	e.updateNode(plain, dsEdge)
	e.updateNode(a, func(n *v1.Node) { delete(n.Labels, "role") })
	e.waitPlacement("agent:v1", cordoned, joined, plain)
	e.waitStatus("agent", appsv1.DaemonSetStatus{DesiredNumberScheduled: 3, CurrentNumberScheduled: 3, NumberReady: 3,
		NumberAvailable: 3, UpdatedNumberScheduled: 3})
	if err := client.CoreV1().Nodes().Delete(context.Background(), joined, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitPlacement("agent:v1", cordoned, plain)

	// A NoSchedule taint keeps the running pod (counted misscheduled);
	// tolerating it in the template brings a pod to the gpu node too.
	e.updateNode(plain, func(n *v1.Node) {
		n.Spec.Taints = append(n.Spec.Taints, v1.Taint{Key: "gpu", Value: "true", Effect: v1.TaintEffectNoSchedule})
	})
	e.waitStatus("agent", appsv1.DaemonSetStatus{DesiredNumberScheduled: 1, CurrentNumberScheduled: 1, NumberMisscheduled: 1,
		NumberReady: 1, NumberAvailable: 1, UpdatedNumberScheduled: 1})
	mustKubectl(t, "", "-n", e.ns, "patch", "ds", "agent", "--type=json",
		`-p=[{"op":"add","path":"/spec/template/spec/tolerations/-","value":{"key":"gpu","operator":"Exists","effect":"NoSchedule"}}]`)
	e.waitPlacement("agent:v1", cordoned, plain, gpu)
	e.waitStatus("agent", appsv1.DaemonSetStatus{DesiredNumberScheduled: 3, CurrentNumberScheduled: 3, NumberReady: 3,
		NumberAvailable: 3, UpdatedNumberScheduled: 3})

	events, err := client.CoreV1().Events(e.ns).List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.kind=DaemonSet"})
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]int{}
	for _, ev := range events.Items {
		if ev.Source.Component == "daemonset-controller" {
			reasons[ev.Reason]++
		}
	}
	if reasons["SuccessfulCreate"] < 4 || reasons["SuccessfulDelete"] < 2 {
		t.Errorf("events by reason %v", reasons)
	}
}

func TestDaemonSetRollingUpdate(t *testing.T) {
	e := newDSEnv(t)
	fakeKubelet(t, e.ns, nil)
	var nodes []string
	for _, s := range []string{"a", "b", "c"} {
		nodes = append(nodes, e.node(s, dsEdge))
	}
	e.daemonSet("agent", nil)
	e.waitPlacement("agent:v1", nodes...)
	e.waitStatus("agent", appsv1.DaemonSetStatus{DesiredNumberScheduled: 3, CurrentNumberScheduled: 3, NumberReady: 3,
		NumberAvailable: 3, UpdatedNumberScheduled: 3})

	// With maxUnavailable 1 at most one node at a time lacks a ready pod.
	var out string
	worst := e.sampleRollout(len(nodes), func() {
		mustKubectl(t, "", "-n", e.ns, "set", "image", "ds/agent", "agent=agent:v2")
		out = mustKubectl(t, "", "-n", e.ns, "rollout", "status", "ds/agent", "--timeout=60s")
	})
	if !strings.Contains(out, `daemon set "agent" successfully rolled out`) {
		t.Errorf("rollout status printed %q", out)
	}
	e.waitPlacement("agent:v2", nodes...)
	if w := worst; w > 1 {
		t.Errorf("%d nodes were without a ready pod at once; maxUnavailable is 1", w)
	}
	revs, err := client.AppsV1().ControllerRevisions(e.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var numbers []int64
	for _, r := range revs.Items {
		numbers = append(numbers, r.Revision)
	}
	sort.Slice(numbers, func(i, j int) bool { return numbers[i] < numbers[j] })
	if fmt.Sprint(numbers) != "[1 2]" {
		t.Errorf("revisions %v", numbers)
	}

	// Undo goes back to the first template, through the same rollout.
	mustKubectl(t, "", "-n", e.ns, "rollout", "undo", "ds/agent")
	mustKubectl(t, "", "-n", e.ns, "rollout", "status", "ds/agent", "--timeout=60s")
	e.waitPlacement("agent:v1", nodes...)
}

// sampleRollout lists the pods every 20 ms while rollout runs and returns
// the most nodes seen at once without a ready pod.
func (e *dsEnv) sampleRollout(nodes int, rollout func()) int {
	var worst atomic.Int32
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			pods, err := client.CoreV1().Pods(e.ns).List(context.Background(), metav1.ListOptions{})
			if err != nil {
				continue
			}
			ready := map[string]bool{}
			for _, p := range pods.Items {
				if p.DeletionTimestamp == nil && dsPodReady(&p) {
					ready[p.Spec.NodeName] = true
				}
			}
			worst.Store(max(worst.Load(), int32(nodes-len(ready))))
		}
	}()
	rollout()
	close(stop)
	<-sampled
	return int(worst.Load())
}

func TestDaemonSetSurgeUpdate(t *testing.T) {
	e := newDSEnv(t)
	fakeKubelet(t, e.ns, nil)
	var nodes []string
	for _, s := range []string{"a", "b", "c"} {
		nodes = append(nodes, e.node(s, dsEdge))
	}
	e.daemonSet("agent", func(ds *appsv1.DaemonSet) {
		ds.Spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateDaemonSet{
			MaxUnavailable: ptr.To(intstr.FromInt32(0)), MaxSurge: ptr.To(intstr.FromInt32(1))}
	})
	e.waitPlacement("agent:v1", nodes...)
	e.waitStatus("agent", appsv1.DaemonSetStatus{DesiredNumberScheduled: 3, CurrentNumberScheduled: 3, NumberReady: 3,
		NumberAvailable: 3, UpdatedNumberScheduled: 3})
	// A new pod starts beside the old one, which goes once the new one is
	// ready: no node is ever without a ready pod. (The number of live pods
	// is not bounded by nodes+maxSurge at every instant: as upstream, the
	// next node's surge pod is created while the previous old pod's
	// deletion is in flight.)
	worst := e.sampleRollout(len(nodes), func() {
		mustKubectl(t, "", "-n", e.ns, "set", "image", "ds/agent", "agent=agent:v2")
		mustKubectl(t, "", "-n", e.ns, "rollout", "status", "ds/agent", "--timeout=60s")
	})
	e.waitPlacement("agent:v2", nodes...)
	if worst != 0 {
		t.Errorf("during the surge rollout %d nodes lacked a ready pod at once; want none", worst)
	}
}

func TestDaemonSetOnDeleteAndFailedPods(t *testing.T) {
	e := newDSEnv(t)
	// The first pod on each node fails; its replacement runs.
	var seen atomic.Int32
	fakeKubelet(t, e.ns, func(p *v1.Pod) v1.PodPhase {
		if seen.Add(1) == 1 {
			return v1.PodFailed
		}
		return v1.PodRunning
	})
	n := e.node("a", dsEdge)
	e.daemonSet("agent", func(ds *appsv1.DaemonSet) {
		ds.Spec.UpdateStrategy = appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType}
	})
	e.waitPlacement("agent:v1", n)
	e.waitStatus("agent", appsv1.DaemonSetStatus{DesiredNumberScheduled: 1, CurrentNumberScheduled: 1, NumberReady: 1,
		NumberAvailable: 1, UpdatedNumberScheduled: 1})
	eventually(t, 10*time.Second, func() error {
		evs, err := client.CoreV1().Events(e.ns).List(context.Background(), metav1.ListOptions{FieldSelector: "reason=FailedDaemonPod"})
		if err != nil {
			return err
		}
		if len(evs.Items) == 0 {
			return fmt.Errorf("no FailedDaemonPod event")
		}
		if !strings.Contains(evs.Items[0].Message, "Found failed daemon pod "+e.ns+"/agent-") ||
			!strings.HasSuffix(evs.Items[0].Message, " on node "+n+", will try to kill it") {
			return fmt.Errorf("event message %q", evs.Items[0].Message)
		}
		return nil
	})

	// OnDelete: a new template waits until the pod is deleted by hand.
	mustKubectl(t, "", "-n", e.ns, "set", "image", "ds/agent", "agent=agent:v2")
	e.waitStatus("agent", appsv1.DaemonSetStatus{DesiredNumberScheduled: 1, CurrentNumberScheduled: 1, NumberReady: 1,
		NumberAvailable: 1, UpdatedNumberScheduled: 0})
	time.Sleep(time.Second)
	e.waitPlacement("agent:v1", n)
	mustKubectl(t, "", "-n", e.ns, "delete", "pods", "-l", "app=agent")
	e.waitPlacement("agent:v2", n)
	e.waitStatus("agent", appsv1.DaemonSetStatus{DesiredNumberScheduled: 1, CurrentNumberScheduled: 1, NumberReady: 1,
		NumberAvailable: 1, UpdatedNumberScheduled: 1})
}

func dsPodReady(p *v1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}
