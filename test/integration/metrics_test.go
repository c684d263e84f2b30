package integration

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"
)

// metricResolution is the shared server's scrape period.
const metricResolution = 2 * time.Second

// metricsKubelet serves /metrics/resource for one node: every scrape is a
// new point 10 s after the last, in which the node used 1.5 cores, the
// containers a and b of pod web 0.5 and 0.25, and worker's one
// container 0.1; memory stays put.
type metricsKubelet struct {
	mu      sync.Mutex
	scrapes int
	ns      string
}

func (k *metricsKubelet) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/metrics/resource" {
		http.NotFound(w, r)
		return
	}
	k.mu.Lock()
	k.scrapes++
	n := float64(k.scrapes)
	k.mu.Unlock()
	ts := time.Unix(1700000000, 0).Add(time.Duration(n) * 10 * time.Second).UnixMilli()
	start := 1699990000
	var b strings.Builder
	fmt.Fprintf(&b, "node_cpu_usage_seconds_total %g %d\nnode_memory_working_set_bytes %d %d\n", 100+n*15, ts, 2<<30, ts)
	for _, c := range []struct {
		pod, container string
		rate           float64
		mem            int
	}{{"web", "a", 0.5, 64 << 20}, {"web", "b", 0.25, 32 << 20}, {"worker", "main", 0.1, 16 << 20}} {
		labels := fmt.Sprintf(`{container=%q,namespace=%q,pod=%q}`, c.container, k.ns, c.pod)
		fmt.Fprintf(&b, "container_cpu_usage_seconds_total%s %g %d\n", labels, 1+n*10*c.rate, ts)
		fmt.Fprintf(&b, "container_memory_working_set_bytes%s %d %d\n", labels, c.mem, ts)
		fmt.Fprintf(&b, "container_start_time_seconds%s %d\n", labels, start)
	}
	_, _ = w.Write([]byte(b.String()))
}

