package killall

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Proc is one process as /proc shows it.
type Proc struct {
	PID, PPID int
	// Args is the command line; empty for kernel threads and zombies.
	Args []string
}

// Victims is what to kill for dataDir, given every process: the processes
// that belong to the directory (see owns) and all their descendants,
// found by parent links, so that pods' processes under a shim go with it
// whatever their command lines say. self and its ancestors are never in
// it: `orca killall --data-dir DIR` names the directory itself, and so
// may the shell or nsenter that started it. The result is sorted.
func Victims(procs []Proc, dataDir, defaultDataDir string, self int) []int {
	parent := make(map[int]int, len(procs))
	children := map[int][]int{}
	for _, p := range procs {
		parent[p.PID] = p.PPID
		children[p.PPID] = append(children[p.PPID], p.PID)
	}
	protected := map[int]bool{self: true}
	for pid, ok := parent[self]; ok && pid > 0 && !protected[pid]; pid, ok = parent[pid] {
		protected[pid] = true
	}
	seen := map[int]bool{}
	var queue []int
	for _, p := range procs {
		if !protected[p.PID] && owns(p.Args, dataDir, defaultDataDir) {
			seen[p.PID] = true
			queue = append(queue, p.PID)
		}
	}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range children[pid] {
			if !seen[c] && !protected[c] {
				seen[c] = true
				queue = append(queue, c)
			}
		}
	}
	out := make([]int, 0, len(seen))
	for pid := range seen {
		out = append(out, pid)
	}
	slices.Sort(out)
	return out
}

// owns reports whether a command line belongs to dataDir: it names a path
// inside it (containerd's --config, a shim's -address), or the directory
// itself (`orca server --data-dir DIR`, `--data-dir=DIR`), or it is an
// Orca server or agent started without --data-dir when dataDir is the
// default one.
func owns(args []string, dataDir, defaultDataDir string) bool {
	if len(args) == 0 {
		return false
	}
	inside := dataDir + "/"
	explicit := false
	for _, a := range args {
		if strings.Contains(a, inside) || a == dataDir || strings.HasSuffix(a, "="+dataDir) {
			return true
		}
		if a == "--data-dir" || strings.HasPrefix(a, "--data-dir=") {
			explicit = true
		}
	}
	return !explicit && dataDir == defaultDataDir && IsDaemon(args)
}

// IsDaemon reports whether a command line is an Orca server or agent.
func IsDaemon(args []string) bool {
	return len(args) > 1 && filepath.Base(args[0]) == "orca" && (args[1] == "server" || args[1] == "agent")
}

// readProcs takes a snapshot of /proc. Processes that go while it reads
// are left out.
func readProcs() ([]Proc, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("killall: read /proc: %w", err)
	}
	var out []Proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		ppid, _, ok := parseStat(string(stat))
		if !ok {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		out = append(out, Proc{PID: pid, PPID: ppid, Args: splitCmdline(cmdline)})
	}
	return out, nil
}

// parseStat reads the parent pid and state from /proc/PID/stat. The
// command name in parentheses may hold spaces and parentheses itself, so
// the fields are counted from the last ')'.
func parseStat(stat string) (ppid int, state byte, ok bool) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(stat[i+1:])
	if len(f) < 2 || len(f[0]) != 1 {
		return 0, 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return 0, 0, false
	}
	return ppid, f[0][0], true
}

func splitCmdline(b []byte) []string {
	b = bytes.TrimRight(b, "\x00")
	if len(b) == 0 {
		return nil
	}
	return strings.Split(string(b), "\x00")
}

// alive reports whether pid still runs: a zombie has only to be reaped
// by its parent, and holds no mounts or files any more.
func alive(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	_, state, ok := parseStat(string(stat))
	return ok && state != 'Z' && state != 'X'
}
