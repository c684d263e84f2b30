// Package e2e runs a whole single-node cluster for real: an in-process
// control plane, and `orca agent` as a separate process (this test binary
// re-executed) running its own containerd with runc and the CNI plugins.
// Pods run as real containers from the project's own busybox image, and
// the tests drive them through the real kubectl, as a user would.
//
// The tests need root and containerd; hack/test.sh installs what is
// missing. Without them every test is skipped with the reason.
package e2e

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/pflag"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/orca-project/orca/internal/agent"
	"github.com/orca-project/orca/internal/agent/join"
	"github.com/orca-project/orca/internal/cri"
	"github.com/orca-project/orca/internal/imagebuild"
	"github.com/orca-project/orca/internal/images"
	"github.com/orca-project/orca/internal/kubectl"
	"github.com/orca-project/orca/internal/kubelet/eviction"
	"github.com/orca-project/orca/internal/kubelet/imagegc"
	"github.com/orca-project/orca/internal/server"
)

const (
	roleEnv  = "ORCA_TEST_ROLE"
	nodeName = "e2e-node"
	busybox  = imagebuild.BusyboxRef
)

var (
	skipReason  string
	inst        *server.Instance
	client      kubernetes.Interface
	workDir     string
	nodeDir     string
	pauseBin    string
	kubeletPort int
	agentProc   *exec.Cmd
)

