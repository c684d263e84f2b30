package e2e

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/orca-project/orca/internal/cri"
	"github.com/orca-project/orca/internal/imagebuild"
	"github.com/orca-project/orca/internal/images"
	"github.com/orca-project/orca/internal/kubelet/cgroups"
	"github.com/orca-project/orca/internal/kubelet/stats"
)

// pressureNode starts a node of its own (index i) with node-pressure
// flags, removed when the test ends.
func pressureNode(t *testing.T, i int, args ...string) *extraNode {
	t.Helper()
	needCluster(t)
	x, err := addNodeWith(i, "", args)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(x.dir, "agent.log"))
			t.Logf("agent log of %s:\n%s", x.name, tail(string(b), 60))
		}
		x.remove()
		_ = client.CoreV1().Nodes().Delete(context.Background(), x.name, metav1.DeleteOptions{})
	})
	return x
}

// podOn is a busybox pod on a node with the given memory requests and
// limits ("" for none).
func podOn(ns, name, node, script, request, limit string) *v1.Pod {
	p := simplePod(ns, name, script)
	p.Spec.NodeName = node
	p.Spec.Tolerations = []v1.Toleration{{Key: extraNodeTaint.Key, Operator: v1.TolerationOpExists}}
	r := &p.Spec.Containers[0].Resources
	if request != "" {
		r.Requests = v1.ResourceList{v1.ResourceMemory: resource.MustParse(request), v1.ResourceCPU: resource.MustParse("50m")}
	}
	if limit != "" {
		r.Limits = v1.ResourceList{v1.ResourceMemory: resource.MustParse(limit), v1.ResourceCPU: resource.MustParse("50m")}
	}
	return p
}

// memoryAvailable is the eviction signal as the kubelet computes it:
// the machine's memory less the root cgroup's working set.
func memoryAvailable(t *testing.T) int64 {
	t.Helper()
	m, err := stats.NodeMemory("/sys/fs/cgroup", "/proc")
	if err != nil {
		t.Fatal(err)
	}
	return int64(m.Limit) - int64(m.WorkingSet)
}

