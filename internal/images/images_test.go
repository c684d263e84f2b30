package images

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/orca-project/orca/internal/imagebuild"
)

func TestParseImportOutput(t *testing.T) {
	for _, tc := range []struct {
		name string
		out  string
		want []string
	}{
		{"one image", "unpacking localhost/orca/pause:1.0 (sha256:0123abcd)...done\n", []string{"localhost/orca/pause:1.0"}},
		{"two images and noise", "ctr: something\nunpacking docker.io/library/a:1 (sha256:1)...done\nunpacking b:2 (sha256:2)...done\n", []string{"docker.io/library/a:1", "b:2"}},
		{"nothing imported", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := parseImportOutput([]byte(tc.out)); !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestSocketPath(t *testing.T) {
	if got, want := SocketPath("/var/lib/orca"), "/var/lib/orca/agent/containerd/containerd.sock"; got != want {
		t.Errorf("SocketPath = %q, want %q", got, want)
	}
}

// startContainerd runs a private containerd with the CRI plugin and returns
// its socket; it is killed when the test ends.
func startContainerd(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("starts containerd; skipped with -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to run containerd")
	}
	bin, err := exec.LookPath("containerd")
	if err != nil {
		t.Skip("containerd is not installed")
	}
	if _, err := exec.LookPath("ctr"); err != nil {
		t.Skip("ctr is not installed")
	}
	// Unix socket paths are limited to 108 bytes; t.TempDir names are long.
	dir, err := os.MkdirTemp("", "ctr")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	socket := filepath.Join(dir, "c.sock")
	config := fmt.Sprintf(`version = 2
root = %q
state = %q
[grpc]
  address = %q
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %q
  # Sandboxes ask for oom_score_adj -998; without CAP_SYS_RESOURCE (as in
  # a container) runc fails unless the value is clamped to our own.
  restrict_oom_score_adj = true
`, filepath.Join(dir, "root"), filepath.Join(dir, "state"), socket, imagebuild.PauseRef)
	cfgPath := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfgPath, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(dir, "containerd.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config", cfgPath)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting containerd: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("containerd log:\n%s", tail(b, 4000))
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := List(ctx, socket)
		cancel()
		if err == nil {
			return socket
		}
		if time.Now().After(deadline) {
			t.Fatalf("containerd did not serve CRI in time: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

func pauseBinary(t *testing.T) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), "orca-pause")
	cmd := exec.Command("go", "build", "-ldflags", "-s -w", "-o", out, "github.com/orca-project/orca/cmd/orca-pause")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building orca-pause: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func ctr(socket string, args ...string) *exec.Cmd {
	return exec.Command("ctr", append([]string{"--address", socket, "--namespace", Namespace}, args...)...)
}

// TestImportListRun imports Orca's pause and busybox images into a real
// containerd, checks that CRI lists them under their IDs, and runs both.
func TestImportListRun(t *testing.T) {
	socket := startContainerd(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	pause := imagebuild.Pause(pauseBinary(t))
	busybox, err := imagebuild.Busybox("")
	if err != nil {
		t.Fatal(err)
	}

	// busybox through Import from a file, pause through EnsureImported.
	tarPath := filepath.Join(t.TempDir(), "busybox.tar")
	if err := busybox.WriteFile(tarPath); err != nil {
		t.Fatal(err)
	}
	refs, err := Import(ctx, socket, tarPath)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(refs, []string{imagebuild.BusyboxRef}) {
		t.Errorf("Import returned %q, want [%s]", refs, imagebuild.BusyboxRef)
	}
	if err := EnsureImported(ctx, socket, pause); err != nil {
		t.Fatal(err)
	}

	want := map[string]string{}
	for _, img := range []imagebuild.Image{pause, busybox} {
		id, err := img.ID()
		if err != nil {
			t.Fatal(err)
		}
		want[img.Ref] = id
	}
	var got map[string]string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		imgs, err := List(ctx, socket)
		if err != nil {
			t.Fatal(err)
		}
		got = map[string]string{}
		for _, img := range imgs {
			for _, tag := range img.RepoTags {
				got[tag] = img.ID
			}
			if img.Size == 0 {
				t.Errorf("image %s has size 0", img.ID)
			}
		}
		if len(got) == len(want) || time.Now().After(deadline) {
			break
		}
	}
	for ref, id := range want {
		if got[ref] != id {
			t.Errorf("CRI lists %s as %q, want %q (all: %v)", ref, got[ref], id, got)
		}
	}

	// Import unpacked both for the overlayfs snapshotter: the layer's
	// snapshot (its chain ID is the diff ID: one layer) exists before
	// anything ran.
	snaps, err := ctr(socket, "snapshots", "--snapshotter", "overlayfs", "ls").CombinedOutput()
	if err != nil {
		t.Fatalf("listing snapshots: %v %s", err, snaps)
	}
	for _, img := range []imagebuild.Image{pause, busybox} {
		a, err := img.Build()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(snaps), a.LayerDigest) {
			t.Errorf("no unpacked snapshot %s of %s:\n%s", a.LayerDigest, img.Ref, snaps)
		}
	}

	// A second EnsureImported finds the image and imports nothing.
	if err := EnsureImported(ctx, socket, pause); err != nil {
		t.Errorf("second EnsureImported: %v", err)
	}

	runSandbox(ctx, t, socket)

	// The busybox image runs, as root with the PATH from its config.
	out, err := ctr(socket, "run", "--rm", imagebuild.BusyboxRef, "bb-"+t.Name(), "sh", "-c", "echo hi; id -u; echo $PATH; cat /var/www/index.html | wc -l; nohup echo ok").CombinedOutput()
	if err != nil {
		t.Fatalf("running busybox: %v\n%s", err, out)
	}
	if got, want := string(out), "hi\n0\n/usr/sbin:/usr/bin:/sbin:/bin\n1\nok\n"; got != want {
		t.Errorf("busybox printed %q, want %q", got, want)
	}

	// pause runs as PID 1 of its container and exits 0 on SIGTERM.
	var pauseOut bytes.Buffer
	run := ctr(socket, "run", "--rm", imagebuild.PauseRef, "pause-test")
	run.Stdout, run.Stderr = &pauseOut, &pauseOut
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- run.Wait() }()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		out, _ := ctr(socket, "tasks", "ls").Output()
		if strings.Contains(string(out), "pause-test") && strings.Contains(string(out), "RUNNING") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pause did not start: %s", pauseOut.String())
		}
	}
	select {
	case err := <-done:
		t.Fatalf("pause exited on its own: %v %s", err, pauseOut.String())
	case <-time.After(300 * time.Millisecond):
	}
	if out, err := ctr(socket, "tasks", "kill", "--signal", "SIGTERM", "pause-test").CombinedOutput(); err != nil {
		t.Fatalf("signalling pause: %v %s", err, out)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("pause exited with %v after SIGTERM, want status 0: %s", err, pauseOut.String())
		}
		if pauseOut.Len() != 0 {
			t.Errorf("pause printed %q without -v", pauseOut.String())
		}
	case <-time.After(10 * time.Second):
		ctr(socket, "tasks", "kill", "--signal", "SIGKILL", "pause-test").Run()
		t.Fatal("pause did not exit on SIGTERM")
	}
}

