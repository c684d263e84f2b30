// Package integration runs one Orca control plane in-process (embedded
// etcd on a temporary directory, HTTPS on 127.0.0.1) and drives it the way
// users do: with client-go and with the real kubectl. All tests of the
// package share that server, because starting one and linking kubectl
// are the expensive parts.
package integration

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/orca-project/orca/internal/kubectl"
	"github.com/orca-project/orca/internal/server"
)

// roleEnv makes the test binary act as another program when re-executed:
// "kubectl" runs kubectl, "server" runs a control plane (restart tests).
const roleEnv = "ORCA_TEST_ROLE"

var (
	inst    *server.Instance
	restCfg *rest.Config
	client  kubernetes.Interface
	homeDir string
)

func TestMain(m *testing.M) {
	switch os.Getenv(roleEnv) {
	case "kubectl":
		os.Exit(kubectl.Run(os.Args[1:], ""))
	case "server":
		os.Exit(runServerProcess())
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "orca-integration-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	homeDir = dir + "/home"
	ctx := context.Background()
	inst, err = server.Start(ctx, server.Options{
		DataDir: dir + "/server", BindAddress: "127.0.0.1", Port: 0,
		// As `orca server` runs: requests without credentials are
		// system:anonymous, and RBAC decides.
		AnonymousAuth: true,
		Log:           slog.New(slog.NewTextHandler(io.Discard, nil)),
		// The resource metrics test's kubelet is scraped in seconds.
		MetricResolution: metricResolution,
		// pods/explanation reads the scheduler's recent explanations.
		SchedulerExplanations: 100,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "start server:", err)
		return 1
	}
	defer inst.Stop()
	restCfg, err = clientcmd.BuildConfigFromFlags("", inst.Kubeconfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	restCfg.QPS, restCfg.Burst = 1000, 1000
	client = kubernetes.NewForConfigOrDie(restCfg)
	stop, err := keepNodeAlive(client, fakeNodeName)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer stop()
	return m.Run()
}

// fakeNodeName is the node the workload tests bind their pods to.
const fakeNodeName = "fake-node"

// keepNodeAlive registers a Ready node and renews its Lease as a kubelet
// would, until stop is called: pods bound to a node that does not exist
// are removed by the pod garbage collector, and those of a silent node
// are marked not ready by the node lifecycle controller. Its taint keeps
// the scheduler and the DaemonSet controller from placing pods on it.
func keepNodeAlive(c kubernetes.Interface, name string) (stop func(), err error) {
	ctx, cancel := context.WithCancel(context.Background())
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.NodeSpec{Taints: []corev1.Taint{{Key: "orca.test/fake-node", Effect: corev1.TaintEffectNoSchedule}}},
	}
	created, err := c.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil {
		cancel()
		return nil, fmt.Errorf("register %s: %w", name, err)
	}
	now := metav1.Now()
	created.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
		LastHeartbeatTime: now, LastTransitionTime: now}}
	if _, err := c.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		cancel()
		return nil, fmt.Errorf("status of %s: %w", name, err)
	}
	renew := func() error {
		t := metav1.NewMicroTime(time.Now())
		leases := c.CoordinationV1().Leases(corev1.NamespaceNodeLease)
		l, err := leases.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			_, err = leases.Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: corev1.NamespaceNodeLease},
				Spec: coordinationv1.LeaseSpec{HolderIdentity: &name, RenewTime: &t}}, metav1.CreateOptions{})
			return err
		}
		l.Spec.RenewTime = &t
		_, err = leases.Update(ctx, l, metav1.UpdateOptions{})
		return err
	}
	if err := renew(); err != nil {
		cancel()
		return nil, fmt.Errorf("lease of %s: %w", name, err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(5 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				_ = renew()
			}
		}
	}()
	return func() { cancel(); <-done }, nil
}

// runServerProcess runs a control plane on ORCA_TEST_DATA_DIR until it is
// killed, printing its URL when ready.
func runServerProcess() int {
	inst, err := server.Start(context.Background(), server.Options{
		DataDir: os.Getenv("ORCA_TEST_DATA_DIR"), BindAddress: "127.0.0.1", Port: 0,
		Log: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "start server:", err)
		return 1
	}
	fmt.Println("READY", inst.URL)
	if err := inst.Wait(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// kubectlResult is what one kubectl run printed.
type kubectlResult struct {
	Stdout, Stderr string
	Code           int
}

// runKubectl runs the real kubectl (this test binary re-executed) against
// the shared server, with stdin as its input.
func runKubectl(t *testing.T, stdin string, args ...string) kubectlResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), roleEnv+"=kubectl", "KUBECONFIG="+inst.Kubeconfig, "HOME="+homeDir)
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

// mustKubectl runs kubectl and fails the test unless it succeeds.
func mustKubectl(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	res := runKubectl(t, stdin, args...)
	if res.Code != 0 {
		t.Fatalf("kubectl %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), res.Code, res.Stdout, res.Stderr)
	}
	return res.Stdout
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
		time.Sleep(50 * time.Millisecond)
	}
}
