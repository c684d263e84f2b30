package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The killall test's own machine: a network namespace with an address on
// its loopback interface for the node, so that the node's bridge, routes
// and tables (and their removal) never touch the harness's cluster in the
// machine's namespace.
const (
	killallNetns  = "orcae2e-killall"
	killallNodeIP = "10.123.0.2"
)

// TestKillall runs `orca server` (the real binary, with its in-process
// agent) in a network namespace of its own, starts a pod on it, and checks
// that `orca killall` leaves nothing of it: no process, no mount under the
// data directory, no link but loopback, no nftables table, no route of
// Orca's, no pod network namespace. It does so twice: with the node's
// containerd answering, so that the pod goes through CRI, and after the
// server and containerd were killed, so that killall has the pod's
// processes, mounts and network namespace to clean up itself.
func TestKillall(t *testing.T) {
	needCluster(t)
	for _, tool := range []string{"nsenter", "ip", "nft", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	dir := filepath.Join(workDir, "killall")
	orca := buildOrca(t, filepath.Join(dir, "bin"))

	t.Run("through CRI", func(t *testing.T) {
		n := startKillallNode(t, orca, filepath.Join(dir, "cri"))
		out := n.killall(t)
		if !strings.Contains(out, "1 pod sandboxes removed through CRI") {
			t.Errorf("the pod's sandbox was not removed through CRI")
		}
		n.checkClean(t)
	})
	t.Run("containerd gone", func(t *testing.T) {
		n := startKillallNode(t, orca, filepath.Join(dir, "nocri"))
		// The server first, or its agent would start containerd again.
		_ = n.server.Process.Kill()
		<-n.serverDone
		b, err := os.ReadFile(filepath.Join(n.data, "agent", "containerd", "containerd.pid"))
		if err != nil {
			t.Fatal(err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			t.Fatal(err)
		}
		_ = syscall.Kill(pid, syscall.SIGKILL)
		eventually(t, 10*time.Second, func() error {
			if _, err := os.Stat(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil {
				if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); len(b) > 0 {
					return fmt.Errorf("containerd %d still runs", pid)
				}
			}
			return nil
		})
		out := n.killall(t)
		if !strings.Contains(out, "0 pod sandboxes removed through CRI") {
			t.Errorf("a sandbox was removed through CRI with containerd gone")
		}
		// The shim, the pause process and the pod's sleep at least.
		if killed := countOf(out, "processes killed"); killed < 3 {
			t.Errorf("%d processes killed, want the shim and the pod's processes", killed)
		}
		if countOf(out, "pod network namespaces removed") < 1 {
			t.Errorf("the pod's network namespace was not removed")
		}
		n.checkClean(t)
	})
}

// killallNode is an `orca server` in the test's network namespace.
type killallNode struct {
	orca, data     string
	server         *exec.Cmd
	serverDone     chan struct{}
	podNetnsBefore []string
}

func inKillallNetns(args ...string) *exec.Cmd {
	return exec.Command("nsenter", append([]string{"--net=/run/netns/" + killallNetns}, args...)...)
}

// startKillallNode makes the namespace, starts the server in it with its
// data in dir, and runs a pod on it. Its cleanup kills whatever is left
// and removes the namespace.
func startKillallNode(t *testing.T, orca, dir string) *killallNode {
	t.Helper()
	n := &killallNode{orca: orca, data: filepath.Join(dir, "data"), serverDone: make(chan struct{})}
	if err := os.MkdirAll(n.data, 0o755); err != nil {
		t.Fatal(err)
	}
	n.podNetnsBefore = cniNetns()
	_ = runCmd("ip", "netns", "del", killallNetns)
	for _, c := range [][]string{
		{"ip", "netns", "add", killallNetns},
		{"ip", "-n", killallNetns, "link", "set", "lo", "up"},
		{"ip", "-n", killallNetns, "addr", "add", killallNodeIP + "/32", "dev", "lo"},
	} {
		if err := runCmd(c...); err != nil {
			t.Fatal(err)
		}
	}

	logf, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		t.Fatal(err)
	}
	n.server = inKillallNetns(orca, "server", "--data-dir", n.data, "--node-name", "killall-node",
		"--node-ip", killallNodeIP, "--advertise-address", killallNodeIP,
		"--https-listen-port", "6443", "--cluster-dns-port", "-1", "--etcd-disable-snapshots",
		"--eviction-hard", "nodefs.available<1Gi", "--healthz-port", "0")
	n.server.Stdout, n.server.Stderr = logf, logf
	// The server goes with the test binary, however that ends; containerd
	// and the pods are the cleanup's.
	n.server.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := n.server.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = n.server.Wait(); logf.Close(); close(n.serverDone) }()
	t.Cleanup(func() {
		// Whatever the test got to: nothing of the data directory may
		// outlive it, nor the namespace.
		_ = inKillallNetns(orca, "killall", "--data-dir", n.data).Run()
		select {
		case <-n.serverDone:
		case <-time.After(10 * time.Second):
			_ = n.server.Process.Kill()
		}
		_ = runCmd("ip", "netns", "del", killallNetns)
	})
	serverLog := func() string {
		b, _ := os.ReadFile(filepath.Join(dir, "server.log"))
		return tail(string(b), 60)
	}

	waitFor(t, 3*time.Minute, serverLog, func() error {
		out, err := n.kubectl("get", "node", "killall-node", "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status}`)
		if err != nil {
			return err
		}
		if out != "True" {
			return fmt.Errorf("node Ready=%q", out)
		}
		return nil
	})
	if out, err := exec.Command(orca, "images", "import", "--data-dir", n.data, filepath.Join(workDir, "busybox.tar")).CombinedOutput(); err != nil {
		t.Fatalf("import busybox: %v\n%s", err, out)
	}
	// The default service account comes a moment after the namespace.
	waitFor(t, time.Minute, serverLog, func() error {
		_, err := n.kubectl("run", "sleeper", "--image="+busybox, "--image-pull-policy=Never", "--restart=Never", "--", "sleep", "3600")
		if err != nil && strings.Contains(err.Error(), "AlreadyExists") {
			return nil
		}
		return err
	})
	waitFor(t, 2*time.Minute, serverLog, func() error {
		out, err := n.kubectl("get", "pod", "sleeper", "-o", "jsonpath={.status.phase}")
		if err != nil {
			return err
		}
		if out != "Running" {
			return fmt.Errorf("pod phase %q", out)
		}
		return nil
	})

	// What killall must take down is there, or the test proves nothing.
	if procs := procsNaming(n.data); len(procs) < 3 {
		t.Errorf("before killall: processes of the data directory: %q", procs)
	}
	if m := mountsUnder(t, n.data); len(m) == 0 {
		t.Error("before killall: nothing mounted under the data directory")
	}
	if links := netnsLinks(t); !slices.Contains(links, "orca0") || !slices.Contains(links, "orca-svc") {
		t.Errorf("before killall: links %q", links)
	}
	if tables := netnsOutput(t, "nft", "list", "tables"); !strings.Contains(tables, "orca-podnet") || !strings.Contains(tables, "orca-proxy") {
		t.Errorf("before killall: tables %q", tables)
	}
	if routes := netnsOutput(t, "ip", "-4", "route", "show", "proto", "199"); strings.TrimSpace(routes) == "" {
		t.Error("before killall: no routes of protocol 199")
	}
	if added := newNetns(n.podNetnsBefore, cniNetns()); len(added) == 0 {
		t.Error("before killall: the pod has no network namespace in /run/netns")
	}
	return n
}

func (n *killallNode) kubectl(args ...string) (string, error) {
	var out, errb bytes.Buffer
	cmd := inKillallNetns(append([]string{n.orca, "kubectl", "--kubeconfig", filepath.Join(n.data, "kubeconfig")}, args...)...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("kubectl %s: %v: %s", strings.Join(args, " "), err, errb.String())
	}
	return out.String(), nil
}

// killall runs `orca killall` in the namespace and returns its report.
func (n *killallNode) killall(t *testing.T) string {
	t.Helper()
	out, err := inKillallNetns(n.orca, "killall", "--data-dir", n.data).CombinedOutput()
	t.Logf("orca killall:\n%s", out)
	if err != nil {
		t.Fatalf("orca killall: %v", err)
	}
	return string(out)
}

// checkClean asserts that nothing of the node is left, and that killall
// run again finds nothing to do.
func (n *killallNode) checkClean(t *testing.T) {
	t.Helper()
	select {
	case <-n.serverDone:
	case <-time.After(10 * time.Second):
		t.Error("the server still runs after killall")
	}
	if procs := procsNaming(n.data); len(procs) > 0 {
		t.Errorf("processes left: %q", procs)
	}
	if m := mountsUnder(t, n.data); len(m) > 0 {
		t.Errorf("mounts left under the data directory: %q", m)
	}
	if links := netnsLinks(t); !slices.Equal(links, []string{"lo"}) {
		t.Errorf("links left in the namespace: %q", links)
	}
	if tables := netnsOutput(t, "nft", "list", "tables"); strings.TrimSpace(tables) != "" {
		t.Errorf("nftables tables left: %q", tables)
	}
	if routes := netnsOutput(t, "ip", "-4", "route", "show", "proto", "199"); strings.TrimSpace(routes) != "" {
		t.Errorf("routes of protocol 199 left: %q", routes)
	}
	if added := newNetns(n.podNetnsBefore, cniNetns()); len(added) > 0 {
		t.Errorf("pod network namespaces left: %q", added)
	}
	out, err := inKillallNetns(n.orca, "killall", "--data-dir", n.data).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "0 processes killed") || !strings.Contains(string(out), "0 network links deleted") {
		t.Errorf("second killall: %v\n%s", err, out)
	}
}

