package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
)

// isolationTaint keeps pods of other tests off the nodes a scheduler test
// creates: every node here carries it and only this file's pods tolerate
// it. The taint's own semantics are what the tests check, so they stay
// valid with it in place.
const isolationTaint = "test.orca.dev/scheduler"

// schedEnv is one scheduler test's nodes and namespace.
type schedEnv struct {
	t  *testing.T
	ns string
}

func newSchedEnv(t *testing.T) *schedEnv {
	t.Helper()
	ns := "sched-" + strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-"))
	ns = strings.ReplaceAll(ns, "_", "-")
	if len(ns) > 50 {
		ns = ns[:50]
	}
	ctx := context.Background()
	if _, err := client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	e := &schedEnv{t: t, ns: ns}
	t.Cleanup(func() {
		// No kubelet finishes graceful deletion here, so the pods are
		// removed with grace 0, then the nodes.
		zero := int64(0)
		pods, _ := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		for _, p := range pods.Items {
			_ = client.CoreV1().Pods(ns).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
		}
		nodes, _ := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: isolationTaint + "=" + ns})
		for _, n := range nodes.Items {
			_ = client.CoreV1().Nodes().Delete(ctx, n.Name, metav1.DeleteOptions{})
		}
		_ = client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
	})
	return e
}

// node creates a node named after the test with cpu cores, 16Gi of memory,
// 110 pods, extra labels and taints.
func (e *schedEnv) node(suffix string, cpu int64, labels map[string]string, taints ...v1.Taint) string {
	e.t.Helper()
	name := e.ns + "-" + suffix
	l := map[string]string{v1.LabelHostname: name, isolationTaint: e.ns}
	for k, v := range labels {
		l[k] = v
	}
	alloc := v1.ResourceList{
		v1.ResourceCPU:    *resource.NewQuantity(cpu, resource.DecimalSI),
		v1.ResourceMemory: resource.MustParse("16Gi"),
		v1.ResourcePods:   resource.MustParse("110"),
	}
	if labels["gpu"] == "true" {
		alloc["nvidia.com/gpu"] = resource.MustParse("2")
	}
	n := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l},
		Spec:       v1.NodeSpec{Taints: append(taints, v1.Taint{Key: isolationTaint, Value: e.ns, Effect: v1.TaintEffectNoSchedule})},
	}
	created, err := client.CoreV1().Nodes().Create(context.Background(), n, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatalf("create node %s: %v", name, err)
	}
	// A merge patch, as a kubelet reports status: the node IPAM controller
	// may be writing the node's pod range at the same moment.
	status, _ := json.Marshal(map[string]any{"status": v1.NodeStatus{Capacity: alloc, Allocatable: alloc, Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}}})
	if _, err := client.CoreV1().Nodes().Patch(context.Background(), created.Name, types.MergePatchType, status, metav1.PatchOptions{}, "status"); err != nil {
		e.t.Fatalf("node %s status: %v", name, err)
	}
	return name
}

// pod creates a pod requesting cpu, tolerating the isolation taint;
// mutate adjusts it first.
func (e *schedEnv) pod(name, cpu string, mutate func(*v1.Pod)) *v1.Pod {
	e.t.Helper()
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns, Labels: map[string]string{"test": "scheduler"}},
		Spec: v1.PodSpec{
			Containers:  []v1.Container{{Name: "c", Image: "busybox", Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)}}}},
			Tolerations: []v1.Toleration{{Key: isolationTaint, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule}},
		},
	}
	if mutate != nil {
		mutate(p)
	}
	created, err := client.CoreV1().Pods(e.ns).Create(context.Background(), p, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatalf("create pod %s: %v", name, err)
	}
	return created
}

