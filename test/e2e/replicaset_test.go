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

// A ReplicaSet keeps three real pods Ready on the node, placed by the
// scheduler, and replaces one that is deleted.
func TestReplicaSetKeepsThreeReplicas(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	ctx := context.Background()
	labels := map[string]string{"app": "sleepers"}
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "sleepers", Namespace: ns},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To[int32](3),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: v1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: v1.PodSpec{
					TerminationGracePeriodSeconds: ptr.To[int64](1),
					Containers: []v1.Container{{Name: "main", Image: busybox, ImagePullPolicy: v1.PullNever,
						Command: []string{"sh", "-c", "exec sleep 3600"}}},
				},
			},
		},
	}
	if _, err := client.AppsV1().ReplicaSets(ns).Create(ctx, rs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.AppsV1().ReplicaSets(ns).Delete(ctx, "sleepers", metav1.DeleteOptions{}) })

	// readyPods waits for three Ready pods behind a ReplicaSet reporting
	// three available, and returns them.
	readyPods := func() []v1.Pod {
		t.Helper()
		var pods []v1.Pod
		eventually(t, 2*time.Minute, func() error {
			cur, err := client.AppsV1().ReplicaSets(ns).Get(ctx, "sleepers", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if st := cur.Status; st.Replicas != 3 || st.ReadyReplicas != 3 || st.AvailableReplicas != 3 {
				return fmt.Errorf("status %+v", st)
			}
			list, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=sleepers"})
			if err != nil {
				return err
			}
			pods = pods[:0]
			for _, p := range list.Items {
				if p.DeletionTimestamp == nil && running(&p) && ready(&p) && p.Spec.NodeName == nodeName {
					pods = append(pods, p)
				}
			}
			if len(pods) != 3 {
				return fmt.Errorf("%d of %d pods Ready on %s", len(pods), len(list.Items), nodeName)
			}
			return nil
		})
		return pods
	}
	pods := readyPods()
	victim := pods[0]
	if err := client.CoreV1().Pods(ns).Delete(ctx, victim.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Minute, func() error {
		for _, p := range readyPods() {
			if p.UID == victim.UID {
				return fmt.Errorf("deleted pod %s still counted", p.Name)
			}
		}
		return nil
	})
	out := kubectlOK(t, "", "get", "rs", "sleepers", "-n", ns, "-o", "jsonpath={.status.readyReplicas}")
	if out != "3" {
		t.Errorf("kubectl reports %q ready replicas, want 3", out)
	}
}
