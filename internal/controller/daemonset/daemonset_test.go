package daemonset

import (
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

var now = time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)

func testDS() *appsv1.DaemonSet {
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "ns", UID: "ds-uid", Generation: 2},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}},
			Template: v1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "agent"}},
				Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "i"}}},
			},
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDaemonSet{MaxUnavailable: ptr.To(intstr.FromInt32(1)), MaxSurge: ptr.To(intstr.FromInt32(0))}},
		},
	}
}

func node(name string, mutate ...func(*v1.Node)) *v1.Node {
	n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}}}
	for _, m := range mutate {
		m(n)
	}
	return n
}

func taint(key string, effect v1.TaintEffect) func(*v1.Node) {
	return func(n *v1.Node) {
		n.Spec.Taints = append(n.Spec.Taints, v1.Taint{Key: key, Value: "x", Effect: effect})
	}
}

func TestNodeShouldRunDaemonPod(t *testing.T) {
	cases := []struct {
		name                 string
		node                 *v1.Node
		ds                   func(*appsv1.DaemonSet)
		run, continueRunning bool
	}{
		{"plain node", node("a"), nil, true, true},
		{"nodeSelector matches", node("a", func(n *v1.Node) { n.Labels["disk"] = "ssd" }),
			func(d *appsv1.DaemonSet) { d.Spec.Template.Spec.NodeSelector = map[string]string{"disk": "ssd"} }, true, true},
		{"nodeSelector does not match", node("a"),
			func(d *appsv1.DaemonSet) { d.Spec.Template.Spec.NodeSelector = map[string]string{"disk": "ssd"} }, false, false},
		{"required affinity excludes", node("a"), func(d *appsv1.DaemonSet) {
			d.Spec.Template.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
				NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "kubernetes.io/hostname", Operator: v1.NodeSelectorOpNotIn, Values: []string{"a"}}}}}}}}
		}, false, false},
		{"template nodeName elsewhere", node("a"), func(d *appsv1.DaemonSet) { d.Spec.Template.Spec.NodeName = "b" }, false, false},
		{"NoSchedule taint: no new pod, the old one stays", node("a", taint("gpu", v1.TaintEffectNoSchedule)), nil, false, true},
		{"NoExecute taint: neither", node("a", taint("gpu", v1.TaintEffectNoExecute)), nil, false, false},
		{"PreferNoSchedule taint is no obstacle", node("a", taint("gpu", v1.TaintEffectPreferNoSchedule)), nil, true, true},
		{"tolerated taint", node("a", taint("gpu", v1.TaintEffectNoSchedule)), func(d *appsv1.DaemonSet) {
			d.Spec.Template.Spec.Tolerations = []v1.Toleration{{Key: "gpu", Operator: v1.TolerationOpExists}}
		}, true, true},
		{"cordoned node tolerated by default", node("a", func(n *v1.Node) {
			n.Spec.Unschedulable = true
			n.Spec.Taints = []v1.Taint{{Key: v1.TaintNodeUnschedulable, Effect: v1.TaintEffectNoSchedule}}
		}), nil, true, true},
		{"not-ready node tolerated by default", node("a", func(n *v1.Node) {
			n.Spec.Taints = []v1.Taint{{Key: v1.TaintNodeNotReady, Effect: v1.TaintEffectNoExecute}}
		}), nil, true, true},
		{"network-unavailable only tolerated with hostNetwork", node("a", func(n *v1.Node) {
			n.Spec.Taints = []v1.Taint{{Key: v1.TaintNodeNetworkUnavailable, Effect: v1.TaintEffectNoSchedule}}
		}), nil, false, true},
		{"network-unavailable with hostNetwork", node("a", func(n *v1.Node) {
			n.Spec.Taints = []v1.Taint{{Key: v1.TaintNodeNetworkUnavailable, Effect: v1.TaintEffectNoSchedule}}
		}), func(d *appsv1.DaemonSet) { d.Spec.Template.Spec.HostNetwork = true }, true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ds := testDS()
			if tc.ds != nil {
				tc.ds(ds)
			}
			run, cont := nodeShouldRunDaemonPod(tc.node, ds)
			if run != tc.run || cont != tc.continueRunning {
				t.Errorf("got run=%v continue=%v, want %v %v", run, cont, tc.run, tc.continueRunning)
			}
		})
	}
}