// placements waits until the named pods are bound (or, for want
// pending, reported unschedulable) and returns pod -> node.
func (e *schedEnv) placements(names ...string) map[string]string {
	e.t.Helper()
	out := map[string]string{}
	eventually(e.t, 20*time.Second, func() error {
		for _, n := range names {
			p, err := client.CoreV1().Pods(e.ns).Get(context.Background(), n, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if p.Spec.NodeName == "" {
				return fmt.Errorf("pod %s not bound yet", n)
			}
			out[n] = p.Spec.NodeName
		}
		return nil
	})
	return out
}

// unschedulable waits for PodScheduled=False/Unschedulable and returns
// its message.
func (e *schedEnv) unschedulable(name string) string {
	e.t.Helper()
	var msg string
	eventually(e.t, 20*time.Second, func() error {
		p, err := client.CoreV1().Pods(e.ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.Spec.NodeName != "" {
			return fmt.Errorf("pod %s was bound to %s", name, p.Spec.NodeName)
		}
		for _, c := range p.Status.Conditions {
			if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse && c.Reason == v1.PodReasonUnschedulable {
				msg = c.Message
				return nil
			}
		}
		return fmt.Errorf("pod %s has no PodScheduled=False condition: %+v", name, p.Status.Conditions)
	})
	return msg
}

// event waits for an event with reason on the pod and returns its message.
func (e *schedEnv) event(pod, reason string) string {
	e.t.Helper()
	var msg string
	eventually(e.t, 20*time.Second, func() error {
		evs, err := client.CoreV1().Events(e.ns).List(context.Background(), metav1.ListOptions{
			FieldSelector: fields.Set{"involvedObject.name": pod}.String(),
		})
		if err != nil {
			return err
		}
		for _, ev := range evs.Items {
			if ev.InvolvedObject.Name == pod && ev.Reason == reason {
				msg = ev.Message
				return nil
			}
		}
		return fmt.Errorf("no %s event for %s among %d", reason, pod, len(evs.Items))
	})
	return msg
}

func nodeSelectorTerm(key string, values ...string) *v1.Affinity {
	return &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
		NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{{Key: key, Operator: v1.NodeSelectorOpIn, Values: values}}}},
	}}}
}

func TestSchedulerGPUPodsLandOnGPUNodes(t *testing.T) {
	e := newSchedEnv(t)
	gpu1, gpu2 := e.node("gpu-1", 8, map[string]string{"gpu": "true"}), e.node("gpu-2", 8, map[string]string{"gpu": "true"})
	for i := range 3 {
		e.node(fmt.Sprintf("cpu-%d", i), 8, nil)
	}
	gpuPod := func(p *v1.Pod) {
		p.Spec.NodeSelector = map[string]string{"gpu": "true"}
		one := resource.MustParse("1")
		p.Spec.Containers[0].Resources.Requests["nvidia.com/gpu"] = one
		p.Spec.Containers[0].Resources.Limits = v1.ResourceList{"nvidia.com/gpu": one}
	}
	var names []string
	for i := range 4 {
		names = append(names, e.pod(fmt.Sprintf("train-%d", i), "100m", gpuPod).Name)
		e.pod(fmt.Sprintf("web-%d", i), "100m", nil)
	}
	for pod, node := range e.placements(names...) {
		if node != gpu1 && node != gpu2 {
			t.Errorf("GPU pod %s landed on %s", pod, node)
		}
	}
	// Four GPUs are in use now; the fifth GPU pod waits, and says why.
	e.pod("train-4", "100m", gpuPod)
	msg := e.unschedulable("train-4")
	if !strings.Contains(msg, "2 Insufficient nvidia.com/gpu") || !strings.Contains(msg, "3 node(s) didn't match Pod's node affinity/selector") {
		t.Errorf("message = %q", msg)
	}
	if ev := e.event("train-4", "FailedScheduling"); ev != msg {
		t.Errorf("FailedScheduling event %q, condition %q", ev, msg)
	}
	if ev := e.event("train-0", "Scheduled"); !strings.HasPrefix(ev, "Successfully assigned "+e.ns+"/train-0 to ") {
		t.Errorf("Scheduled event = %q", ev)
	}
}