// runSandbox starts a host-network pod sandbox through CRI, which runs the
// configured sandbox image (Orca's pause), and removes it again.
func runSandbox(ctx context.Context, t *testing.T, socket string) {
	t.Helper()
	conn, err := dial(socket)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rt := runtimeapi.NewRuntimeServiceClient(conn)
	cfg := &runtimeapi.PodSandboxConfig{
		Metadata:     &runtimeapi.PodSandboxMetadata{Name: "pause-test", Namespace: "default", Uid: "pause-test-uid"},
		LogDirectory: t.TempDir(),
		Linux: &runtimeapi.LinuxPodSandboxConfig{SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
			NamespaceOptions: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_NODE},
		}},
	}
	resp, err := rt.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: cfg})
	if err != nil {
		t.Fatalf("running a pod sandbox with the pause image: %v", err)
	}
	status, err := rt.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: resp.PodSandboxId})
	if err != nil {
		t.Fatal(err)
	}
	if got := status.Status.State; got != runtimeapi.PodSandboxState_SANDBOX_READY {
		t.Errorf("sandbox state %v, want SANDBOX_READY", got)
	}
	if _, err := rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: resp.PodSandboxId}); err != nil {
		t.Errorf("stopping the sandbox: %v", err)
	}
	if _, err := rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: resp.PodSandboxId}); err != nil {
		t.Errorf("removing the sandbox: %v", err)
	}
}
