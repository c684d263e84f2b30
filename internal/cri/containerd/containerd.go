// Package containerd runs the node's own containerd: it writes a private
// configuration (root, state and socket under the agent's data directory,
// the CRI plugin with Orca's pause image and CNI directories), starts the
// daemon, and starts it again if it dies. A containerd left running by an
// agent that was killed is adopted rather than started twice, so the
// containers it serves are never disturbed.
package containerd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Config places one node's containerd.
type Config struct {
	// Dir holds config.toml, root/, state/, the socket and the pid file.
	Dir string
	// Binary is the containerd executable; "containerd" from PATH when empty.
	Binary string
	// SandboxImage is the pause image every pod sandbox runs.
	SandboxImage string
	// CNIBinDir and CNIConfDir are where the CRI plugin finds network
	// plugins and their configuration.
	CNIBinDir, CNIConfDir string
	// RegistryConfigDir, when set, is containerd's config_path: a
	// directory per registry host with a hosts.toml naming its mirrors.
	RegistryConfigDir string
	Log               *slog.Logger
}

// Socket is the gRPC socket of the containerd that Config describes.
func (c Config) Socket() string { return SocketPath(c.Dir) }

// SocketPath is the socket of a containerd whose directory is dir.
func SocketPath(dir string) string { return filepath.Join(dir, "containerd.sock") }

// Render returns config.toml. Plugins a node never uses are disabled: each
// costs memory and start-up time, and some probe the host noisily.
func (c Config) Render() string {
	q := strconv.Quote
	var b strings.Builder
	fmt.Fprintf(&b, "version = 2\n")
	fmt.Fprintf(&b, "root = %s\nstate = %s\n", q(filepath.Join(c.Dir, "root")), q(filepath.Join(c.Dir, "state")))
	fmt.Fprintf(&b, "disabled_plugins = [%s]\n", strings.Join([]string{
		q("io.containerd.snapshotter.v1.aufs"), q("io.containerd.snapshotter.v1.btrfs"),
		q("io.containerd.snapshotter.v1.devmapper"), q("io.containerd.snapshotter.v1.zfs"),
		q("io.containerd.tracing.processor.v1.otlp"), q("io.containerd.internal.v1.tracing"),
	}, ", "))
	fmt.Fprintf(&b, "\n[grpc]\n  address = %s\n", q(c.Socket()))
	fmt.Fprintf(&b, "\n[ttrpc]\n  address = %s\n", q(filepath.Join(c.Dir, "containerd.sock.ttrpc")))
	fmt.Fprintf(&b, "\n[plugins.\"io.containerd.internal.v1.opt\"]\n  path = %s\n", q(filepath.Join(c.Dir, "opt")))
	fmt.Fprintf(&b, "\n[plugins.\"io.containerd.grpc.v1.cri\"]\n")
	fmt.Fprintf(&b, "  sandbox_image = %s\n", q(c.SandboxImage))
	fmt.Fprintf(&b, "  stream_server_address = \"127.0.0.1\"\n  stream_server_port = \"0\"\n")
	// As in newer containerd releases and upstream's defaults: a pod may
	// bind low ports and ping without extra capabilities.
	fmt.Fprintf(&b, "  enable_unprivileged_ports = true\n  enable_unprivileged_icmp = true\n")
	// Inside a container or user namespace without CAP_SYS_RESOURCE, runc
	// cannot lower a process's OOM score; restricting the adjustment to
	// values at or above the agent's own keeps sandboxes starting there.
	fmt.Fprintf(&b, "  restrict_oom_score_adj = true\n")
	fmt.Fprintf(&b, "  [plugins.\"io.containerd.grpc.v1.cri\".containerd]\n    snapshotter = \"overlayfs\"\n    default_runtime_name = \"runc\"\n")
	fmt.Fprintf(&b, "  [plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc]\n    runtime_type = \"io.containerd.runc.v2\"\n")
	fmt.Fprintf(&b, "  [plugins.\"io.containerd.grpc.v1.cri\".cni]\n    bin_dir = %s\n    conf_dir = %s\n", q(c.CNIBinDir), q(c.CNIConfDir))
	if c.RegistryConfigDir != "" {
		fmt.Fprintf(&b, "  [plugins.\"io.containerd.grpc.v1.cri\".registry]\n    config_path = %s\n", q(c.RegistryConfigDir))
	}
	return b.String()
}

// Alive reports whether a containerd answers on socket.
func Alive(socket string) bool {
	conn, err := net.DialTimeout("unix", socket, time.Second)
	if err != nil {
		return false
	}
	conn.Close()
	return true
}

