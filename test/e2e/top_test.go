package e2e

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/orca-project/orca/internal/images"
)

const memhogImage = "orca.test/memhog:e2e"

// TestTop: a pod spinning under a half-core limit and a pod holding
// 64 MiB are measured by the kubelet and scraped by the server's
// metrics API; `kubectl top pods --containers` and `kubectl top nodes`
// show what the pods' cgroups on the host say, within 10%. The kubelet's
// /stats/summary and /metrics/resource answer a caller allowed
// nodes/stats and nodes/metrics, and refuse one that is not.
func TestTop(t *testing.T) {
	tar, err := goImageTar("memhog", memhogImage)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := images.Import(context.Background(), images.SocketPath(nodeDir), tar); err != nil {
		t.Fatalf("import memhog: %v", err)
	}
	ns := namespace(t)
	busy := simplePod(ns, "busy", "while :; do :; done")
	busy.Labels = map[string]string{"app": "top", "role": "cpu"}
	busy.Spec.Containers[0].Name = "spin"
	busy.Spec.Containers[0].Resources.Limits = v1.ResourceList{v1.ResourceCPU: resource.MustParse("500m")}
	hog := simplePod(ns, "hog", "")
	hog.Labels = map[string]string{"app": "top", "role": "memory"}
	hog.Spec.Containers[0] = v1.Container{Name: "hog", Image: memhogImage, ImagePullPolicy: v1.PullNever, Args: []string{"64"}}
	createPod(t, busy)
	createPod(t, hog)
	var ids = map[string]string{}
	for _, p := range []struct{ pod, container string }{{"busy", "spin"}, {"hog", "hog"}} {
		got := waitPod(t, ns, p.pod, time.Minute, "running", running)
		ids[p.container] = strings.TrimPrefix(containerStatus(got, p.container).ContainerID, "containerd://")
	}
	spinCg := hostCgroup(t, ids["spin"])
	hogCg := hostCgroup(t, ids["hog"])

	// The spinning container's own rate, measured on the host meanwhile.
	hostCPU := cpuRate(t, spinCg, 10*time.Second)
	if hostCPU < 0.15 {
		t.Fatalf("the spinning container used %.2f cores on the host; too little to compare", hostCPU)
	}

	// Metrics for a pod need two scrapes of it (15 s apart).
	var rows []map[string]string
	eventually(t, 90*time.Second, func() error {
		res := runKubectl(t, nil, "", "top", "pods", "--containers", "-n", ns)
		if res.Code != 0 {
			return fmt.Errorf("kubectl top pods: %s", res.Stderr)
		}
		rows = table(res.Stdout)
		if len(rows) != 2 {
			return fmt.Errorf("want a row per container:\n%s", res.Stdout)
		}
		return nil
	})
	for _, r := range rows {
		switch {
		case r["POD"] == "busy" && r["NAME"] == "spin":
			within(t, "spin CPU (cores)", quantity(t, r["CPU(cores)"]).AsApproximateFloat64(), hostCPU, 0.10)
		case r["POD"] == "hog" && r["NAME"] == "hog":
			mem := float64(quantity(t, r["MEMORY(bytes)"]).Value())
			if mem < 64<<20 {
				t.Errorf("hog shows %s, less than the 64 MiB it holds", r["MEMORY(bytes)"])
			}
			within(t, "hog memory (bytes)", mem, float64(workingSet(t, hogCg)), 0.10)
		default:
			t.Errorf("unexpected row %v", r)
		}
	}

	// A label selector and all namespaces, as the HPA and users list.
	out := kubectlOK(t, "", "top", "pods", "-n", ns, "-l", "role=memory")
	if got := table(out); len(got) != 1 || got[0]["NAME"] != "hog" {
		t.Errorf("top pods -l role=memory:\n%s", out)
	}
	out = kubectlOK(t, "", "top", "pods", "-A")
	found := false
	for _, r := range table(out) {
		found = found || (r["NAMESPACE"] == ns && r["NAME"] == "busy")
	}
	if !found {
		t.Errorf("top pods -A has no %s/busy:\n%s", ns, out)
	}

	// The node: its working set as its root cgroup says (the machine's
	// memory moves under other work, so a few tries), and CPU at least
	// the spinning pod's.
	eventually(t, 60*time.Second, func() error {
		res := runKubectl(t, nil, "", "top", "nodes")
		if res.Code != 0 {
			return fmt.Errorf("kubectl top nodes: %s", res.Stderr)
		}
		for _, r := range table(res.Stdout) {
			if r["NAME"] != nodeName {
				continue
			}
			if cpu := quantity(t, r["CPU(cores)"]).AsApproximateFloat64(); cpu < 0.9*hostCPU {
				return fmt.Errorf("node CPU %v is below the spinning pod's %.2f", cpu, hostCPU)
			}
			mem, host := float64(quantity(t, r["MEMORY(bytes)"]).Value()), float64(workingSet(t, "/"))
			if mem < 0.9*host || mem > 1.1*host {
				return fmt.Errorf("node memory %s, root cgroup working set %.0f", r["MEMORY(bytes)"], host)
			}
			return nil
		}
		return fmt.Errorf("no row of %s:\n%s", nodeName, res.Stdout)
	})

	// The kubelet's own endpoints, as a caller allowed to read them and
	// as one that is not.
	reader := serviceAccountToken(t, ns, "stats-reader")
	nobody := serviceAccountToken(t, ns, "nobody")
	bindNodeReader(t, ns, "stats-reader")
	code, body := kubeletGet(t, nobody, "/stats/summary")
	if want := fmt.Sprintf("Forbidden (user=system:serviceaccount:%s:nobody, verb=get, resource=nodes, subresource(s)=[stats])", ns); code != http.StatusForbidden || !strings.Contains(body, want) {
		t.Errorf("/stats/summary without nodes/stats: %d %q, want 403 %q", code, body, want)
	}
	if code, body := kubeletGet(t, nobody, "/metrics/resource"); code != http.StatusForbidden {
		t.Errorf("/metrics/resource without nodes/metrics: %d %q, want 403", code, body)
	}
	code, body = kubeletGet(t, reader, "/stats/summary")
	if code != http.StatusOK {
		t.Fatalf("/stats/summary: %d %s", code, body)
	}
	var summary statsapi.Summary
	if err := json.Unmarshal([]byte(body), &summary); err != nil {
		t.Fatalf("/stats/summary: %v", err)
	}
	if summary.Node.NodeName != nodeName || summary.Node.CPU == nil || summary.Node.Memory == nil || summary.Node.Fs == nil {
		t.Errorf("summary node: %+v", summary.Node)
	}
	var hogStats *statsapi.PodStats
	for i, p := range summary.Pods {
		if p.PodRef.Namespace == ns && p.PodRef.Name == "hog" {
			hogStats = &summary.Pods[i]
		}
	}
	switch {
	case hogStats == nil:
		t.Errorf("summary has no pod %s/hog", ns)
	case len(hogStats.Containers) != 1 || hogStats.Containers[0].Memory == nil || *hogStats.Containers[0].Memory.WorkingSetBytes < 64<<20:
		t.Errorf("summary of hog's containers: %+v", hogStats.Containers)
	case hogStats.Network == nil || hogStats.Network.Name != "eth0" || hogStats.Containers[0].Rootfs == nil || hogStats.Containers[0].Logs == nil:
		t.Errorf("summary of hog lacks network, rootfs or logs: %+v", hogStats)
	}
	code, body = kubeletGet(t, reader, "/metrics/resource")
	if want := fmt.Sprintf(`container_memory_working_set_bytes{container="hog",namespace="%s",pod="hog"} `, ns); code != http.StatusOK || !strings.Contains(body, want) {
		t.Errorf("/metrics/resource: %d, want a line %q in:\n%s", code, want, body)
	}
	code, body = kubeletGet(t, reader, "/metrics/cadvisor")
	if want := fmt.Sprintf(`container_memory_working_set_bytes{container="hog",id="%s",`, hogCgID(hogCg)); code != http.StatusOK || !strings.Contains(body, want) {
		t.Errorf("/metrics/cadvisor: %d, want %q in:\n%s", code, want, body)
	}
}