// The resource metrics API serves what the server scrapes from the
// kubelets: rates between the last two points, selectors on lists,
// `kubectl top`, and read access for whoever may view a namespace.
func TestResourceMetricsAPI(t *testing.T) {
	ctx := context.Background()
	ns := "metrics-api"
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}) })
	kubelet := httptest.NewTLSServer(&metricsKubelet{ns: ns})
	t.Cleanup(kubelet.Close)
	_, portText, _ := net.SplitHostPort(kubelet.Listener.Addr().String())
	port, _ := strconv.Atoi(portText)

	node, err := client.CoreV1().Nodes().Create(ctx, &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "metrics-node", Labels: map[string]string{"tier": "metrics"}},
		Spec:       corev1.NodeSpec{Taints: []corev1.Taint{{Key: "orca.test/fake-node", Effect: corev1.TaintEffectNoSchedule}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.CoreV1().Nodes().Delete(ctx, node.Name, metav1.DeleteOptions{}) })
	// The control plane's controllers may write the new Node first (its
	// pod range, its conditions): a conflict is retried on a fresh read.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := client.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}}
		cur.Status.DaemonEndpoints.KubeletEndpoint.Port = int32(port)
		cur.Status.Capacity = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi")}
		cur.Status.Allocatable = cur.Status.Capacity
		_, err = client.CoreV1().Nodes().UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for name, app := range map[string]string{"web": "frontend", "worker": "backend"} {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": app}},
			Spec: corev1.PodSpec{
				Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
				Containers:  []corev1.Container{{Name: "main", Image: "busybox"}},
			},
		}
		// The first pods wait for the namespace's default service account.
		eventually(t, 30*time.Second, func() error {
			_, err := client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
			return err
		})
	}

	mc := metricsclient.NewForConfigOrDie(restCfg)
	eventually(t, 30*time.Second, func() error {
		list, err := mc.MetricsV1beta1().PodMetricses(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		if len(list.Items) != 2 {
			return fmt.Errorf("%d pod metrics", len(list.Items))
		}
		return nil
	})

	web, err := mc.MetricsV1beta1().PodMetricses(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if web.Window.Duration != 10*time.Second || web.Labels["app"] != "frontend" || len(web.Containers) != 2 {
		t.Errorf("web: window %v labels %v containers %+v", web.Window.Duration, web.Labels, web.Containers)
	}
	for i, want := range []struct{ name, cpu, mem string }{{"a", "500m", "64Mi"}, {"b", "250m", "32Mi"}} {
		if i >= len(web.Containers) {
			break
		}
		c := web.Containers[i]
		if c.Name != want.name || c.Usage.Cpu().String() != want.cpu || c.Usage.Memory().String() != want.mem {
			t.Errorf("container %d: %s cpu %s memory %s, want %s %s %s", i, c.Name, c.Usage.Cpu(), c.Usage.Memory(), want.name, want.cpu, want.mem)
		}
	}
	if _, err := mc.MetricsV1beta1().PodMetricses("default").Get(ctx, "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("web in another namespace: %v, want NotFound", err)
	}
	list, err := mc.MetricsV1beta1().PodMetricses(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=backend"})
	if err != nil || len(list.Items) != 1 || list.Items[0].Name != "worker" {
		t.Errorf("by label app=backend: %v %+v", err, list)
	}
	list, err = mc.MetricsV1beta1().PodMetricses(ns).List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=web"})
	if err != nil || len(list.Items) != 1 || list.Items[0].Name != "web" {
		t.Errorf("by field metadata.name=web: %v %+v", err, list)
	}
	nm, err := mc.MetricsV1beta1().NodeMetricses().Get(ctx, "metrics-node", metav1.GetOptions{})
	if err != nil || nm.Usage.Cpu().String() != "1500m" || nm.Usage.Memory().String() != "2Gi" || nm.Labels["tier"] != "metrics" {
		t.Errorf("node metrics: %v %+v", err, nm)
	}

	out := mustKubectl(t, "", "top", "pods", "-n", ns, "--containers", "-l", "app=frontend")
	want := "POD NAME CPU(cores) MEMORY(bytes)\nweb a 500m 64Mi\nweb b 250m 32Mi"
	if got := squeeze(out); got != want {
		t.Errorf("kubectl top pods --containers:\n%s\nwant\n%s", got, want)
	}
	out = mustKubectl(t, "", "top", "node", "metrics-node")
	if got := squeeze(out); !strings.HasPrefix(got, "NAME CPU(cores) CPU(%) MEMORY(bytes) MEMORY(%)\nmetrics-node 1500m 37% 2048Mi 25%") {
		t.Errorf("kubectl top node:\n%s", got)
	}
	out = mustKubectl(t, "", "get", "podmetrics.metrics.k8s.io", "-n", ns)
	if got := squeeze(out); got != "NAME CPU MEMORY WINDOW\nweb 750m 96Mi 10s\nworker 100m 16Mi 10s" {
		t.Errorf("kubectl get podmetrics:\n%s", got)
	}

	// view, and so edit and admin, include the metrics through
	// system:aggregated-metrics-reader.
	if _, err := client.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "viewer"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "metrics-viewer"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, func() error {
		res := runKubectl(t, "", "auth", "can-i", "list", "pods.metrics.k8s.io", "-n", ns, "--as", "metrics-viewer")
		if strings.TrimSpace(res.Stdout) != "yes" {
			return fmt.Errorf("can-i list pods.metrics.k8s.io as a viewer: %s %s", res.Stdout, res.Stderr)
		}
		return nil
	})
	if res := runKubectl(t, "", "top", "pods", "-n", "default", "--as", "metrics-viewer"); res.Code == 0 || !strings.Contains(res.Stderr, "forbidden") {
		t.Errorf("top pods where the user may not view: exit %d %s", res.Code, res.Stderr)
	}
}

func squeeze(out string) string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		lines = append(lines, strings.Join(strings.Fields(l), " "))
	}
	return strings.Join(lines, "\n")
}