// TestSchedulerBlueGreenGray is the seed document's example: taints keep
// foreign pods off the blue and green nodes, node affinity keeps blue and
// green pods on their own nodes; only both together place every pod on
// its own colour.
func TestSchedulerBlueGreenGray(t *testing.T) {
	colourTaint := func(c string) v1.Taint { return v1.Taint{Key: "color", Value: c, Effect: v1.TaintEffectNoSchedule} }
	tolerate := func(c string) v1.Toleration {
		return v1.Toleration{Key: "color", Operator: v1.TolerationOpEqual, Value: c, Effect: v1.TaintEffectNoSchedule}
	}
	type setup struct{ taints, affinity bool }
	run := func(t *testing.T, s setup) map[string]map[string]int {
		e := newSchedEnv(t)
		nodes := map[string]string{}
		for _, c := range []string{"blue", "green", "gray"} {
			var taints []v1.Taint
			if s.taints && c != "gray" {
				taints = append(taints, colourTaint(c))
			}
			nodes[e.node(c, 32, map[string]string{"color": c}, taints...)] = c
		}
		// The leak shows when the least-allocated score draws the
		// unguarded pods to the wrong colour: so they are created first,
		// onto empty nodes.
		order := []string{"blue", "green", "gray"}
		if !s.taints {
			order = []string{"gray", "blue", "green"}
		}
		var names []string
		for _, c := range order {
			for i := range 6 {
				name := fmt.Sprintf("%s-%d", c, i)
				e.pod(name, "100m", func(p *v1.Pod) {
					if c == "gray" {
						return
					}
					if s.taints {
						p.Spec.Tolerations = append(p.Spec.Tolerations, tolerate(c))
					}
					if s.affinity {
						p.Spec.Affinity = nodeSelectorTerm("color", c)
					}
				})
				names = append(names, name)
			}
		}
		got := map[string]map[string]int{}
		for pod, node := range e.placements(names...) {
			podColour := strings.SplitN(pod, "-", 2)[0]
			if got[podColour] == nil {
				got[podColour] = map[string]int{}
			}
			got[podColour][nodes[node]]++
		}
		return got
	}
	t.Run("both", func(t *testing.T) {
		got := run(t, setup{taints: true, affinity: true})
		for _, c := range []string{"blue", "green", "gray"} {
			if got[c][c] != 6 {
				t.Errorf("%s pods: %v, want all 6 on %s", c, got[c], c)
			}
		}
	})
	t.Run("taints only", func(t *testing.T) {
		got := run(t, setup{taints: true})
		if got["gray"]["gray"] != 6 {
			t.Errorf("gray pods %v: the taints should keep them off blue and green", got["gray"])
		}
		if got["blue"]["gray"]+got["green"]["gray"] == 0 {
			t.Errorf("blue %v green %v: without affinity some should leak onto gray", got["blue"], got["green"])
		}
	})
	t.Run("affinity only", func(t *testing.T) {
		got := run(t, setup{affinity: true})
		if got["blue"]["blue"] != 6 || got["green"]["green"] != 6 {
			t.Errorf("blue %v green %v: affinity should hold them on their colour", got["blue"], got["green"])
		}
		if got["gray"]["blue"]+got["gray"]["green"] == 0 {
			t.Errorf("gray %v: without taints some should leak onto blue or green", got["gray"])
		}
	})
}

