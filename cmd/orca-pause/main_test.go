package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// build compiles orca-pause as `make build` does.
func build(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "orca-pause")
	cmd := exec.Command("go", "build", "-ldflags", "-s -w", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// start runs the binary and waits until it has installed its signal
// handlers (a signal before that would kill it with the default action).
func start(t *testing.T, cmd *exec.Cmd) chan error {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/status")
		for _, line := range strings.Split(string(b), "\n") {
			if mask, ok := strings.CutPrefix(line, "SigCgt:"); ok && strings.Trim(strings.TrimSpace(mask), "0") != "" {
				return done
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("orca-pause did not install signal handlers")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestExitsZeroOnSignal(t *testing.T) {
	bin := build(t)
	for _, tc := range []struct {
		name    string
		args    []string
		sig     syscall.Signal
		wantOut string
	}{
		{"SIGTERM", nil, syscall.SIGTERM, ""},
		{"SIGINT", nil, syscall.SIGINT, ""},
		{"SIGTERM verbose", []string{"-v"}, syscall.SIGTERM, "shutting down, got signal terminated"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			cmd := exec.Command(bin, tc.args...)
			cmd.Stdout, cmd.Stderr = &out, &out
			done := start(t, cmd)
			select {
			case err := <-done:
				t.Fatalf("exited before the signal: %v", err)
			case <-time.After(200 * time.Millisecond):
			}
			cmd.Process.Signal(tc.sig)
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("exit after %v: %v, want status 0", tc.sig, err)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("still running after %v", tc.sig)
			}
			if tc.wantOut == "" && out.Len() != 0 {
				t.Errorf("printed %q without -v", out.String())
			}
			if !strings.Contains(out.String(), tc.wantOut) {
				t.Errorf("printed %q, want it to contain %q", out.String(), tc.wantOut)
			}
		})
	}
}

// TestReapsOrphansAsPID1 runs orca-pause as PID 1 of a new PID namespace,
// orphans a process into it, and checks that no zombie is left once that
// process has exited.
func TestReapsOrphansAsPID1(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for a PID namespace")
	}
	if _, err := exec.LookPath("nsenter"); err != nil {
		t.Skip("needs nsenter")
	}
	if _, err := os.Stat("/bin/busybox"); err != nil {
		t.Skip("needs /bin/busybox")
	}
	cmd := exec.Command(build(t))
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID}
	start(t, cmd)
	pid := cmd.Process.Pid

	// The shell exits at once; its sleep becomes a child of the namespace's
	// init, orca-pause, and exits 100ms later.
	if out, err := exec.Command("nsenter", "-t", strconv.Itoa(pid), "-p", "/bin/busybox", "sh", "-c", "/bin/busybox sleep 0.1 & exit 0").CombinedOutput(); err != nil {
		t.Fatalf("nsenter: %v %s", err, out)
	}
	time.Sleep(300 * time.Millisecond) // the sleep has exited by now
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if len(childStates(t, pid)) == 0 {
			return
		}
	}
	t.Fatalf("children of orca-pause after their exit: %v, want none (zombies not reaped)", childStates(t, pid))
}

// childStates returns the state letter of each process whose parent is pid.
func childStates(t *testing.T, pid int) []string {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var states []string
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may contain spaces.
		s := string(b)
		fields := strings.Fields(s[strings.LastIndex(s, ")")+1:])
		if len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
			states = append(states, e.Name()+":"+fields[0])
		}
	}
	return states
}
