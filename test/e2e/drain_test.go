package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestDrainRespectsDisruptionBudget runs a Deployment of three replicas
// on two extra nodes under a budget of minAvailable 2: one eviction
// passes and an immediate second one is refused with a 429; then `kubectl
// drain` of a node holding replicas (a DaemonSet pod and emptyDir volumes
// among them) evicts what the budget allows, retries the rest, and
// completes once the Deployment has replaced the pods on the other node.
func TestDrainRespectsDisruptionBudget(t *testing.T) {
	names := needNodes(t, 3)
	extra := names[1:]
	ctx := context.Background()
	ns := namespace(t)
	labels := map[string]string{"app": "web"}
	onExtra := &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
		NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: extra}}}},
	}}}
	tolerate := []v1.Toleration{{Key: extraNodeTaint.Key, Operator: v1.TolerationOpExists}}
	podSpec := func(name string) v1.PodSpec {
		return v1.PodSpec{
			Affinity: onExtra, Tolerations: tolerate, TerminationGracePeriodSeconds: ptr.To[int64](1),
			Volumes: []v1.Volume{{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}},
			Containers: []v1.Container{{Name: name, Image: busybox, ImagePullPolicy: v1.PullNever, Command: []string{"sleep", "3600"},
				VolumeMounts: []v1.VolumeMount{{Name: "scratch", MountPath: "/scratch"}}}},
		}
	}
	_, err := client.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](3), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: podSpec("web")}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	agentLabels := map[string]string{"app": "agent"}
	_, err = client.AppsV1().DaemonSets(ns).Create(ctx, &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent"},
		Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: agentLabels},
			Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: agentLabels}, Spec: podSpec("agent")}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kubectlOK(t, "", "create", "poddisruptionbudget", "web", "-n", ns, "--selector=app=web", "--min-available=2")
	t.Cleanup(func() {
		for _, n := range extra {
			_ = runKubectl(t, nil, "", "uncordon", n)
		}
	})

	budget := func(allowed int32) func() error {
		return func() error {
			pdb, err := client.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if s := pdb.Status; s.CurrentHealthy != 3 || s.DesiredHealthy != 2 || s.DisruptionsAllowed != allowed {
				return fmt.Errorf("budget status %+v, want 3 healthy of 2 desired, %d allowed", s, allowed)
			}
			return nil
		}
	}
	eventually(t, 90*time.Second, budget(1))

	webPods := func() []v1.Pod {
		pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			t.Fatal(err)
		}
		return pods.Items
	}
	pods := webPods()
	evict := func(name string) error {
		return client.PolicyV1().Evictions(ns).Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}})
	}
	if err := evict(pods[0].Name); err != nil {
		t.Fatalf("first eviction: %v", err)
	}
	err = evict(pods[1].Name)
	if !apierrors.IsTooManyRequests(err) || err.Error() != "Cannot evict pod as it would violate the pod's disruption budget." {
		t.Fatalf("second eviction: %v, want the budget's 429", err)
	}
	// The Deployment replaces the evicted pod and the budget recovers.
	eventually(t, 60*time.Second, budget(1))

	perNode := map[string]int{}
	for _, p := range webPods() {
		if p.DeletionTimestamp == nil {
			perNode[p.Spec.NodeName]++
		}
	}
	drained := extra[0]
	if perNode[extra[1]] > perNode[drained] {
		drained = extra[1]
	}
	other := extra[0]
	if other == drained {
		other = extra[1]
	}
	t.Logf("replicas per node %v; draining %s", perNode, drained)
	start := time.Now()
	res := runKubectl(t, nil, "", "drain", drained, "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=90s")
	if res.Code != 0 {
		t.Fatalf("drain: exit %d\nstdout: %s\nstderr: %s", res.Code, res.Stdout, res.Stderr)
	}
	t.Logf("drained in %v", time.Since(start).Round(time.Second))
	out := res.Stdout + res.Stderr
	for _, want := range []string{"node/" + drained + " cordoned", "Warning: ignoring DaemonSet-managed Pods: " + ns + "/agent-", "evicting pod " + ns + "/web-", "node/" + drained + " drained"} {
		if !strings.Contains(out, want) {
			t.Errorf("drain output lacks %q:\n%s", want, out)
		}
	}
	if perNode[drained] > 1 && !strings.Contains(out, "Cannot evict pod as it would violate the pod's disruption budget.") {
		t.Errorf("drain of %d replicas never waited for the budget:\n%s", perNode[drained], out)
	}
	node, err := client.CoreV1().Nodes().Get(ctx, drained, metav1.GetOptions{})
	if err != nil || !node.Spec.Unschedulable {
		t.Errorf("drained node not cordoned: %v", err)
	}
	eventually(t, 60*time.Second, func() error {
		for _, p := range webPods() {
			if p.Spec.NodeName != other || !ready(&p) {
				return fmt.Errorf("pod %s on %s: %s", p.Name, p.Spec.NodeName, describeStatus(&p))
			}
		}
		return budget(1)()
	})
	// The DaemonSet's pod stays on the drained node.
	ds, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=agent", FieldSelector: "spec.nodeName=" + drained})
	if err != nil || len(ds.Items) != 1 || ds.Items[0].DeletionTimestamp != nil {
		t.Errorf("DaemonSet pod on the drained node: %v %v", err, ds)
	}
}