func TestSchedulerControlPlaneTaint(t *testing.T) {
	e := newSchedEnv(t)
	cp := e.node("control-plane", 32, map[string]string{"node-role.kubernetes.io/control-plane": ""},
		v1.Taint{Key: "node-role.kubernetes.io/control-plane", Effect: v1.TaintEffectNoSchedule})
	worker := e.node("worker", 4, nil)
	var names []string
	for i := range 5 {
		names = append(names, e.pod(fmt.Sprintf("app-%d", i), "100m", nil).Name)
	}
	e.pod("agent", "100m", func(p *v1.Pod) {
		p.Spec.Tolerations = append(p.Spec.Tolerations, v1.Toleration{Key: "node-role.kubernetes.io/control-plane", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule})
		p.Spec.NodeSelector = map[string]string{"node-role.kubernetes.io/control-plane": ""}
	})
	for pod, node := range e.placements(names...) {
		if node != worker {
			t.Errorf("%s on %s, want the worker", pod, node)
		}
	}
	if got := e.placements("agent")["agent"]; got != cp {
		t.Errorf("tolerating pod on %s, want %s", got, cp)
	}
}

func TestSchedulerRequiredAntiAffinity(t *testing.T) {
	e := newSchedEnv(t)
	for i := range 3 {
		e.node(fmt.Sprintf("n%d", i), 8, nil)
	}
	anti := func(p *v1.Pod) {
		p.Labels["app"] = "db"
		p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}, TopologyKey: v1.LabelHostname,
		}}}}
	}
	for i := range 3 {
		e.pod(fmt.Sprintf("db-%d", i), "100m", anti)
	}
	seen := map[string]bool{}
	for _, node := range e.placements("db-0", "db-1", "db-2") {
		seen[node] = true
	}
	if len(seen) != 3 {
		t.Errorf("replicas on %d distinct nodes, want 3", len(seen))
	}
	e.pod("db-3", "100m", anti)
	msg := e.unschedulable("db-3")
	if !strings.Contains(msg, "3 node(s) didn't match pod anti-affinity rules") || !strings.HasPrefix(msg, "0/") ||
		!strings.Contains(msg, "preemption: ") {
		t.Errorf("message = %q", msg)
	}
}

// priority returns a mutation giving a pod priority n. Priority comes
// from PriorityClasses (admission refuses a bare spec.priority).
func (e *schedEnv) priority(n int32) func(*v1.Pod) {
	e.t.Helper()
	name := fmt.Sprintf("%s-%d", e.ns, n)
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: n}
	if _, err := client.SchedulingV1().PriorityClasses().Create(context.Background(), pc, metav1.CreateOptions{}); err == nil {
		e.t.Cleanup(func() {
			_ = client.SchedulingV1().PriorityClasses().Delete(context.Background(), name, metav1.DeleteOptions{})
		})
	} else if !apierrors.IsAlreadyExists(err) {
		e.t.Fatalf("create priority class: %v", err)
	}
	return func(p *v1.Pod) { p.Spec.PriorityClassName = name }
}