func TestDefaultTolerationsReplaceTemplates(t *testing.T) {
	spec := v1.PodSpec{Tolerations: []v1.Toleration{
		{Key: v1.TaintNodeNotReady, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](30)},
		{Key: "mine", Operator: v1.TolerationOpExists},
	}}
	addDaemonTolerations(&spec)
	if len(spec.Tolerations) != 7 {
		t.Fatalf("got %d tolerations, want the template's own plus six defaults: %+v", len(spec.Tolerations), spec.Tolerations)
	}
	if spec.Tolerations[0].TolerationSeconds != nil {
		t.Error("not-ready toleration keeps tolerationSeconds; upstream tolerates it for ever")
	}
}

func TestNodeNameAffinity(t *testing.T) {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}}
	if _, err := targetNodeName(pod); err == nil {
		t.Error("pod without node or affinity has a target")
	}
	pod.Spec.Affinity = &v1.Affinity{
		NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{
			{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "zone", Operator: v1.NodeSelectorOpIn, Values: []string{"z"}}}}}}},
		PodAntiAffinity: &v1.PodAntiAffinity{},
	}
	pod.Spec.Affinity = replaceNodeNameAffinity(pod.Spec.Affinity, "n1")
	if got, err := targetNodeName(pod); err != nil || got != "n1" {
		t.Errorf("target %q, %v", got, err)
	}
	terms := pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) != 1 || len(terms[0].MatchExpressions) != 0 || pod.Spec.Affinity.PodAntiAffinity == nil {
		t.Errorf("affinity %+v", pod.Spec.Affinity)
	}
	pod.Spec.NodeName = "bound"
	if got, _ := targetNodeName(pod); got != "bound" {
		t.Errorf("bound pod's target %q", got)
	}
	if a := replaceNodeNameAffinity(nil, "n2"); a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchFields[0].Values[0] != "n2" {
		t.Errorf("affinity from nothing: %+v", a)
	}
}

// mkPod builds a daemon pod for tests: rev names its revision hash, state
// is "ready", "pending", "failed", "succeeded" or "deleting"; age orders
// creation.
func mkPod(name, rev, state string, age int) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name),
		Labels:            map[string]string{appsv1.DefaultDaemonSetUniqueLabelKey: rev},
		CreationTimestamp: metav1.NewTime(now.Add(-time.Duration(age) * time.Minute))},
		Spec: v1.PodSpec{NodeName: "n"}}
	switch state {
	case "ready":
		p.Status.Phase = v1.PodRunning
		p.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(now.Add(-time.Hour))}}
	case "pending":
		p.Status.Phase = v1.PodPending
	case "failed":
		p.Status.Phase = v1.PodFailed
	case "succeeded":
		p.Status.Phase = v1.PodSucceeded
	case "deleting":
		p.Status.Phase = v1.PodRunning
		p.DeletionTimestamp = ptr.To(metav1.NewTime(now))
	}
	return p
}

func names(pods []*v1.Pod) string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