func TestMain(m *testing.M) {
	switch os.Getenv(roleEnv) {
	case "kubectl":
		os.Exit(kubectl.Run(os.Args[1:], ""))
	case "agent":
		os.Exit(runAgentProcess())
	case "server":
		os.Exit(runServerProcess())
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if os.Geteuid() != 0 {
		skipReason = "needs root to run containers"
	} else if _, err := exec.LookPath("containerd"); err != nil {
		skipReason = "containerd is not installed (hack/install-deps.sh installs it)"
	}
	if skipReason != "" {
		return m.Run()
	}
	// One run at a time on a machine: the test node's bridge, routes and
	// tables live in the machine's own network namespace.
	lock, err := os.OpenFile("/run/orca-e2e.lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		fmt.Fprintln(os.Stderr, "lock:", err)
		return 1
	}
	dir, err := os.MkdirTemp("", "orca-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	workDir = dir
	defer cleanupDir(dir)
	if code := setup(dir); code != 0 {
		return code
	}
	defer teardown()
	code := m.Run()
	if code != 0 {
		// The agent's log tells what the kubelet did; it goes with the
		// temporary directory otherwise.
		if b, err := os.ReadFile(filepath.Join(workDir, "agent.log")); err == nil {
			lines := strings.Split(string(b), "\n")
			if len(lines) > 80 {
				lines = lines[len(lines)-80:]
			}
			fmt.Fprintf(os.Stderr, "--- agent log (last lines)\n%s\n", strings.Join(lines, "\n"))
		}
		if b, err := os.ReadFile(filepath.Join(workDir, "server.log")); err == nil {
			fmt.Fprintf(os.Stderr, "--- server warnings and errors (last lines)\n%s\n", tail(string(b), 80))
		}
		for _, x := range extraNodes {
			if b, err := os.ReadFile(filepath.Join(x.dir, "agent.log")); err == nil {
				fmt.Fprintf(os.Stderr, "--- agent log of %s (last lines)\n%s\n", x.name, tail(string(b), 40))
			}
		}
	}
	return code
}

func setup(dir string) int {
	pauseBin = filepath.Join(dir, "orca-pause")
	build := exec.Command("go", "build", "-o", pauseBin, "github.com/orca-project/orca/cmd/orca-pause")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build orca-pause: %v\n%s", err, out)
		return 1
	}
	// The main node's address is on the test bridge, so the bridge comes
	// first: the API server advertises that address to pods.
	if err := makeBridge(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// The server's warnings and errors (a controller's failing sync) go
	// to a file, whose tail a failed run prints.
	serverLog, err := os.OpenFile(filepath.Join(dir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	inst, err = server.Start(context.Background(), server.Options{
		// All addresses: nodes in their own network namespaces reach the
		// API server over the test bridge.
		DataDir: filepath.Join(dir, "server"), BindAddress: "0.0.0.0", Port: 0,
		AdvertiseAddress: bridgeIP,
		// As `orca server` runs: a joining node reads cluster-info
		// without credentials before it trusts the server.
		AnonymousAuth: true,
		Log:           slog.New(slog.NewTextHandler(serverLog, &slog.HandlerOptions{Level: slog.LevelWarn})),
		// Node failures are noticed in seconds rather than upstream's
		// 50; still twice the agent's 10 s heartbeat.
		NodeLifecycle: nodeLifecycle(),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "start server:", err)
		return 1
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", inst.Kubeconfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cfg.QPS, cfg.Burst = 100, 200
	client = kubernetes.NewForConfigOrDie(cfg)
	nodeDir = filepath.Join(dir, "node")
	kubeletPort = freePort()
	if err := startAgent(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := waitNodeReady(2 * time.Minute); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	img, err := imagebuild.Busybox("")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	tar := filepath.Join(dir, "busybox.tar")
	if err := img.WriteFile(tar); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if _, err := images.Import(context.Background(), images.SocketPath(nodeDir), tar); err != nil {
		fmt.Fprintln(os.Stderr, "import busybox:", err)
		return 1
	}
	return 0
}

// startAgent runs `orca agent` (this binary) for the test node.
func startAgent() error {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), roleEnv+"=agent",
		"ORCA_TEST_DATA_DIR="+nodeDir, "ORCA_TEST_KUBECONFIG="+inst.Kubeconfig,
		"ORCA_TEST_PAUSE="+pauseBin, "ORCA_TEST_KUBELET_PORT="+strconv.Itoa(kubeletPort),
		"ORCA_TEST_NODE_NAME="+nodeName, "ORCA_TEST_NODE_IP="+bridgeIP, "ORCA_TEST_POD_CIDR=10.42.250.0/24")
	logf, err := os.OpenFile(filepath.Join(workDir, "agent.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	// The agent goes when the test binary goes, however it ends.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start agent: %w", err)
	}
	agentProc = cmd
	return nil
}

// stopAgent ends the agent process: gracefully, or with SIGKILL.
func stopAgent(kill bool) {
	if agentProc == nil {
		return
	}
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	_ = agentProc.Process.Signal(sig)
	done := make(chan struct{})
	go func() { _ = agentProc.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = agentProc.Process.Kill()
		<-done
	}
	agentProc = nil
}

func runAgentProcess() int {
	// A joining node has no kubeconfig: a server and a join token only.
	var cfg *rest.Config
	var joinCfg *join.Config
	if server := os.Getenv("ORCA_TEST_SERVER"); server != "" {
		joinCfg = &join.Config{Server: server, Token: os.Getenv("ORCA_TEST_JOIN_TOKEN")}
	} else {
		var err error
		if cfg, err = clientcmd.BuildConfigFromFlags("", os.Getenv("ORCA_TEST_KUBECONFIG")); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	port, _ := strconv.Atoi(os.Getenv("ORCA_TEST_KUBELET_PORT"))
	statsInterval, _ := time.ParseDuration(os.Getenv("ORCA_TEST_STATS_INTERVAL"))
	ctx, stop := signalContext()
	defer stop()
	opts := agent.Options{
		DataDir: os.Getenv("ORCA_TEST_DATA_DIR"), NodeName: os.Getenv("ORCA_TEST_NODE_NAME"), NodeIP: os.Getenv("ORCA_TEST_NODE_IP"),
		Config: cfg, Join: joinCfg, KubeletPort: port, ClusterDNS: []string{"10.43.0.10"},
		PodCIDR: os.Getenv("ORCA_TEST_POD_CIDR"), Taints: testTaints(), Bridge: "orcae2e0", PauseBinary: os.Getenv("ORCA_TEST_PAUSE"),
		Eviction: testEviction,
		ImageGC:  &testImageGC,
		Log:      slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})),

		// Privileged containers, as upstream's kubelet always allows them;
		// the refusal without the flag is a unit test of the kubelet.
		AllowPrivileged: true,
		StatsInterval:   statsInterval,
	}
	if args := os.Getenv("ORCA_TEST_AGENT_ARGS"); args != "" {
		// A node of its own for a test of node pressure: its flags, on
		// top of the test nodes' eviction threshold.
		fs := pflag.NewFlagSet("agent", pflag.ContinueOnError)
		var pf agent.PressureFlags
		pf.Register(fs)
		base := []string{"--eviction-hard=" + testEvictionHard, fmt.Sprintf("--image-gc-high-threshold=%d", testImageGC.HighThresholdPercent), fmt.Sprintf("--image-gc-low-threshold=%d", testImageGC.LowThresholdPercent)}
		if err := fs.Parse(append(base, strings.Split(args, "\n")...)); err != nil {
			fmt.Fprintln(os.Stderr, "agent:", err)
			return 1
		}
		if err := pf.Apply(&opts); err != nil {
			fmt.Fprintln(os.Stderr, "agent:", err)
			return 1
		}
	}
	if err := agent.Run(ctx, opts); err != nil {
		fmt.Fprintln(os.Stderr, "agent:", err)
		return 1
	}
	return 0
}

func waitNodeReady(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		n, err := client.CoreV1().Nodes().Get(context.Background(), nodeName, metav1.GetOptions{})
		if err == nil {
			for _, c := range n.Status.Conditions {
				if c.Type == v1.NodeReady && c.Status == v1.ConditionTrue {
					return nil
				}
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	b, _ := os.ReadFile(filepath.Join(workDir, "agent.log"))
	return fmt.Errorf("node %s not Ready after %v; agent log:\n%s", nodeName, timeout, b)
}

// teardown removes every pod sandbox from the node's containerd, so that
// no container outlives the tests, and stops the agent and server.
func teardown() {
	if rt, err := cri.Dial(filepath.Join(nodeDir, "agent", "containerd", "containerd.sock")); err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		if sbs, err := rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{}); err == nil {
			for _, sb := range sbs.Items {
				_, _ = rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sb.Id})
				_, _ = rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sb.Id})
			}
		}
		cancel()
		rt.Close()
	}
	stopAgent(false)
	removeExtraNodes()
	if inst != nil {
		_ = inst.Stop()
	}
	killShims(nodeDir)
	// What the node set up on this machine: its bridge, routes, dummy
	// service device and masquerading table.
	for _, args := range [][]string{
		{"ip", "link", "del", "orcae2e0"}, {"ip", "-4", "route", "flush", "proto", "199"},
		{"ip", "link", "del", "orca-svc"}, {"nft", "delete", "table", "ip", "orca-podnet"},
		{"nft", "delete", "table", "ip", "orca-proxy"}, {"nft", "delete", "table", "ip", "orca-netpol"},
		{"ip", "link", "del", testBridge},
	} {
		_ = exec.Command(args[0], args[1:]...).Run()
	}
}

