package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/orca-project/orca/internal/agent"
	"github.com/orca-project/orca/internal/cri"
	"github.com/orca-project/orca/internal/imagebuild"
	"github.com/orca-project/orca/internal/images"
	"github.com/orca-project/orca/internal/kubelet/eviction"
	"github.com/orca-project/orca/internal/kubelet/imagegc"
	"github.com/orca-project/orca/internal/server"
)

const (
	roleEnv  = "ORCA_BENCH_ROLE"
	nodeName = "bench-node"
	bridge   = "orcabench0"
	podCIDR  = "10.42.251.0/24"
)

// cluster is the benchmark's single-node cluster: an in-process control
// plane and `orca agent` (this binary re-executed) with its own
// containerd, as test/e2e runs them.
type cluster struct {
	dir, nodeDir, pauseBin, agentLog string
	inst                             *server.Instance
	client                           kubernetes.Interface
	agent                            *exec.Cmd
	rt                               *cri.Client
}

func (c *cluster) socket() string {
	return filepath.Join(c.nodeDir, "agent", "containerd", "containerd.sock")
}

func (c *cluster) containerdPid() (int, error) {
	b, err := os.ReadFile(filepath.Join(c.nodeDir, "agent", "containerd", "containerd.pid"))
	if err != nil {
		return 0, fmt.Errorf("containerd pid: %w", err)
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

func startCluster(ctx context.Context, dir string) (*cluster, error) {
	c := &cluster{dir: dir, nodeDir: filepath.Join(dir, "node"), pauseBin: filepath.Join(dir, "orca-pause"), agentLog: filepath.Join(dir, "agent.log")}
	build := exec.CommandContext(ctx, "go", "build", "-o", c.pauseBin, "github.com/orca-project/orca/cmd/orca-pause")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return c, fmt.Errorf("build orca-pause: %w\n%s", err, out)
	}
	var err error
	c.inst, err = server.Start(ctx, server.Options{
		DataDir: filepath.Join(dir, "server"), BindAddress: "127.0.0.1", Port: 0,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		return c, fmt.Errorf("start server: %w", err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", c.inst.Kubeconfig)
	if err != nil {
		return c, err
	}
	// The pods are created at once: client-side rate limiting would
	// measure client-go, not the node.
	cfg.QPS, cfg.Burst = 10000, 10000
	c.client = kubernetes.NewForConfigOrDie(cfg)
	if err := c.startAgent(); err != nil {
		return c, err
	}
	if err := c.waitNodeReady(ctx, 2*time.Minute); err != nil {
		return c, err
	}
	img, err := imagebuild.Busybox("")
	if err != nil {
		return c, err
	}
	tar := filepath.Join(dir, "busybox.tar")
	if err := img.WriteFile(tar); err != nil {
		return c, err
	}
	if _, err := images.Import(ctx, images.SocketPath(c.nodeDir), tar); err != nil {
		return c, fmt.Errorf("import busybox: %w", err)
	}
	if c.rt, err = cri.Dial(c.socket()); err != nil {
		return c, err
	}
	return c, nil
}

func (c *cluster) startAgent() error {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), roleEnv+"=agent",
		"ORCA_BENCH_DATA_DIR="+c.nodeDir, "ORCA_BENCH_KUBECONFIG="+c.inst.Kubeconfig,
		"ORCA_BENCH_PAUSE="+c.pauseBin, "ORCA_BENCH_AGENT_QPS="+strconv.Itoa(*agentQPS), "ORCA_BENCH_KUBELET_PORT="+strconv.Itoa(freePort()))
	logf, err := os.OpenFile(c.agentLog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own process group: a Ctrl-C on the benchmark reaches only the
	// benchmark, which then tears the node down in order.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start agent: %w", err)
	}
	c.agent = cmd
	return nil
}

// runAgentProcess is the re-executed binary's role: `orca agent` for the
// benchmark's node.
func runAgentProcess() int {
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("ORCA_BENCH_KUBECONFIG"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	port, _ := strconv.Atoi(os.Getenv("ORCA_BENCH_KUBELET_PORT"))
	// Zero keeps client-go's defaults (5/s, burst 10), which is what
	// `orca agent` runs with.
	if qps, _ := strconv.Atoi(os.Getenv("ORCA_BENCH_AGENT_QPS")); qps > 0 {
		cfg.QPS, cfg.Burst = float32(qps), 2*qps
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Bench machines share their disk with build caches: upstream's
	// imagefs.available<15% and image collection at 85% would evict the
	// measured pods and remove their images on a nearly full machine.
	evictionCfg, err := eviction.ParseConfig(eviction.Flags{Hard: "memory.available<100Mi,nodefs.available<1Gi,imagefs.available<1Gi", HardSet: true, PressureTransitionPeriod: eviction.DefaultPressureTransitionPeriod})
	if err != nil {
		fmt.Fprintln(os.Stderr, "agent:", err)
		return 1
	}
	err = agent.Run(ctx, agent.Options{
		DataDir: os.Getenv("ORCA_BENCH_DATA_DIR"), NodeName: nodeName, NodeIP: "127.0.0.1",
		Config: cfg, KubeletPort: port, BindAddress: "127.0.0.1",
		PodCIDR: podCIDR, Bridge: bridge, PauseBinary: os.Getenv("ORCA_BENCH_PAUSE"),
		Eviction: &evictionCfg, ImageGC: &imagegc.Policy{HighThresholdPercent: 100, LowThresholdPercent: 99, MinAge: 2 * time.Minute},
		Log: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "agent:", err)
		return 1
	}
	return 0
}

func (c *cluster) waitNodeReady(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		n, err := c.client.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
		if err == nil {
			for _, cond := range n.Status.Conditions {
				if cond.Type == v1.NodeReady && cond.Status == v1.ConditionTrue {
					return nil
				}
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("node %s not Ready after %v", nodeName, timeout)
}

// close tears the node down as test/e2e does: every sandbox removed
// through CRI so that no container outlives the run, the agent stopped
// gracefully (it stops its containerd), the control plane stopped, then
// leftover mounts, the directory and the bridge removed.
func (c *cluster) close() {
	if c.rt != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		if sbs, err := c.rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{}); err == nil {
			for _, sb := range sbs.Items {
				_, _ = c.rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sb.Id})
				_, _ = c.rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sb.Id})
			}
		}
		cancel()
		c.rt.Close()
	}
	if c.agent != nil {
		_ = c.agent.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = c.agent.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = c.agent.Process.Kill()
			<-done
		}
	}
	if c.inst != nil {
		_ = c.inst.Stop()
	}
	cleanupDir(c.dir)
	if _, err := net.InterfaceByName(bridge); err == nil {
		if out, err := exec.Command("ip", "link", "del", bridge).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "bench: ip link del %s: %v: %s", bridge, err, out)
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

// tail is the end of the agent's log, for a failure message.
func (c *cluster) tail(lines int) string {
	b, err := os.ReadFile(c.agentLog)
	if err != nil {
		return ""
	}
	l := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(l) > lines {
		l = l[len(l)-lines:]
	}
	return strings.Join(l, "\n")
}

var errTimeout = errors.New("timed out")