func TestPodsShouldBeOnNode(t *testing.T) {
	surge := func(d *appsv1.DaemonSet) { d.Spec.UpdateStrategy.RollingUpdate.MaxSurge = ptr.To(intstr.FromInt32(1)) }
	cases := []struct {
		name            string
		pods            []*v1.Pod
		run, cont       bool
		ds              func(*appsv1.DaemonSet)
		create          bool
		deleted, failed string
	}{
		{"missing pod is created", nil, true, true, nil, true, "", ""},
		{"node not eligible, nothing there", nil, false, false, nil, false, "", ""},
		{"one pod stays", []*v1.Pod{mkPod("a", "h1", "ready", 1)}, true, true, nil, false, "", ""},
		{"extra pods: the oldest stays", []*v1.Pod{mkPod("new", "h1", "ready", 1), mkPod("old", "h1", "ready", 5), mkPod("mid", "h1", "pending", 3)}, true, true, nil, false, "mid,new", ""},
		{"failed pod goes through back-off", []*v1.Pod{mkPod("a", "h1", "failed", 1)}, true, true, nil, false, "", "a"},
		{"succeeded pod is replaced", []*v1.Pod{mkPod("a", "h1", "succeeded", 1)}, true, true, nil, false, "a", ""},
		{"terminating pod: wait", []*v1.Pod{mkPod("a", "h1", "deleting", 1)}, true, true, nil, false, "", ""},
		{"node no longer eligible", []*v1.Pod{mkPod("a", "h1", "ready", 1), mkPod("b", "h1", "deleting", 1)}, false, false, nil, false, "a", ""},
		{"untolerated NoSchedule: the pod stays", []*v1.Pod{mkPod("a", "h1", "ready", 1)}, false, true, nil, false, "", ""},
		{"surge keeps an old and a new", []*v1.Pod{mkPod("old", "h0", "ready", 5), mkPod("new", "h1", "pending", 1), mkPod("new2", "h1", "pending", 0)}, true, true, surge, false, "new2", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ds := testDS()
			if tc.ds != nil {
				tc.ds(ds)
			}
			a := podsShouldBeOnNode(tc.pods, tc.run, tc.cont, ds, "h1")
			if a.create != tc.create || names(a.delete) != tc.deleted || names(a.failed) != tc.failed {
				t.Errorf("create=%v delete=%q failed=%q, want %v %q %q", a.create, names(a.delete), names(a.failed), tc.create, tc.deleted, tc.failed)
			}
		})
	}
}

// A pod still terminating keeps its node taken, so the per-node decision
// waits for it instead of starting a replacement beside it (which upstream's
// rollback spec sees as an old pod restarted); only finished pods being
// deleted are dropped.
func TestGroupByNode(t *testing.T) {
	finishedDeleting := mkPod("done", "h1", "failed", 1)
	finishedDeleting.DeletionTimestamp = ptr.To(metav1.NewTime(now))
	unplaced := mkPod("nowhere", "h1", "pending", 1)
	unplaced.Spec.NodeName = ""
	byNode, homeless := groupByNode([]*v1.Pod{mkPod("up", "h1", "ready", 2), mkPod("going", "h1", "deleting", 1), finishedDeleting, unplaced})
	if got := names(byNode["n"]); got != "going,up" {
		t.Errorf("pods of node n = %q, want going,up", got)
	}
	if got := names(homeless); got != "nowhere" {
		t.Errorf("pods without a node = %q, want nowhere", got)
	}
	a := podsShouldBeOnNode(byNode["n"][1:], true, true, testDS(), "h1")
	if a.create {
		t.Error("a replacement is created while the node's pod is still terminating")
	}
}

