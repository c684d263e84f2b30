package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// transports are kubectl's two ways to stream: WebSockets (its default)
// and the SPDY fallback, forced by its environment switches.
var transports = []struct {
	name string
	env  []string
}{
	{"websocket", nil},
	{"spdy", []string{"KUBECTL_REMOTE_COMMAND_WEBSOCKETS=false", "KUBECTL_PORT_FORWARD_WEBSOCKETS=false"}},
}

func TestLogs(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	createPod(t, simplePod(ns, "talker", "i=0; while true; do echo line $i; i=$((i+1)); sleep 0.3; done"))
	waitPod(t, ns, "talker", time.Minute, "Running", running)
	eventually(t, 10*time.Second, func() error {
		out := runKubectl(t, nil, "", "logs", "talker", "-n", ns)
		if !strings.HasPrefix(out.Stdout, "line 0\nline 1\n") {
			return fmt.Errorf("logs %q %s", out.Stdout, out.Stderr)
		}
		return nil
	})
	if out := kubectlOK(t, "", "logs", "talker", "-n", ns, "--tail=1"); strings.Count(out, "\n") != 1 || !strings.HasPrefix(out, "line ") {
		t.Errorf("--tail=1 gave %q", out)
	}
	out := kubectlOK(t, "", "logs", "talker", "-n", ns, "--tail=1", "--timestamps")
	if ts, _, ok := strings.Cut(out, " "); !ok {
		t.Errorf("--timestamps gave %q", out)
	} else if _, err := time.Parse(time.RFC3339Nano, ts); err != nil {
		t.Errorf("--timestamps prefix %q: %v", ts, err)
	}
	if out := kubectlOK(t, "", "logs", "talker", "-n", ns, "--limit-bytes=4"); out != "line" {
		t.Errorf("--limit-bytes=4 gave %q", out)
	}

	// logs -f sees lines written after it started.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := kubectlCmd(ctx, nil, "logs", "-f", "talker", "-n", ns, "--tail=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	var first, later int = -1, -1
	for sc.Scan() {
		n, err := strconv.Atoi(strings.TrimPrefix(sc.Text(), "line "))
		if err != nil {
			t.Fatalf("logs -f line %q", sc.Text())
		}
		if first < 0 {
			first = n
		} else if n >= first+3 {
			later = n
			break
		}
	}
	cancel()
	_ = cmd.Wait()
	if later < 0 {
		t.Fatalf("logs -f did not stream new lines (first %d)", first)
	}
}

func TestLogsPrevious(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	createPod(t, simplePod(ns, "restarter", "echo run; sleep 1; exit 1"))
	waitPod(t, ns, "restarter", time.Minute, "restarted", func(p *v1.Pod) bool {
		cs := containerStatus(p, "main")
		return cs != nil && cs.RestartCount >= 1
	})
	if out := kubectlOK(t, "", "logs", "restarter", "-n", ns, "--previous"); out != "run\n" {
		t.Errorf("logs --previous %q", out)
	}
}

func TestExec(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	createPod(t, simplePod(ns, "shell", "exec sleep 3600"))
	waitPod(t, ns, "shell", time.Minute, "Running", running)
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			res := runKubectl(t, tr.env, "", "exec", "shell", "-n", ns, "--", "sh", "-c", "echo $((6*7)); echo oops >&2; exit 3")
			if res.Stdout != "42\n" || !strings.Contains(res.Stderr, "oops") || res.Code != 3 {
				t.Errorf("exec: stdout %q stderr %q code %d", res.Stdout, res.Stderr, res.Code)
			}
			res = runKubectl(t, tr.env, "hello from stdin\n", "exec", "-i", "shell", "-n", ns, "--", "cat")
			if res.Code != 0 || res.Stdout != "hello from stdin\n" {
				t.Errorf("exec -i: %+v", res)
			}
			out, code := runWithTTY(t, tr.env, "exec", "-it", "shell", "-n", ns, "--", "tty")
			if code != 0 || !strings.Contains(out, "/dev/pts/") {
				t.Errorf("exec -it tty: %q (exit %d)", out, code)
			}
		})
	}
}

func TestAttach(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	p := simplePod(ns, "listener", "while read l; do echo got $l; done")
	p.Spec.Containers[0].Stdin = true
	createPod(t, p)
	waitPod(t, ns, "listener", time.Minute, "Running", running)
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := kubectlCmd(ctx, tr.env, "attach", "-i", "listener", "-n", ns)
			in, _ := cmd.StdinPipe()
			out, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { cancel(); _ = cmd.Wait() }()
			sc := bufio.NewScanner(out)
			// The attach may take a moment; keep sending until the echo
			// comes back.
			go func() {
				for i := 0; i < 20 && ctx.Err() == nil; i++ {
					fmt.Fprintf(in, "%s\n", tr.name)
					time.Sleep(500 * time.Millisecond)
				}
			}()
			for sc.Scan() {
				if sc.Text() == "got "+tr.name {
					return
				}
			}
			t.Fatalf("attach: no echo (%v)", sc.Err())
		})
	}
}

func TestPortForward(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	createPod(t, simplePod(ns, "web", "exec httpd -f -p 8080 -h /var/www"))
	waitPod(t, ns, "web", time.Minute, "Running", running)
	index := kubectlOK(t, "", "exec", "web", "-n", ns, "--", "cat", "/var/www/index.html")
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			port := freePort()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := kubectlCmd(ctx, tr.env, "port-forward", "pod/web", "-n", ns, fmt.Sprintf("%d:8080", port))
			out, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { cancel(); _ = cmd.Wait() }()
			sc := bufio.NewScanner(out)
			if !sc.Scan() || !strings.Contains(sc.Text(), "Forwarding from") {
				t.Fatalf("port-forward did not start: %q", sc.Text())
			}
			go func() { _, _ = io.Copy(io.Discard, out) }()
			for i := 0; i < 3; i++ { // several connections over one forward
				resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/", port))
				if err != nil {
					t.Fatalf("GET through port-forward: %v", err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || string(body) != index {
					t.Fatalf("GET through port-forward: %d %q, want %q", resp.StatusCode, body, index)
				}
			}
		})
	}
}

func TestCopy(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	createPod(t, simplePod(ns, "box", "exec sleep 3600"))
	waitPod(t, ns, "box", time.Minute, "Running", running)
	dir := t.TempDir()
	src := filepath.Join(dir, "in.txt")
	if err := os.WriteFile(src, []byte("copied in\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	kubectlOK(t, "", "cp", src, ns+"/box:/tmp/in.txt")
	if out := kubectlOK(t, "", "exec", "box", "-n", ns, "--", "cat", "/tmp/in.txt"); out != "copied in\n" {
		t.Errorf("file in the container: %q", out)
	}
	dst := filepath.Join(dir, "out.txt")
	kubectlOK(t, "", "cp", ns+"/box:/tmp/in.txt", dst)
	if b, err := os.ReadFile(dst); err != nil || string(b) != "copied in\n" {
		t.Errorf("copied back: %q %v", b, err)
	}
}