// table reads kubectl's printed table into rows keyed by column header.
func table(out string) []map[string]string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 2 {
		return nil
	}
	head := strings.Fields(lines[0])
	var rows []map[string]string
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		r := map[string]string{}
		for i := range head {
			if i < len(f) {
				r[head[i]] = f[i]
			}
		}
		rows = append(rows, r)
	}
	return rows
}

func quantity(t *testing.T, s string) *resource.Quantity {
	t.Helper()
	q, err := resource.ParseQuantity(s)
	if err != nil {
		t.Fatalf("quantity %q: %v", s, err)
	}
	return &q
}

func within(t *testing.T, what string, got, want, tolerance float64) {
	t.Helper()
	if got < want*(1-tolerance) || got > want*(1+tolerance) {
		t.Errorf("%s: kubectl top shows %.4g, the host's cgroup %.4g (more than %.0f%% apart)", what, got, want, tolerance*100)
	} else {
		t.Logf("%s: kubectl top shows %.4g, the host's cgroup %.4g", what, got, want)
	}
}

// cgroupV2 reports whether the host has the unified hierarchy only.
func cgroupV2() bool {
	_, err := os.Stat("/sys/fs/cgroup/cgroup.controllers")
	return err == nil
}

// hostCgroup finds the container's memory cgroup directory on the host,
// wherever under kubepods its pod's cgroup is.
func hostCgroup(t *testing.T, id string) string {
	t.Helper()
	root := "/sys/fs/cgroup/memory/kubepods"
	if cgroupV2() {
		root = "/sys/fs/cgroup/kubepods"
	}
	var found string
	_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && strings.Contains(d.Name(), id) {
			found = path
			return filepath.SkipAll
		}
		return nil
	})
	if found == "" {
		t.Fatalf("no cgroup of container %s under %s", id, root)
	}
	return found
}