func TestRollingUpdatePlan(t *testing.T) {
	type nodes = map[string][]*v1.Pod
	all := func(n ...string) map[string]bool {
		m := map[string]bool{}
		for _, x := range n {
			m[x] = true
		}
		return m
	}
	strategy := func(unavail, surge intstr.IntOrString) func(*appsv1.DaemonSet) {
		return func(d *appsv1.DaemonSet) {
			d.Spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateDaemonSet{MaxUnavailable: &unavail, MaxSurge: &surge}
		}
	}
	cases := []struct {
		name      string
		ds        func(*appsv1.DaemonSet)
		pods      nodes
		shouldRun map[string]bool
		deleted   string
		created   string
	}{
		{"maxUnavailable 1: one old pod at a time", nil,
			nodes{"a": {mkPod("a0", "h0", "ready", 1)}, "b": {mkPod("b0", "h0", "ready", 1)}, "c": {mkPod("c0", "h0", "ready", 1)}},
			all("a", "b", "c"), "a0", ""},
		{"an unavailable new pod uses up the budget", nil,
			nodes{"a": {mkPod("a1", "h1", "pending", 1)}, "b": {mkPod("b0", "h0", "ready", 1)}, "c": {mkPod("c0", "h0", "ready", 1)}},
			all("a", "b", "c"), "", ""},
		{"an available new pod frees it", nil,
			nodes{"a": {mkPod("a1", "h1", "ready", 1)}, "b": {mkPod("b0", "h0", "ready", 1)}, "c": {mkPod("c0", "h0", "ready", 1)}},
			all("a", "b", "c"), "b0", ""},
		{"unavailable old pods are replaced regardless", nil,
			nodes{"a": {mkPod("a1", "h1", "pending", 1)}, "b": {mkPod("b0", "h0", "pending", 1)}, "c": {mkPod("c0", "h0", "ready", 1)}},
			all("a", "b", "c"), "b0", ""},
		{"a node still waiting for its pod counts unavailable", nil,
			nodes{"a": nil, "b": {mkPod("b0", "h0", "ready", 1)}},
			all("a", "b"), "", ""},
		{"percentages round up", strategy(intstr.FromString("50%"), intstr.FromInt32(0)),
			nodes{"a": {mkPod("a0", "h0", "ready", 1)}, "b": {mkPod("b0", "h0", "ready", 1)}, "c": {mkPod("c0", "h0", "ready", 1)}},
			all("a", "b", "c"), "a0,b0", ""},
		{"surge creates beside old pods", strategy(intstr.FromInt32(0), intstr.FromInt32(1)),
			nodes{"a": {mkPod("a0", "h0", "ready", 1)}, "b": {mkPod("b0", "h0", "ready", 1)}},
			all("a", "b"), "", "a"},
		{"surge: old pod goes once the new one is available", strategy(intstr.FromInt32(0), intstr.FromInt32(1)),
			nodes{"a": {mkPod("a0", "h0", "ready", 2), mkPod("a1", "h1", "ready", 1)}, "b": {mkPod("b0", "h0", "ready", 1)}},
			all("a", "b"), "a0", "b"},
		{"surge: a pending new pod holds the surge", strategy(intstr.FromInt32(0), intstr.FromInt32(1)),
			nodes{"a": {mkPod("a0", "h0", "ready", 2), mkPod("a1", "h1", "pending", 1)}, "b": {mkPod("b0", "h0", "ready", 1)}},
			all("a", "b"), "", ""},
		{"surge: unavailable old pod replaced at once", strategy(intstr.FromInt32(0), intstr.FromInt32(1)),
			nodes{"a": {mkPod("a0", "h0", "pending", 2), mkPod("a1", "h1", "pending", 1)}, "b": {mkPod("b0", "h0", "pending", 1)}},
			all("a", "b"), "", "b"},
		{"zero and zero falls back to one unavailable", strategy(intstr.FromInt32(0), intstr.FromInt32(0)),
			nodes{"a": {mkPod("a0", "h0", "ready", 1)}, "b": {mkPod("b0", "h0", "ready", 1)}},
			all("a", "b"), "a0", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ds := testDS()
			if tc.ds != nil {
				tc.ds(ds)
			}
			del, create, err := rollingUpdatePlan(ds, "h1", tc.pods, tc.shouldRun, now)
			if err != nil {
				t.Fatal(err)
			}
			sort.Strings(create)
			if names(del) != tc.deleted || strings.Join(create, ",") != tc.created {
				t.Errorf("delete %q create %q, want %q %q", names(del), strings.Join(create, ","), tc.deleted, tc.created)
			}
		})
	}
}

func TestComputeStatus(t *testing.T) {
	ds := testDS()
	ds.Spec.Template.Spec.NodeSelector = map[string]string{"role": "edge"}
	edge := func(n *v1.Node) { n.Labels["role"] = "edge" }
	nodes := []*v1.Node{node("a", edge), node("b", edge), node("c", edge), node("d")}
	pods := map[string][]*v1.Pod{
		"a": {mkPod("a1", "h1", "ready", 1)},
		"b": {mkPod("b0", "h0", "ready", 3), mkPod("b1", "h1", "pending", 1)},
		"d": {mkPod("d1", "h1", "ready", 1)},
	}
	st := computeStatus(ds, nodes, pods, "h1", now)
	want := appsv1.DaemonSetStatus{DesiredNumberScheduled: 3, CurrentNumberScheduled: 2, NumberMisscheduled: 1,
		NumberReady: 2, NumberAvailable: 2, NumberUnavailable: 1, UpdatedNumberScheduled: 1}
	if fmt.Sprintf("%+v", st) != fmt.Sprintf("%+v", want) {
		t.Errorf("status\n got %+v\nwant %+v", st, want)
	}
	ds.Spec.MinReadySeconds = 7200
	if st := computeStatus(ds, nodes, pods, "h1", now); st.NumberReady != 2 || st.NumberAvailable != 0 || st.NumberUnavailable != 3 {
		t.Errorf("with minReadySeconds: %+v", st)
	}
}