// countOf reads the count of a line of killall's report.
func countOf(report, what string) int {
	for _, l := range strings.Split(report, "\n") {
		if n, rest, ok := strings.Cut(l, " "); ok && rest == what {
			c, _ := strconv.Atoi(n)
			return c
		}
	}
	return -1
}

// buildOrca builds orca and orca-pause (which the agent makes its pause
// image from, next to orca) into dir.
func buildOrca(t *testing.T, dir string) string {
	t.Helper()
	ldflags, err := exec.Command("bash", "../../hack/ldflags.sh").Output()
	if err != nil {
		t.Fatalf("hack/ldflags.sh: %v", err)
	}
	// orca as `make build` builds it, so that the packages the test
	// binary was compiled from come from the build cache and only the
	// link is new; orca-pause static, as it runs in the sandbox image.
	for _, b := range []struct{ out, pkg, cgo string }{
		{filepath.Join(dir, "orca"), "github.com/orca-project/orca/cmd/orca", ""},
		{filepath.Join(dir, "orca-pause"), "github.com/orca-project/orca/cmd/orca-pause", "CGO_ENABLED=0"},
	} {
		cmd := exec.Command("go", "build", "-ldflags", strings.TrimSpace(string(ldflags)), "-o", b.out, b.pkg)
		cmd.Env = os.Environ()
		if b.cgo != "" {
			cmd.Env = append(cmd.Env, b.cgo)
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v\n%s", b.pkg, err, out)
		}
	}
	return filepath.Join(dir, "orca")
}

