package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

// TestEphemeralContainers: `kubectl debug -it --target` starts a debugger
// in a running pod that sees the target's processes, and a shell typed
// into it; the debugger is not restarted once it exits. A second one added
// as the conformance test adds it (a whole pod through
// /ephemeralcontainers) runs its command, and exec, logs and attach reach
// it. The pod itself never restarts or goes unready meanwhile.
func TestEphemeralContainers(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	createPod(t, simplePod(ns, "target", "echo started; exec sleep 3600"))
	before := waitPod(t, ns, "target", time.Minute, "Running and Ready", func(p *v1.Pod) bool { return running(p) && ready(p) })

	s := startTTY(t, "debug", "-it", "target", "-n", ns, "--image="+busybox, "--image-pull-policy=Never",
		"--target=main", "--container=debugger")
	s.waitFor(t, "If you don't see a command prompt", time.Minute)
	// The shell prints the processes it sees, then a marker computed by
	// the shell, so that the echo of the typed line does not match it.
	s.write(t, "ps; echo done-$((6*7)); exit 0\r")
	out := s.waitFor(t, "done-42", 30*time.Second)
	if !strings.Contains(out, "sleep 3600") {
		t.Errorf("the debugger does not see the target's processes:\n%s", out)
	}
	if code := s.wait(t); code != 0 {
		t.Errorf("kubectl debug exited %d:\n%s", code, s.output())
	}
	p := waitPod(t, ns, "target", 30*time.Second, "the debugger terminated", func(p *v1.Pod) bool {
		return len(p.Status.EphemeralContainerStatuses) == 1 && p.Status.EphemeralContainerStatuses[0].State.Terminated != nil
	})
	ecs := p.Status.EphemeralContainerStatuses[0]
	if ecs.Name != "debugger" || ecs.State.Terminated.ExitCode != 0 || ecs.Ready || ecs.RestartCount != 0 || !strings.HasPrefix(ecs.ContainerID, "containerd://") {
		t.Errorf("debugger status %+v", ecs)
	}
	if p.Spec.EphemeralContainers[0].TargetContainerName != "main" || p.Generation != 2 {
		t.Errorf("target %q, generation %d", p.Spec.EphemeralContainers[0].TargetContainerName, p.Generation)
	}
	// Exited for good: a later sync does not start it again.
	time.Sleep(3 * time.Second)
	if cs := getPod(t, ns, "target").Status.EphemeralContainerStatuses[0]; cs.State.Terminated == nil || cs.RestartCount != 0 {
		t.Errorf("the debugger was restarted: %+v", cs)
	}

	ctx := context.Background()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := client.CoreV1().Pods(ns).Get(ctx, "target", metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Spec.EphemeralContainers = append(cur.Spec.EphemeralContainers, v1.EphemeralContainer{EphemeralContainerCommon: v1.EphemeralContainerCommon{
			Name: "poller", Image: busybox, ImagePullPolicy: v1.PullNever,
			Command: []string{"sh", "-c", "while true; do echo polo; sleep 1; done"}, Stdin: true, TTY: true,
		}})
		_, err = client.CoreV1().Pods(ns).UpdateEphemeralContainers(ctx, "target", cur, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	waitPod(t, ns, "target", time.Minute, "the poller running", func(p *v1.Pod) bool {
		for _, s := range p.Status.EphemeralContainerStatuses {
			if s.Name == "poller" && s.State.Running != nil {
				return true
			}
		}
		return false
	})
	if out := kubectlOK(t, "", "exec", "target", "-n", ns, "-c", "poller", "--", "echo", "marco"); out != "marco\n" {
		t.Errorf("exec into the poller: %q", out)
	}
	eventually(t, 20*time.Second, func() error {
		if out := runKubectl(t, nil, "", "logs", "target", "-n", ns, "-c", "poller"); !strings.Contains(out.Stdout, "polo") {
			return fmt.Errorf("logs: %+v", out)
		}
		return nil
	})
	actx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	attach := kubectlCmd(actx, nil, "attach", "target", "-n", ns, "-c", "poller")
	stdout, _ := attach.StdoutPipe()
	if err := attach.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	got := ""
	for !strings.Contains(got, "polo") {
		n, err := stdout.Read(buf)
		got += string(buf[:n])
		if err != nil {
			break
		}
	}
	cancel()
	_ = attach.Wait()
	if !strings.Contains(got, "polo") {
		t.Errorf("attach to the poller printed %q", got)
	}

	after := getPod(t, ns, "target")
	if cs := containerStatus(after, "main"); cs.RestartCount != 0 || !ready(after) || cs.ContainerID != containerStatus(before, "main").ContainerID {
		t.Errorf("the target changed: %s", describeStatus(after))
	}
}

// ttySession is kubectl run on a pseudo-terminal that a test types into.
type ttySession struct {
	cmd    *exec.Cmd
	master *os.File
	cancel context.CancelFunc
	mu     sync.Mutex
	out    bytes.Buffer
	done   chan struct{}
}

func startTTY(t *testing.T, args ...string) *ttySession {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open pty: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock pty: %v", err)
	}
	n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("pty number: %v", err)
	}
	slave, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open pty slave: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	s := &ttySession{master: master, cancel: cancel, done: make(chan struct{})}
	s.cmd = kubectlCmd(ctx, nil, args...)
	s.cmd.Stdin, s.cmd.Stdout, s.cmd.Stderr = slave, slave, slave
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := s.cmd.Start(); err != nil {
		slave.Close()
		t.Fatalf("start kubectl: %v", err)
	}
	slave.Close()
	go func() {
		defer close(s.done)
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			s.mu.Lock()
			s.out.Write(buf[:n])
			s.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		_ = s.cmd.Wait()
		master.Close()
	})
	return s
}

func (s *ttySession) output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.String()
}

// waitFor waits until the terminal has shown text and returns all it
// showed.
func (s *ttySession) waitFor(t *testing.T, text string, timeout time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if out := s.output(); strings.Contains(out, text) {
			return out
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no %q on the terminal after %v:\n%s", text, timeout, s.output())
	return ""
}

func (s *ttySession) write(t *testing.T, text string) {
	t.Helper()
	if _, err := io.WriteString(s.master, text); err != nil {
		t.Fatalf("type into the terminal: %v", err)
	}
}

// wait returns kubectl's exit code once it ends.
func (s *ttySession) wait(t *testing.T) int {
	t.Helper()
	err := s.cmd.Wait()
	select {
	case <-s.done:
	case <-time.After(2 * time.Second):
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	} else if err != nil {
		t.Fatalf("kubectl: %v", err)
	}
	return 0
}