// Supervisor keeps one containerd running.
type Supervisor struct {
	cfg Config
}

// New returns a supervisor for cfg.
func New(cfg Config) *Supervisor {
	if cfg.Binary == "" {
		cfg.Binary = "containerd"
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	return &Supervisor{cfg: cfg}
}

// Start writes the configuration and makes sure containerd serves its
// socket, adopting one that already does. It returns once the socket
// answers.
func (s *Supervisor) Start(ctx context.Context) error {
	for _, d := range []string{s.cfg.Dir, s.cfg.CNIConfDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("containerd: %w", err)
		}
	}
	if err := os.WriteFile(filepath.Join(s.cfg.Dir, "config.toml"), []byte(s.cfg.Render()), 0o600); err != nil {
		return fmt.Errorf("containerd: write config: %w", err)
	}
	if Alive(s.cfg.Socket()) {
		s.cfg.Log.Info("adopting running containerd", "socket", s.cfg.Socket())
		return nil
	}
	return s.launch(ctx)
}

// launch starts a new containerd and waits for its socket.
func (s *Supervisor) launch(ctx context.Context) error {
	if _, err := exec.LookPath(s.cfg.Binary); err != nil {
		return fmt.Errorf("containerd not found (install Debian's containerd package): %w", err)
	}
	os.Remove(s.cfg.Socket())
	logf, err := os.OpenFile(filepath.Join(s.cfg.Dir, "containerd.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("containerd: open log: %w", err)
	}
	defer logf.Close()
	// Not tied to ctx: containerd must outlive a killed agent so that the
	// next one adopts it; Stop ends it deliberately.
	cmd := exec.Command(s.cfg.Binary, "--config", filepath.Join(s.cfg.Dir, "config.toml"))
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Env = append(os.Environ(), "PATH="+pathWithSbin())
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start containerd: %w", err)
	}
	pid := cmd.Process.Pid
	_ = os.WriteFile(filepath.Join(s.cfg.Dir, "containerd.pid"), []byte(strconv.Itoa(pid)), 0o600)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	s.cfg.Log.Info("started containerd", "pid", pid, "socket", s.cfg.Socket())
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	for !Alive(s.cfg.Socket()) {
		select {
		case err := <-exited:
			return fmt.Errorf("containerd exited during start-up (see %s): %v", filepath.Join(s.cfg.Dir, "containerd.log"), err)
		case <-deadline.C:
			return errors.New("containerd did not open its socket within 30s")
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}

// Watch restarts containerd whenever its socket stops answering, until
// ctx ends. Containers survive: their shims do not depend on the daemon.
func (s *Supervisor) Watch(ctx context.Context) {
	backoff := time.Second
	t := time.NewTicker(2 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if Alive(s.cfg.Socket()) {
			backoff = time.Second
			continue
		}
		s.cfg.Log.Warn("containerd is not answering; restarting it", "socket", s.cfg.Socket())
		if err := s.launch(ctx); err != nil {
			s.cfg.Log.Error("restart containerd", "err", err, "retryIn", backoff)
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 30*time.Second)
		}
	}
}

// Stop ends the containerd this directory's pid file names. Running
// containers are left to their shims.
func (s *Supervisor) Stop() error {
	b, err := os.ReadFile(filepath.Join(s.cfg.Dir, "containerd.pid"))
	if err != nil {
		return nil
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return nil
	}
	if !isContainerd(pid) {
		return nil
	}
	_ = syscall.Kill(pid, syscall.SIGTERM)
	for i := 0; i < 100; i++ {
		if syscall.Kill(pid, 0) != nil || !isContainerd(pid) {
			os.Remove(filepath.Join(s.cfg.Dir, "containerd.pid"))
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	return nil
}

// isContainerd guards against signalling a process that reused the pid.
func isContainerd(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return false
	}
	return strings.Contains(filepath.Base(strings.SplitN(string(b), "\x00", 2)[0]), "containerd")
}

// pathWithSbin makes sure runc (in /usr/sbin on Debian) is found even when
// the agent was started with a user's PATH.
func pathWithSbin() string {
	p := os.Getenv("PATH")
	for _, d := range []string{"/usr/local/sbin", "/usr/sbin", "/sbin", "/usr/local/bin", "/usr/bin", "/bin"} {
		if !strings.Contains(":"+p+":", ":"+d+":") {
			p += ":" + d
		}
	}
	return strings.TrimPrefix(p, ":")
}
