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

// A DaemonSet runs one real pod on the node, placed by the scheduler.
func TestDaemonSetRunsOnTheNode(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	labels := map[string]string{"app": "daemon"}
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "daemon", Namespace: ns},
		Spec: appsv1.DaemonSetSpec{
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
	ctx := context.Background()
	if _, err := client.AppsV1().DaemonSets(ns).Create(ctx, ds, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.AppsV1().DaemonSets(ns).Delete(ctx, "daemon", metav1.DeleteOptions{}) })
	eventually(t, 90*time.Second, func() error {
		cur, err := client.AppsV1().DaemonSets(ns).Get(ctx, "daemon", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if st := cur.Status; st.DesiredNumberScheduled != 1 || st.NumberReady != 1 || st.NumberAvailable != 1 {
			pods, _ := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
			var seen []string
			for i := range pods.Items {
				p := &pods.Items[i]
				seen = append(seen, fmt.Sprintf("%s on %q: %s %v", p.Name, p.Spec.NodeName, describeStatus(p), events(t, ns, p.Name)))
			}
			return fmt.Errorf("status %+v; pods %v", st, seen)
		}
		return nil
	})
	pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 1 || pods.Items[0].Spec.NodeName != nodeName || !ready(&pods.Items[0]) {
		t.Fatalf("pods %+v", pods.Items)
	}
}
