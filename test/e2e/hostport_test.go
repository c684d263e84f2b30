package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestHostPortConflictRecreatesStatefulSetPod is upstream's "Should
// recreate evicted statefulset": a pod holding a host port makes the
// kubelet reject a StatefulSet pod asking for the same port on the same
// node (Failed, reason NodePorts); the controller deletes and recreates it
// until the port is free, and then it runs under the same name.
func TestHostPortConflictRecreatesStatefulSetPod(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	ctx := context.Background()
	const port = 31321
	holder := simplePod(ns, "holder", "exec sleep 3600")
	holder.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 21017, HostPort: port}}
	createPod(t, holder)
	waitPod(t, ns, "holder", time.Minute, "Running", running)

	// A plain pod is rejected with upstream's reason and message.
	clash := simplePod(ns, "clash", "exec sleep 3600")
	clash.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 21017, HostPort: port}}
	createPod(t, clash)
	p := waitPod(t, ns, "clash", time.Minute, "Failed", func(p *v1.Pod) bool { return p.Status.Phase == v1.PodFailed })
	if p.Status.Reason != "NodePorts" || p.Status.Message != "Pod was rejected: Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports" {
		t.Errorf("rejected pod: reason %q, message %q", p.Status.Reason, p.Status.Message)
	}
	if evs := events(t, ns, "clash"); !hasEvent(evs, "NodePorts: Predicate NodePorts failed") {
		t.Errorf("events of the rejected pod: %v", evs)
	}

	labels := map[string]string{"app": "ss-hostport"}
	grace := int64(1)
	if _, err := client.AppsV1().StatefulSets(ns).Create(ctx, &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "ss"},
		Spec: appsv1.StatefulSetSpec{
			Replicas: ptr.To[int32](1), ServiceName: "ss",
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: v1.PodSpec{
				NodeName: nodeName, TerminationGracePeriodSeconds: &grace,
				Containers: []v1.Container{{Name: "main", Image: busybox, ImagePullPolicy: v1.PullNever, Command: []string{"sleep", "3600"},
					Ports: []v1.ContainerPort{{ContainerPort: 21017, HostPort: port}}}},
			}},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The set goes before the namespace's pods, and its pods are gone
	// through the kubelet before the run ends: a set left to recreate
	// ss-0 during the teardown left the port mapping of a sandbox the
	// network plugin never removed.
	t.Cleanup(func() {
		fg := metav1.DeletePropagationForeground
		_ = client.AppsV1().StatefulSets(ns).Delete(context.Background(), "ss", metav1.DeleteOptions{PropagationPolicy: &fg})
		eventually(t, time.Minute, func() error {
			pods, err := client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "app=ss-hostport"})
			if err != nil {
				return err
			}
			if len(pods.Items) > 0 {
				return fmt.Errorf("%d pods of the set left", len(pods.Items))
			}
			return nil
		})
	})
	// ss-0 fails at least once, under more than one uid: it is recreated.
	uids := map[string]bool{}
	eventually(t, time.Minute, func() error {
		p, err := client.CoreV1().Pods(ns).Get(ctx, "ss-0", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.Status.Phase == v1.PodFailed {
			uids[string(p.UID)] = true
		}
		if len(uids) < 2 {
			return fmt.Errorf("ss-0 failed under %d uids so far (phase %s)", len(uids), p.Status.Phase)
		}
		return nil
	})
	zero := int64(0)
	if err := client.CoreV1().Pods(ns).Delete(ctx, "holder", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	waitPod(t, ns, "ss-0", 2*time.Minute, "Running once the port is free", running)
}
