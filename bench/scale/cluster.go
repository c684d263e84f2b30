package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// cluster is the measured control plane (`orca server` with no node of
// its own) and the simulated nodes (`orca agent --simulate`), each its
// own process so that their CPU time and resident set are their own.
type cluster struct {
	dir        string
	server     *exec.Cmd
	sim        *exec.Cmd
	simPid     atomic.Int64 // read by the sampler while the nodes start
	kubeconfig string
	cfg        *rest.Config
	cs         kubernetes.Interface
}

// startServer starts `orca server` on loopback: no agent (the nodes are
// simulated), no cluster DNS, no resource metrics (simulated kubelets
// serve none), and a cluster range with a /24 for each of 32,768 nodes.
func startServer(ctx context.Context, orca, dir string, logs io.Writer) (*cluster, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	c := &cluster{dir: dir, kubeconfig: filepath.Join(dir, "kubeconfig")}
	c.server = exec.CommandContext(ctx, orca, "server",
		"--data-dir", dir, "--disable-agent",
		"--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1",
		"--https-listen-port", strconv.Itoa(port),
		"--etcd-client-port", "0", "--etcd-peer-port", "0", "--etcd-disable-snapshots",
		"--cluster-dns-port", "-1", "--disable-metrics",
		"--cluster-cidr", "10.128.0.0/9",
		"--log-level", "warn")
	c.server.Stdout, c.server.Stderr = logs, logs
	c.server.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := c.server.Start(); err != nil {
		return nil, fmt.Errorf("start orca server: %w", err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if err := c.connect(ctx); err == nil {
			return c, nil
		} else if time.Now().After(deadline) {
			c.stop()
			return nil, fmt.Errorf("orca server not ready in 2m: %w", err)
		}
		select {
		case <-ctx.Done():
			c.stop()
			return nil, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// connect reads the admin kubeconfig once the server wrote it and asks
// /readyz.
func (c *cluster) connect(ctx context.Context) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", c.kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = -1, 0
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	if _, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx); err != nil {
		return err
	}
	c.cfg, c.cs = cfg, cs
	return nil
}

// startNodes starts one process simulating n nodes named prefix-N.
func (c *cluster) startNodes(ctx context.Context, orca string, n int, prefix string, qps int, logs io.Writer) error {
	c.sim = exec.CommandContext(ctx, orca, "agent", "--simulate", strconv.Itoa(n),
		"--simulate-prefix", prefix, "--simulate-qps", strconv.Itoa(qps), "--kubeconfig", c.kubeconfig)
	c.sim.Stdout, c.sim.Stderr = logs, logs
	c.sim.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := c.sim.Start(); err != nil {
		return fmt.Errorf("start orca agent --simulate: %w", err)
	}
	c.simPid.Store(int64(c.sim.Process.Pid))
	return nil
}

// readyNodes counts the Ready nodes.
func (c *cluster) readyNodes(ctx context.Context) (int, error) {
	list, err := c.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, node := range list.Items {
		for _, cond := range node.Status.Conditions {
			if cond.Type == v1.NodeReady && cond.Status == v1.ConditionTrue {
				n++
			}
		}
	}
	return n, nil
}

// metrics is the server's /metrics page.
func (c *cluster) metrics(ctx context.Context) (string, error) {
	b, err := c.cs.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	return string(b), err
}

// profile saves the server's pprof profile kind (with query params) to
// file in dir.
func (c *cluster) profile(ctx context.Context, kind string, params map[string]string, file string) error {
	req := c.cs.Discovery().RESTClient().Get().AbsPath("/debug/pprof/" + kind)
	for k, v := range params {
		req = req.Param(k, v)
	}
	b, err := req.Timeout(2 * time.Minute).DoRaw(ctx)
	if err != nil {
		return fmt.Errorf("pprof %s: %w", kind, err)
	}
	return os.WriteFile(file, b, 0o644)
}

func (c *cluster) stop() {
	for _, p := range []*exec.Cmd{c.sim, c.server} {
		if p != nil && p.Process != nil {
			_ = p.Process.Signal(syscall.SIGTERM)
			done := make(chan struct{})
			go func() { _ = p.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				_ = p.Process.Kill()
				<-done
			}
		}
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