func TestRevisions(t *testing.T) {
	ds := testDS()
	h1 := computeHash(&ds.Spec.Template, nil)
	if h1 != computeHash(ds.Spec.Template.DeepCopy(), nil) {
		t.Fatal("hash is not a function of the template")
	}
	if h1 == computeHash(&ds.Spec.Template, ptr.To[int32](1)) {
		t.Error("collision count does not change the hash")
	}
	rev, err := newRevision(ds, h1, 3)
	if err != nil {
		t.Fatal(err)
	}
	if rev.Name != "agent-"+h1 || rev.Labels[appsv1.DefaultDaemonSetUniqueLabelKey] != h1 || rev.Labels["app"] != "agent" || !metav1.IsControlledBy(rev, ds) {
		t.Errorf("revision %+v", rev.ObjectMeta)
	}
	if !strings.Contains(string(rev.Data.Raw), `"$patch":"replace"`) {
		t.Errorf("revision data %s", rev.Data.Raw)
	}
	changed := ds.DeepCopy()
	changed.Spec.Template.Spec.Containers[0].Image = "j"
	if computeHash(&changed.Spec.Template, nil) == h1 {
		t.Error("a new image hashes the same")
	}
	cur, old, err := splitRevisions(changed, []*appsv1.ControllerRevision{rev})
	if err != nil || len(cur) != 0 || len(old) != 1 {
		t.Errorf("split after change: %d current %d old %v", len(cur), len(old), err)
	}
	cur, _, _ = splitRevisions(ds, []*appsv1.ControllerRevision{rev})
	if len(cur) != 1 {
		t.Error("the template's own revision is not current")
	}
}

func TestRevisionsToPrune(t *testing.T) {
	rev := func(n int64) *appsv1.ControllerRevision {
		return &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("r", n),
			Labels: map[string]string{appsv1.DefaultDaemonSetUniqueLabelKey: fmt.Sprint("h", n)}}, Revision: n}
	}
	old := []*appsv1.ControllerRevision{rev(4), rev(1), rev(3), rev(2)}
	got := revisionsToPrune(old, 1, map[string]bool{"h1": true})
	var ns []string
	for _, r := range got {
		ns = append(ns, r.Name)
	}
	if strings.Join(ns, ",") != "r2,r3,r4" {
		t.Errorf("pruned %v; want the oldest beyond the limit, sparing the one a pod runs", ns)
	}
	if len(revisionsToPrune(old, 10, nil)) != 0 {
		t.Error("pruned within the limit")
	}
}

// A new ControllerRevision of a DaemonSet wakes no sync (upstream's
// conformance spec expects a hand-made duplicate to stay until the
// DaemonSet changes); one seen already terminating does.
func TestHistoryAddedWakesOnlyForDeletions(t *testing.T) {
	ds := testDS()
	client := fake.NewSimpleClientset(ds)
	factory := informers.NewSharedInformerFactory(client, 0)
	c, err := New(client, factory, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if err := factory.Apps().V1().DaemonSets().Informer().GetStore().Add(ds); err != nil {
		t.Fatal(err)
	}
	rev := &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: "agent-1", Namespace: "ns",
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(ds, appsv1.SchemeGroupVersion.WithKind("DaemonSet"))}}}
	c.historyAdded(rev)
	if n := c.queue.Len(); n != 0 {
		t.Fatalf("queue holds %d keys after a revision was added, want 0", n)
	}
	rev.DeletionTimestamp = &metav1.Time{Time: now}
	c.historyAdded(rev)
	if n := c.queue.Len(); n != 1 {
		t.Fatalf("queue holds %d keys after a terminating revision was added, want 1", n)
	}
}