// waitPreempted waits until preemptor is nominated to node and victim is
// being deleted.
func (e *schedEnv) waitPreempted(preemptor, victim, node string) {
	e.t.Helper()
	eventually(e.t, 20*time.Second, func() error {
		v, err := client.CoreV1().Pods(e.ns).Get(context.Background(), victim, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if v.DeletionTimestamp == nil {
			return fmt.Errorf("%s not being deleted", victim)
		}
		if !hasDisruptionTarget(v) {
			return fmt.Errorf("%s has no DisruptionTarget condition: %+v", victim, v.Status.Conditions)
		}
		p, err := client.CoreV1().Pods(e.ns).Get(context.Background(), preemptor, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.Status.NominatedNodeName != node {
			return fmt.Errorf("%s: nominatedNodeName = %q", preemptor, p.Status.NominatedNodeName)
		}
		return nil
	})
}

// hasDisruptionTarget tells whether the scheduler marked the pod as its
// preemption victim, as upstream's does before deleting it.
func hasDisruptionTarget(p *v1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == v1.DisruptionTarget && c.Status == v1.ConditionTrue && c.Reason == v1.PodReasonPreemptionByScheduler &&
			c.Message == "default-scheduler: preempting to accommodate a higher priority pod" {
			return true
		}
	}
	return false
}

func TestSchedulerPreemptsLowestPriority(t *testing.T) {
	e := newSchedEnv(t)
	node := e.node("only", 2, nil)
	prio := e.priority
	e.pod("low", "1", prio(10))
	e.pod("mid", "1", prio(50))
	e.placements("low", "mid")
	e.pod("high", "1", prio(100))
	e.waitPreempted("high", "low", node)
	mid, _ := client.CoreV1().Pods(e.ns).Get(context.Background(), "mid", metav1.GetOptions{})
	if mid.DeletionTimestamp != nil {
		t.Error("the mid-priority pod was evicted too")
	}
	// The victim leaves as a kubelet would end it; then the preemptor fits.
	zero := int64(0)
	if err := client.CoreV1().Pods(e.ns).Delete(context.Background(), "low", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	if got := e.placements("high")["high"]; got != node {
		t.Errorf("preemptor on %q", got)
	}
	// preemptionPolicy: Never waits instead of evicting.
	never := v1.PreemptNever
	neverClass := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: e.ns + "-never"}, Value: 1000, PreemptionPolicy: &never}
	if _, err := client.SchedulingV1().PriorityClasses().Create(context.Background(), neverClass, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create priority class: %v", err)
	}
	t.Cleanup(func() {
		_ = client.SchedulingV1().PriorityClasses().Delete(context.Background(), neverClass.Name, metav1.DeleteOptions{})
	})
	e.pod("polite", "1", func(p *v1.Pod) { p.Spec.PriorityClassName = neverClass.Name })
	if msg := e.unschedulable("polite"); !strings.Contains(msg, "preemption: not eligible due to preemptionPolicy=Never") {
		t.Errorf("message = %q", msg)
	}
}

func TestSchedulerCordonStopsPlacements(t *testing.T) {
	e := newSchedEnv(t)
	a, b := e.node("a", 8, nil), e.node("b", 8, nil)
	mustKubectl(t, "", "cordon", a)
	var names []string
	for i := range 4 {
		names = append(names, e.pod(fmt.Sprintf("p-%d", i), "100m", nil).Name)
	}
	for pod, node := range e.placements(names...) {
		if node != b {
			t.Errorf("%s placed on %s while %s is cordoned", pod, node, a)
		}
	}
	mustKubectl(t, "", "cordon", b)
	e.pod("waits", "100m", nil)
	if msg := e.unschedulable("waits"); !strings.Contains(msg, "2 node(s) were unschedulable") {
		t.Errorf("message = %q", msg)
	}
	// Uncordoning is a node change: the parked pod is retried at once.
	mustKubectl(t, "", "uncordon", a)
	if got := e.placements("waits")["waits"]; got != a {
		t.Errorf("pod placed on %s after uncordon, want %s", got, a)
	}
}

func TestSchedulerWaitsForSchedulingGates(t *testing.T) {
	e := newSchedEnv(t)
	e.node("only", 4, nil)
	e.pod("gated", "100m", func(p *v1.Pod) { p.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: "example.com/quota"}} })
	time.Sleep(time.Second)
	p, err := client.CoreV1().Pods(e.ns).Get(context.Background(), "gated", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Spec.NodeName != "" {
		t.Fatalf("gated pod bound to %s", p.Spec.NodeName)
	}
	p.Spec.SchedulingGates = nil
	if _, err := client.CoreV1().Pods(e.ns).Update(context.Background(), p, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("remove the gate: %v", err)
	}
	e.placements("gated")
}