// waitFor retries f until it returns nil, failing with the last error
// and what diag says after timeout.
func waitFor(t *testing.T, timeout time.Duration, diag func() string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not done after %v: %v\n%s", timeout, err, diag())
		}
		time.Sleep(time.Second)
	}
}

// procsNaming lists the live processes whose command line names dir.
func procsNaming(dir string) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(b) == 0 {
			continue
		}
		if cmd := strings.ReplaceAll(string(b), "\x00", " "); strings.Contains(cmd, dir) {
			out = append(out, e.Name()+": "+cmd)
		}
	}
	return out
}

func mountsUnder(t *testing.T, dir string) []string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) > 4 && strings.HasPrefix(f[4], dir+"/") {
			out = append(out, f[4])
		}
	}
	return out
}

func netnsOutput(t *testing.T, args ...string) string {
	t.Helper()
	out, err := inKillallNetns(args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v: %s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// netnsLinks lists the links of the test's namespace, sorted.
func netnsLinks(t *testing.T) []string {
	t.Helper()
	var links []struct {
		Name string `json:"ifname"`
	}
	if err := json.Unmarshal([]byte(netnsOutput(t, "ip", "-j", "link", "show")), &links); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range links {
		out = append(out, l.Name)
	}
	slices.Sort(out)
	return out
}

// cniNetns lists the pod network namespaces pinned in /run/netns.
func cniNetns() []string {
	m, _ := filepath.Glob("/run/netns/cni-*")
	return m
}

func newNetns(before, after []string) []string {
	var out []string
	for _, n := range after {
		if !slices.Contains(before, n) {
			out = append(out, n)
		}
	}
	return out
}