func nodeCondition(t *testing.T, node string, typ v1.NodeConditionType) v1.ConditionStatus {
	t.Helper()
	n, err := client.CoreV1().Nodes().Get(context.Background(), node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range n.Status.Conditions {
		if c.Type == typ {
			return c.Status
		}
	}
	return ""
}

func evicted(p *v1.Pod) bool { return p.Status.Phase == v1.PodFailed && p.Status.Reason == "Evicted" }

func disruptionTarget(p *v1.Pod) *v1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == v1.DisruptionTarget {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// TestMemoryPressureEvictsBestEffortFirst: a node whose memory.available
// threshold is a margin below what the machine has now; a BestEffort pod
// that allocates past the margin is evicted, with upstream's status,
// message, condition and event, while the Burstable and Guaranteed pods
// stay; the node shows MemoryPressure and refuses new BestEffort pods.
// The whole ranking (BestEffort, then Burstable, then Guaranteed) is the
// eviction package's table test.
func TestMemoryPressureEvictsBestEffortFirst(t *testing.T) {
	needCluster(t)
	const margin = 800 << 20
	threshold := memoryAvailable(t) - margin
	x := pressureNode(t, 21, fmt.Sprintf("--eviction-hard=memory.available<%d", threshold))
	ns := namespace(t)
	createPod(t, podOn(ns, "guaranteed", x.name, "sleep 3600", "32Mi", "32Mi"))
	createPod(t, podOn(ns, "burstable", x.name, "sleep 3600", "32Mi", ""))
	for _, n := range []string{"guaranteed", "burstable"} {
		waitPod(t, ns, n, time.Minute, "running", running)
	}
	// dd holds its whole block in memory while the pipe it writes to is
	// never read.
	hog := podOn(ns, "besteffort", x.name, "dd if=/dev/zero bs=2000M count=1 | sleep 3600", "", "")
	hog.Spec.Containers[0].Name = "hog"
	createPod(t, hog)
	p := waitPod(t, ns, "besteffort", 90*time.Second, "evicted", evicted)
	msg := regexp.MustCompile(`^The node was low on resource: memory\. Threshold quantity: \d+(Ki|Mi|Gi)?, available: \d+(Ki|Mi|Gi)?\. Container hog was using \d+(Ki|Mi|Gi)?, request is 0, has larger consumption of memory\. $`)
	if !msg.MatchString(p.Status.Message) {
		t.Errorf("eviction message %q", p.Status.Message)
	}
	if c := disruptionTarget(p); c == nil || c.Status != v1.ConditionTrue || c.Reason != "TerminationByKubelet" || c.Message != p.Status.Message {
		t.Errorf("DisruptionTarget condition %+v", c)
	}
	eventually(t, 10*time.Second, func() error {
		if evs := events(t, ns, "besteffort"); !hasEvent(evs, "Evicted: The node was low on resource: memory.") {
			return fmt.Errorf("no Evicted event: %v", evs)
		}
		return nil
	})
	eventually(t, 20*time.Second, func() error {
		if s := nodeCondition(t, x.name, v1.NodeMemoryPressure); s != v1.ConditionTrue {
			return fmt.Errorf("MemoryPressure %q", s)
		}
		return nil
	})
	// The node lifecycle controller mirrors the condition as a taint.
	eventually(t, 20*time.Second, func() error {
		n, err := client.CoreV1().Nodes().Get(context.Background(), x.name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, taint := range n.Spec.Taints {
			if taint.Key == v1.TaintNodeMemoryPressure && taint.Effect == v1.TaintEffectNoSchedule {
				return nil
			}
		}
		return fmt.Errorf("no memory-pressure taint: %v", n.Spec.Taints)
	})
	for _, n := range []string{"guaranteed", "burstable"} {
		if p := getPod(t, ns, n); p.Status.Phase != v1.PodRunning {
			t.Errorf("%s was not to be evicted: %s", n, describeStatus(p))
		}
	}
	// Under memory pressure the node refuses new BestEffort pods only.
	createPod(t, podOn(ns, "late-besteffort", x.name, "sleep 3600", "", ""))
	p = waitPod(t, ns, "late-besteffort", 30*time.Second, "rejected", evicted)
	if want := "Pod was rejected: The node had condition: [MemoryPressure]. "; p.Status.Message != want {
		t.Errorf("rejection message %q, want %q", p.Status.Message, want)
	}
	createPod(t, podOn(ns, "late-burstable", x.name, "sleep 3600", "16Mi", ""))
	waitPod(t, ns, "late-burstable", time.Minute, "running", running)
}

// TestDiskPressureCollectsImagesFirst (about 75 s): a node whose imagefs.available
// threshold is a margin (1Gi) below the disk's free space; a pod writing
// 2000 MB puts it under disk pressure, and the unused image imported
// on the node is removed before the writing pod is evicted.
func TestDiskPressureCollectsImagesFirst(t *testing.T) {
	needCluster(t)
	const margin = 1 << 30
	x := pressureNode(t, 22, fmt.Sprintf("--eviction-hard=imagefs.available<%d", diskFree(t, workDir)-margin), "--image-minimum-gc-age=1s")
	unused := imagebuild.Image{Ref: "orca.test/unused:1", Entries: []imagebuild.Entry{imagebuild.FileEntry("/data", 0o644, make([]byte, 1<<20))}}
	tar := filepath.Join(t.TempDir(), "unused.tar")
	if err := unused.WriteFile(tar); err != nil {
		t.Fatal(err)
	}
	socket := images.SocketPath(x.dir)
	if _, err := images.Import(context.Background(), socket, tar); err != nil {
		t.Fatal(err)
	}
	has := func(ref string) bool {
		rt, err := cri.Dial(socket)
		if err != nil {
			t.Fatal(err)
		}
		defer rt.Close()
		st, err := rt.ImageStatus(context.Background(), &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: ref}})
		if err != nil {
			t.Fatal(err)
		}
		return st.Image != nil
	}
	if !has("orca.test/unused:1") {
		t.Fatal("unused image not imported")
	}
	// The collector dates an image when it first sees it, every 30 s;
	// only then does the minimum age start counting.
	time.Sleep(31 * time.Second)
	ns := namespace(t)
	createPod(t, podOn(ns, "writer", x.name, "dd if=/dev/zero of=/fill bs=1M count=2000; sleep 3600", "", ""))
	var removedBeforeEviction bool
	deadline := time.Now().Add(90 * time.Second)
	for {
		gone := !has("orca.test/unused:1")
		p := getPod(t, ns, "writer")
		if evicted(p) {
			if !removedBeforeEviction && !gone {
				t.Fatalf("writer evicted while the unused image was still there")
			}
			if !strings.HasPrefix(p.Status.Message, "The node was low on resource: ephemeral-storage. Threshold quantity: ") ||
				!strings.Contains(p.Status.Message, "Container main was using ") {
				t.Errorf("eviction message %q", p.Status.Message)
			}
			break
		}
		removedBeforeEviction = removedBeforeEviction || gone
		if time.Now().After(deadline) {
			t.Fatalf("writer not evicted (unused image removed: %v): %s", gone, describeStatus(p))
		}
		time.Sleep(500 * time.Millisecond)
	}
	if !has(busybox) {
		t.Errorf("busybox, which pods use, was collected")
	}
	// The node's status follows within its 10 s report period.
	eventually(t, 20*time.Second, func() error {
		if s := nodeCondition(t, x.name, v1.NodeDiskPressure); s != v1.ConditionTrue {
			return fmt.Errorf("DiskPressure %q after an eviction for disk", s)
		}
		return nil
	})
}

// TestContainerLogRotation: with --container-log-max-size 1Mi and
// --container-log-max-files 3, a container writing fast keeps at most
// three log files of about that size, the older ones compressed, while
// `kubectl logs` keeps returning its newest lines.
func TestContainerLogRotation(t *testing.T) {
	x := pressureNode(t, 23, "--container-log-max-size=1Mi", "--container-log-max-files=3")
	ns := namespace(t)
	// About 150 KB a second: a rotation every 10 s finds the log a
	// little over 1 MiB.
	script := `i=0; pad=$(printf '%0100d' 0); while true; do i=$((i+1)); echo "line $i $pad"; [ $((i % 100)) = 0 ] && sleep 0.1; done`
	createPod(t, podOn(ns, "chatty", x.name, script, "", ""))
	p := waitPod(t, ns, "chatty", time.Minute, "running", running)
	dir := filepath.Join(x.dir, "agent", "logs", fmt.Sprintf("%s_%s_%s", ns, p.Name, p.UID), "main")
	lastLine := func() int {
		// Between the rename and the runtime's reopen there is no
		// current file for a moment, as upstream: ask again then.
		var res kubectlResult
		for try := 0; try < 10; try++ {
			res = runKubectl(t, nil, "", "logs", "-n", ns, "chatty", "--tail=1")
			if f := strings.Fields(res.Stdout); len(f) >= 2 && f[0] == "line" {
				n, _ := strconv.Atoi(f[1])
				return n
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("kubectl logs --tail=1: %q %q", res.Stdout, res.Stderr)
		return 0
	}
	prev := lastLine()
	sawCompressed := false
	deadline := time.Now().Add(45 * time.Second)
	for time.Now().Before(deadline) {
		// The pause comes first: the container sleeps a tenth of a
		// second every 100 lines, and two reads in a row can both fall
		// into one of those sleeps.
		time.Sleep(3 * time.Second)
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var files []string
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ".tmp") {
				files = append(files, e.Name())
			}
		}
		if len(files) > 3 {
			t.Fatalf("%d log files, want at most 3: %v", len(files), files)
		}
		for _, f := range files {
			size := logSize(t, filepath.Join(dir, f))
			// Rotation runs every 10 s: a file holds up to about 10 s of
			// output past the maximum.
			if size > 4<<20 {
				t.Errorf("log file %s holds %d bytes", f, size)
			}
			if strings.HasSuffix(f, ".gz") {
				sawCompressed = true
			}
		}
		if n := lastLine(); n <= prev {
			t.Fatalf("kubectl logs went from line %d to %d", prev, n)
		} else {
			prev = n
		}
		if sawCompressed && len(files) == 3 {
			break
		}
	}
	if !sawCompressed {
		t.Errorf("no compressed rotated log after 45 s")
	}
}

// logSize is a log file's size, uncompressed.
func logSize(t *testing.T, path string) int64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		// Rotated or removed meanwhile.
		return 0
	}
	defer f.Close()
	if !strings.HasSuffix(path, ".gz") {
		st, _ := f.Stat()
		return st.Size()
	}
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	n, _ := io.Copy(io.Discard, zr)
	return n
}