func TestSchedulerPreemptorKeepsTheRoomItFreed(t *testing.T) {
	e := newSchedEnv(t)
	node := e.node("only", 2, nil)
	e.pod("low", "2", e.priority(10))
	e.placements("low")
	e.pod("high", "2", e.priority(100))
	e.waitPreempted("high", "low", node)
	// The victim goes as a kubelet would end it, and a small pod of the
	// victim's priority arrives at once. It is new, so it is tried before
	// the preemptor, which is still backing off; the freed room must stay
	// the preemptor's.
	zero := int64(0)
	if err := client.CoreV1().Pods(e.ns).Delete(context.Background(), "low", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	// Long enough for the scheduler to see the room freed, well inside
	// the preemptor's first backoff (1 s).
	time.Sleep(100 * time.Millisecond)
	e.pod("late", "1", e.priority(10))
	if got := e.placements("high")["high"]; got != node {
		t.Errorf("preemptor on %q, want %s", got, node)
	}
	if msg := e.unschedulable("late"); !strings.Contains(msg, "Insufficient cpu") {
		t.Errorf("late pod's message = %q", msg)
	}
	late, err := client.CoreV1().Pods(e.ns).Get(context.Background(), "late", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if late.Spec.NodeName != "" {
		t.Errorf("late pod took %s", late.Spec.NodeName)
	}
}

// boundClaim creates a PersistentVolume pinned to node (cluster-scoped, so
// named after the test) and a claim already bound to it.
func (e *schedEnv) boundClaim(claim, node string) {
	e.t.Helper()
	ctx := context.Background()
	pvName := e.ns + "-" + claim
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: pvName},
		Spec: v1.PersistentVolumeSpec{
			Capacity:               v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:            []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			PersistentVolumeSource: v1.PersistentVolumeSource{Local: &v1.LocalVolumeSource{Path: "/mnt/" + claim}},
			ClaimRef:               &v1.ObjectReference{Namespace: e.ns, Name: claim},
			NodeAffinity: &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
				MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: []string{node}}},
			}}}},
		},
	}
	if _, err := client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		e.t.Fatalf("create persistentvolume: %v", err)
	}
	e.t.Cleanup(func() { _ = client.CoreV1().PersistentVolumes().Delete(ctx, pvName, metav1.DeleteOptions{}) })
	noClass := ""
	pvc := &v1.PersistentVolumeClaim{
		// No volume controller runs here; the claim is created bound, as
		// the controller would leave it.
		ObjectMeta: metav1.ObjectMeta{Name: claim, Annotations: map[string]string{"pv.kubernetes.io/bind-completed": "yes"}},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}},
			StorageClassName: &noClass,
			VolumeName:       pvName,
		},
	}
	if _, err := client.CoreV1().PersistentVolumeClaims(e.ns).Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		e.t.Fatalf("create persistentvolumeclaim: %v", err)
	}
}

func withClaim(name string) func(*v1.Pod) {
	return func(p *v1.Pod) {
		p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: "data", VolumeSource: v1.VolumeSource{
			PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: name},
		}})
	}
}

func TestSchedulerFollowsVolumeNodeAffinity(t *testing.T) {
	e := newSchedEnv(t)
	a := e.node("a", 8, nil)
	b := e.node("b", 8, nil)
	e.boundClaim("data", b)
	e.pod("uses-data", "100m", withClaim("data"))
	if got := e.placements("uses-data")["uses-data"]; got != b {
		t.Errorf("pod with a volume pinned to %s placed on %s", b, got)
	}

	// A missing claim: upstream's message, the same in the condition and
	// the event; the node count covers other tests' nodes too.
	e.pod("no-claim", "100m", withClaim("x"))
	want := regexp.MustCompile(`^0/(\d+) nodes are available: persistentvolumeclaim "x" not found\. preemption: 0/(\d+) nodes are available: (\d+) Preemption is not helpful for scheduling\.$`)
	msg := e.unschedulable("no-claim")
	if m := want.FindStringSubmatch(msg); m == nil || m[1] != m[2] || m[2] != m[3] {
		t.Errorf("message = %q", msg)
	}
	if ev := e.event("no-claim", "FailedScheduling"); !want.MatchString(ev) {
		t.Errorf("event = %q", ev)
	}
	// Creating the claim gives the parked pod another try.
	e.boundClaim("x", a)
	if got := e.placements("no-claim")["no-claim"]; got != a {
		t.Errorf("pod placed on %s once its claim appeared, want %s", got, a)
	}
}
