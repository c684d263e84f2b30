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
	return m.Run()
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
