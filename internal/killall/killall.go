// Package killall stops everything Orca started from one data directory
// and removes the network state a node leaves on the machine, as k3s's
// killall script does: a node's containerd, shims and pods outlive the
// server or agent by design (so that a restart does not restart the
// pods), and only this takes them down.
//
// Run goes in the order that leaves least behind: pod sandboxes through
// CRI while containerd still answers (so that CNI undoes their
// networking), then SIGKILL for the processes of the directory and their
// descendants, then the mounts under the directory and the pods' pinned
// network namespaces, then the node's links, routes and nftables tables in
// the current network namespace. Which processes, mounts, namespaces and
// links go is decided by pure functions over snapshots (Victims,
// Unmounts, UnusedNetns, LinksToDelete).
package killall

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/orca-project/orca/internal/cri"
	"github.com/orca-project/orca/internal/images"
)

// DefaultBridge is the bridge a node's pods attach to unless told
// otherwise.
const DefaultBridge = "orca0"

// Options says what to stop.
type Options struct {
	// DataDir is the directory whose processes go.
	DataDir string
	// DefaultDataDir is the directory of a server or agent started without
	// --data-dir: when it is DataDir, such processes go too.
	DefaultDataDir string
	// Bridge is the pod bridge; DefaultBridge when empty.
	Bridge string
	Log    *slog.Logger
}

// Report counts what Run did.
type Report struct {
	Sandboxes, Processes, Mounts, Netns, Links, Routes, Tables int
}

// WriteTo writes the report as one line per kind of thing.
func (r Report) WriteTo(w io.Writer) (int64, error) {
	var b bytes.Buffer
	for _, l := range []struct {
		n    int
		what string
	}{
		{r.Sandboxes, "pod sandboxes removed through CRI"},
		{r.Processes, "processes killed"},
		{r.Mounts, "mounts unmounted"},
		{r.Netns, "pod network namespaces removed"},
		{r.Links, "network links deleted"},
		{r.Routes, "routes deleted"},
		{r.Tables, "nftables tables deleted"},
	} {
		fmt.Fprintf(&b, "%d %s\n", l.n, l.what)
	}
	n, err := w.Write(b.Bytes())
	return int64(n), err
}

// Dir is the directory Run works on for a path given by a user: absolute,
// clean and with symlinks resolved, as the kernel shows it in command lines
// and mountinfo. It refuses the root directory, under which everything
// lies.
func Dir(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("killall: data directory %s: %w", path, err)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	if abs == "/" {
		return "", errors.New("killall: refusing / as the data directory")
	}
	return abs, nil
}

// Run stops everything of o.DataDir and removes the node's network state.
// It goes on past failures, so that one stuck step leaves the rest done,
// and returns them all.
func Run(ctx context.Context, o Options) (Report, error) {
	var r Report
	dir, err := Dir(o.DataDir)
	if err != nil {
		return r, err
	}
	if o.Bridge == "" {
		o.Bridge = DefaultBridge
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	var errs []error
	note := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}

	// A server or agent would start the pods again, or containerd:
	// stopped (not killed) they keep still while the sandboxes go.
	procs, err := readProcs()
	note(err)
	for _, pid := range Victims(procs, dir, o.DefaultDataDir, os.Getpid()) {
		if p := find(procs, pid); p != nil && IsDaemon(p.Args) {
			_ = syscall.Kill(pid, syscall.SIGSTOP)
		}
	}
	n, err := sandboxes(ctx, images.SocketPath(dir))
	r.Sandboxes = n
	note(err)

	// The pods' namespaces are known by their processes, which are
	// about to go.
	procs, err = readProcs()
	note(err)
	ours := netnsOf(Victims(procs, dir, o.DefaultDataDir, os.Getpid()))
	n, err = kill(ctx, dir, o.DefaultDataDir, o.Log)
	r.Processes = n
	note(err)

	n, err = unmount(dir)
	r.Mounts = n
	note(err)

	pinned, inUse, err := readNetns()
	note(err)
	for _, name := range UnusedNetns(pinned, inUse, ours) {
		if err := removeNetns(name); err != nil {
			note(err)
			continue
		}
		r.Netns++
	}

	note(network{run: run, bridge: o.Bridge}.remove(ctx, &r))
	return r, errors.Join(errs...)
}