// hogCgID is the cgroup path as cadvisor names it (the id label).
func hogCgID(dir string) string {
	if cgroupV2() {
		return strings.TrimPrefix(dir, "/sys/fs/cgroup")
	}
	return strings.TrimPrefix(dir, "/sys/fs/cgroup/memory")
}

func readNumber(t *testing.T, path, key string) uint64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if (key == "" && len(f) == 1) || (len(f) == 2 && f[0] == key) {
			n, err := strconv.ParseUint(f[len(f)-1], 10, 64)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			return n
		}
	}
	t.Fatalf("%s has no %q", path, key)
	return 0
}

// workingSet is usage less inactive file pages, as the kubelet reports
// it; dir is a memory cgroup directory, or "/" for the root.
func workingSet(t *testing.T, dir string) uint64 {
	t.Helper()
	if dir == "/" {
		if cgroupV2() {
			t.Skip("the node's working set on cgroup v2 comes from /proc/meminfo")
		}
		dir = "/sys/fs/cgroup/memory"
	}
	var usage, inactive uint64
	if cgroupV2() {
		usage, inactive = readNumber(t, filepath.Join(dir, "memory.current"), ""), readNumber(t, filepath.Join(dir, "memory.stat"), "inactive_file")
	} else {
		usage, inactive = readNumber(t, filepath.Join(dir, "memory.usage_in_bytes"), ""), readNumber(t, filepath.Join(dir, "memory.stat"), "total_inactive_file")
	}
	if inactive > usage {
		return 0
	}
	return usage - inactive
}

// cpuRate is the cores the container used over d.
func cpuRate(t *testing.T, memoryDir string, d time.Duration) float64 {
	t.Helper()
	read := func() uint64 {
		if cgroupV2() {
			return readNumber(t, filepath.Join(memoryDir, "cpu.stat"), "usage_usec") * 1000
		}
		return readNumber(t, filepath.Join(strings.Replace(memoryDir, "/memory/", "/cpuacct/", 1), "cpuacct.usage"), "")
	}
	start, a := time.Now(), read()
	time.Sleep(d)
	b, end := read(), time.Now()
	return float64(b-a) / float64(end.Sub(start).Nanoseconds())
}

func serviceAccountToken(t *testing.T, ns, name string) string {
	t.Helper()
	ctx := context.Background()
	if _, err := client.CoreV1().ServiceAccounts(ns).Create(ctx, &v1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, err := client.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

// bindNodeReader lets the service account read the nodes' stats and
// metrics, as a monitoring agent is let.
func bindNodeReader(t *testing.T, ns, sa string) {
	t.Helper()
	ctx := context.Background()
	name := ns + "-node-reader"
	_, err := client.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules:      []rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"nodes/stats", "nodes/metrics"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.RbacV1().ClusterRoles().Delete(ctx, name, metav1.DeleteOptions{}) })
	_, err = client.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: sa}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.RbacV1().ClusterRoleBindings().Delete(ctx, name, metav1.DeleteOptions{}) })
}

// kubeletGet calls the test node's kubelet with a bearer token.
func kubeletGet(t *testing.T, token, path string) (int, string) {
	t.Helper()
	code, body, err := kubeletTry(token, path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return code, body
}

func kubeletTry(token, path string) (int, string, error) {
	c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	req, _ := http.NewRequest(http.MethodGet, "https://"+net.JoinHostPort(bridgeIP, strconv.Itoa(kubeletPort))+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}