// killShims ends container shims still serving the node's containerd (a
// containerd killed by a test leaves its shims to the next one; nothing
// must outlive the run).
func killShims(dir string) {
	// A containerd the agent did not get to stop goes too.
	if b, err := os.ReadFile(filepath.Join(dir, "agent", "containerd", "containerd.pid")); err == nil {
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
			if cmd, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline"); err == nil && strings.Contains(string(cmd), dir) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && strings.Contains(string(b), "containerd-shim") && strings.Contains(string(b), dir) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// cleanupDir unmounts what containerd left under dir and removes it.
func cleanupDir(dir string) {
	b, _ := os.ReadFile("/proc/self/mountinfo")
	var mounts []string
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) > 4 && strings.HasPrefix(f[4], dir) {
			mounts = append(mounts, f[4])
		}
	}
	for i := len(mounts) - 1; i >= 0; i-- {
		_ = syscall.Unmount(mounts[i], syscall.MNT_DETACH)
	}
	_ = os.RemoveAll(dir)
}

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 20250
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func needCluster(t *testing.T) {
	t.Helper()
	if skipReason != "" {
		t.Skip(skipReason)
	}
}

// kubectlResult is what one kubectl run printed.
type kubectlResult struct {
	Stdout, Stderr string
	Code           int
}

// runKubectl runs the real kubectl (this binary re-executed) with extra
// environment variables env.
func runKubectl(t *testing.T, env []string, stdin string, args ...string) kubectlResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), roleEnv+"=kubectl", "KUBECONFIG="+inst.Kubeconfig, "HOME="+workDir), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	res := kubectlResult{Stdout: out.String(), Stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		res.Code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("kubectl %v: %v", args, err)
	}
	return res
}

func kubectlOK(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	res := runKubectl(t, nil, stdin, args...)
	if res.Code != 0 {
		t.Fatalf("kubectl %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), res.Code, res.Stdout, res.Stderr)
	}
	return res.Stdout
}

// kubectlCmd prepares a long-running kubectl (logs -f, port-forward).
func kubectlCmd(ctx context.Context, env []string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), roleEnv+"=kubectl", "KUBECONFIG="+inst.Kubeconfig, "HOME="+workDir), env...)
	return cmd
}

// eventually retries f until it returns nil or the timeout passes.
func eventually(t *testing.T, timeout time.Duration, f func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("condition not met after %v: %v", timeout, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// extraNodeTaint keeps pods that do not ask for the extra nodes (by
// nodeName or toleration) on the main node, so that single-node tests
// stay single-node whatever ran before them.
var extraNodeTaint = v1.Taint{Key: "orca.test/extra-node", Value: "true", Effect: v1.TaintEffectNoSchedule}

// testEvictionHard are the test nodes' hard eviction thresholds: test
// machines share their disk with build caches, and upstream's 10% (15%
// of the image file system) would put every test node under disk
// pressure on a nearly full machine.
const testEvictionHard = "memory.available<100Mi,nodefs.available<1Gi,imagefs.available<1Gi"

// testImageGC keeps the periodic image collection off test nodes but on
// a full disk: busybox, imported once and pulled never, must survive the
// moments no container uses it on a machine whose disk is over 85% full.
var testImageGC = imagegc.Policy{HighThresholdPercent: 100, LowThresholdPercent: 99, MinAge: 2 * time.Minute}

var testEviction = func() *eviction.Config {
	c, err := eviction.ParseConfig(eviction.Flags{Hard: testEvictionHard, HardSet: true, PressureTransitionPeriod: eviction.DefaultPressureTransitionPeriod})
	if err != nil {
		panic(err)
	}
	return &c
}()

func testTaints() []v1.Taint {
	if os.Getenv("ORCA_TEST_EXTRA_NODE") == "true" {
		return []v1.Taint{extraNodeTaint}
	}
	return nil
}