// TestQoSCgroups: pods of each QoS class run in their tier's cgroup,
// made by the kubelet with the pod's limits, read back from the host's
// cgroup files, and the pod's cgroup goes with the pod.
func TestQoSCgroups(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	g := simplePod(ns, "guaranteed", "sleep 3600")
	g.Spec.Containers[0].Resources = v1.ResourceRequirements{
		Limits: v1.ResourceList{v1.ResourceCPU: resource.MustParse("200m"), v1.ResourceMemory: resource.MustParse("64Mi")},
	}
	b := simplePod(ns, "burstable", "sleep 3600")
	b.Spec.Containers[0].Resources = v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m")}}
	be := simplePod(ns, "besteffort", "sleep 3600")
	for _, p := range []*v1.Pod{g, b, be} {
		createPod(t, p)
	}
	mgr := &cgroups.Manager{Mount: "/sys/fs/cgroup"}
	read := func(ctrl, path, file string) string {
		dir := filepath.Join("/sys/fs/cgroup", ctrl, path)
		if mgr.IsV2() {
			dir = filepath.Join("/sys/fs/cgroup", path)
		}
		bs, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Errorf("%v", err)
		}
		return strings.TrimSpace(string(bs))
	}
	for _, tc := range []struct {
		name, tier string
		v1Files    map[string]string // controller/file: value
		v2Files    map[string]string
	}{
		{"guaranteed", "/kubepods",
			map[string]string{"memory/memory.limit_in_bytes": "67108864", "cpu/cpu.cfs_quota_us": "20000", "cpu/cpu.shares": "204"},
			map[string]string{"memory.max": "67108864", "cpu.max": "20000 100000"}},
		{"burstable", "/kubepods/burstable",
			map[string]string{"cpu/cpu.shares": "102", "cpu/cpu.cfs_quota_us": "-1"},
			map[string]string{"cpu.max": "max 100000", "memory.max": "max"}},
		{"besteffort", "/kubepods/besteffort",
			map[string]string{"cpu/cpu.shares": "2"},
			map[string]string{"cpu.weight": "1"}},
	} {
		p := waitPod(t, ns, tc.name, time.Minute, "running", running)
		path := tc.tier + "/pod" + string(p.UID)
		files := tc.v1Files
		if mgr.IsV2() {
			files = tc.v2Files
		}
		for k, want := range files {
			ctrl, file, ok := strings.Cut(k, "/")
			if !ok {
				ctrl, file = "", k
			}
			if got := read(ctrl, path, file); got != want {
				t.Errorf("%s: %s/%s = %q, want %q", tc.name, path, file, got, want)
			}
		}
		// The container's processes are in the pod's cgroup.
		out := kubectlOK(t, "", "exec", "-n", ns, tc.name, "--", "cat", "/proc/1/cgroup")
		if !strings.Contains(out, path+"/") && !mgr.IsV2() {
			t.Errorf("%s: container's cgroups are not under %s:\n%s", tc.name, path, out)
		}
	}
	if !mgr.IsV2() {
		if s, _ := strconv.Atoi(read("cpu", "/kubepods/burstable", "cpu.shares")); s < 102 {
			t.Errorf("burstable tier cpu.shares %d: less than its pod's 102", s)
		}
		if got := read("cpu", "/kubepods/besteffort", "cpu.shares"); got != "2" {
			t.Errorf("besteffort tier cpu.shares %s", got)
		}
	}
	p := getPod(t, ns, "burstable")
	kubectlOK(t, "", "delete", "pod", "-n", ns, "burstable", "--grace-period=0", "--force")
	dir := filepath.Join("/sys/fs/cgroup", "memory", "/kubepods/burstable/pod"+string(p.UID))
	if mgr.IsV2() {
		dir = filepath.Join("/sys/fs/cgroup", "/kubepods/burstable/pod"+string(p.UID))
	}
	eventually(t, 30*time.Second, func() error {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			return fmt.Errorf("%s still there (%v)", dir, err)
		}
		return nil
	})
}

// diskFree is the available bytes of the file system holding dir.
func diskFree(t *testing.T, dir string) int64 {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Bavail) * st.Bsize
}