func find(procs []Proc, pid int) *Proc {
	for i := range procs {
		if procs[i].PID == pid {
			return &procs[i]
		}
	}
	return nil
}

// sandboxes removes the pod sandboxes of the containerd on socket, when
// one answers there.
func sandboxes(ctx context.Context, socket string) (int, error) {
	if _, err := os.Stat(socket); err != nil {
		return 0, nil
	}
	rt, err := cri.Dial(socket)
	if err != nil {
		return 0, err
	}
	defer rt.Close()
	// A socket nobody answers on is what a killed containerd leaves.
	vctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	_, err = rt.Version(vctx, &runtimeapi.VersionRequest{})
	cancel()
	if err != nil {
		return 0, nil
	}
	return removeSandboxes(ctx, rt)
}

// kill sends SIGKILL to the victims until none is left.
func kill(ctx context.Context, dir, defaultDir string, log *slog.Logger) (int, error) {
	killed := map[int]bool{}
	for round := 0; round < 5; round++ {
		victims, err := freeze(dir, defaultDir)
		if err != nil {
			return len(killed), err
		}
		if len(victims) == 0 {
			return len(killed), nil
		}
		for _, pid := range victims {
			if err := syscall.Kill(pid, syscall.SIGKILL); err == nil {
				killed[pid] = true
			}
		}
		log.Info("killed", "processes", len(victims), "dataDir", dir)
		// The kernel takes a moment to tear a process down; its mounts and
		// namespaces are held until then.
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) && anyAlive(victims) {
			select {
			case <-ctx.Done():
				return len(killed), ctx.Err()
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	return len(killed), fmt.Errorf("killall: processes of %s still running after 5 rounds of SIGKILL", dir)
}

// freeze stops (SIGSTOP) the live victims, taking snapshots until no new
// one shows up. A stopped process cannot fork, and none has died yet, so
// every descendant is still found by its parent link: once a parent dies
// its children belong to init, and would be missed.
func freeze(dir, defaultDir string) ([]int, error) {
	var stopped []int
	for range 10 {
		procs, err := readProcs()
		if err != nil {
			return stopped, err
		}
		added := false
		for _, pid := range Victims(procs, dir, defaultDir, os.Getpid()) {
			if !slices.Contains(stopped, pid) && alive(pid) {
				_ = syscall.Kill(pid, syscall.SIGSTOP)
				stopped = append(stopped, pid)
				added = true
			}
		}
		if !added {
			break
		}
	}
	return stopped, nil
}

func anyAlive(pids []int) bool {
	for _, pid := range pids {
		if alive(pid) {
			return true
		}
	}
	return false
}

// unmount detaches everything mounted under dir, deepest first.
func unmount(dir string) (int, error) {
	points, err := MountsUnder(dir)
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, p := range points {
		// EINVAL: gone already, with a parent detached before it.
		switch err := syscall.Unmount(p, syscall.MNT_DETACH); err {
		case nil:
			n++
		case syscall.EINVAL, syscall.ENOENT:
		default:
			errs = append(errs, fmt.Errorf("killall: unmount %s: %w", p, err))
		}
	}
	return n, errors.Join(errs...)
}

// run is the runner of the real machine.
func run(ctx context.Context, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("killall: %s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// MountsUnder lists what is still mounted under dir.
func MountsUnder(dir string) ([]string, error) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("killall: read mountinfo: %w", err)
	}
	return Unmounts(ParseMountinfo(string(b)), dir), nil
}
