package e2e

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
	"k8s.io/utils/ptr"
)

// A StatefulSet of three real pods comes up in order, each pod Ready
// before the next is created, and each container's hostname is its
// pod's name.
func TestStatefulSetComesUpInOrderWithStableHostnames(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	ctx := context.Background()
	labels := map[string]string{"app": "web"}
	svc := &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec:       v1.ServiceSpec{ClusterIP: v1.ClusterIPNone, Selector: labels, Ports: []v1.ServicePort{{Name: "web", Port: 80}}},
	}
	if _, err := client.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	w, err := client.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	var mu sync.Mutex
	var order []string
	go func() {
		seen := map[string]bool{}
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*v1.Pod)
			if !ok {
				continue
			}
			mu.Lock()
			if ev.Type == watch.Added {
				order = append(order, "added "+p.Name)
			}
			if ready(p) && !seen[p.Name] {
				seen[p.Name] = true
				order = append(order, "ready "+p.Name)
			}
			mu.Unlock()
		}
	}()

	set := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: appsv1.StatefulSetSpec{
			Replicas:    ptr.To[int32](3),
			ServiceName: "web",
			Selector:    &metav1.LabelSelector{MatchLabels: labels},
			Template: v1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: v1.PodSpec{
					TerminationGracePeriodSeconds: ptr.To[int64](1),
					Containers: []v1.Container{{Name: "main", Image: busybox, ImagePullPolicy: v1.PullNever,
						Command: []string{"sh", "-c", "exec sleep 3600"},
						ReadinessProbe: &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"true"}}},
							PeriodSeconds: 1}}},
				},
			},
		},
	}
	if _, err := client.AppsV1().StatefulSets(ns).Create(ctx, set, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.AppsV1().StatefulSets(ns).Delete(ctx, "web", metav1.DeleteOptions{}) })
	eventually(t, 120*time.Second, func() error {
		cur, err := client.AppsV1().StatefulSets(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if st := cur.Status; st.ReadyReplicas != 3 || st.CurrentRevision == "" || st.CurrentRevision != st.UpdateRevision {
			p, _ := client.CoreV1().Pods(ns).Get(ctx, fmt.Sprintf("web-%d", st.ReadyReplicas), metav1.GetOptions{})
			return fmt.Errorf("status %+v; next pod: %s", st, describeStatus(p))
		}
		return nil
	})

	mu.Lock()
	got := strings.Join(order, ", ")
	mu.Unlock()
	pos := func(s string) int { return strings.Index(got, s) }
	for i := 1; i < 3; i++ {
		prev, next := fmt.Sprintf("ready web-%d", i-1), fmt.Sprintf("added web-%d", i)
		if pos(prev) < 0 || pos(next) < 0 || pos(prev) > pos(next) {
			t.Fatalf("want %q before %q; pods: %s", prev, next, got)
		}
	}
	for i := 0; i < 3; i++ {
		name := fmt.Sprintf("web-%d", i)
		if out := strings.TrimSpace(kubectlOK(t, "", "-n", ns, "exec", name, "--", "hostname")); out != name {
			t.Errorf("hostname in %s: %q", name, out)
		}
	}
	// The pods find each other by their stable names through cluster DNS.
	web2, err := client.CoreV1().Pods(ns).Get(ctx, "web-2", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// busybox nslookup asks the name as written (no search list).
	for _, name := range []string{"web-2.web." + ns + ".svc.cluster.local"} {
		eventually(t, 30*time.Second, func() error {
			r := runKubectl(t, nil, "", "-n", ns, "exec", "web-0", "--", "nslookup", "-type=a", name)
			if r.Code != 0 || !strings.Contains(r.Stdout, "Address: "+web2.Status.PodIP) {
				return fmt.Errorf("nslookup %s from web-0, want %s: %s %s", name, web2.Status.PodIP, r.Stdout, r.Stderr)
			}
			return nil
		})
	}
}
