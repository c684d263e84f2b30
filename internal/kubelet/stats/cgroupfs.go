package stats

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// cgroupFS reads counters from the host's cgroup file system, v1 or v2.
type cgroupFS struct {
	root string // /sys/fs/cgroup
	v2   bool
	// cpuacct names the v1 mount holding cpuacct ("cpuacct" or
	// "cpu,cpuacct").
	cpuacct string
}

func newCgroupFS(root string) *cgroupFS {
	fs := &cgroupFS{root: root, cpuacct: "cpuacct"}
	var st unix.Statfs_t
	if unix.Statfs(root, &st) == nil && st.Type == unix.CGROUP2_SUPER_MAGIC {
		fs.v2 = true
		return fs
	}
	if _, err := os.Stat(filepath.Join(root, "cpuacct")); err != nil {
		fs.cpuacct = "cpu,cpuacct"
	}
	return fs
}

// cgroup is one cgroup's path in each hierarchy the reader uses.
type cgroup struct {
	cpu, memory, pids string
}

// of picks a process's cgroup from its /proc/<pid>/cgroup.
func (fs *cgroupFS) of(p CgroupPaths) (cgroup, error) {
	if fs.v2 {
		if p.Unified == "" {
			return cgroup{}, fmt.Errorf("no cgroup v2 path")
		}
		return cgroup{cpu: p.Unified, memory: p.Unified, pids: p.Unified}, nil
	}
	cg := cgroup{cpu: p.V1["cpuacct"], memory: p.V1["memory"], pids: p.V1["pids"]}
	if cg.cpu == "" || cg.memory == "" {
		return cgroup{}, fmt.Errorf("no cpuacct or memory cgroup")
	}
	return cg, nil
}

// parent is the cgroup above: a sandbox's is its pod's.
func (c cgroup) parent() cgroup {
	return cgroup{cpu: filepath.Dir(c.cpu), memory: filepath.Dir(c.memory), pids: filepath.Dir(c.pids)}
}

// child is the cgroup below c whose name holds id (the runtime names a
// container's cgroup after its ID, with a prefix and suffix under the
// systemd driver).
func (fs *cgroupFS) child(c cgroup, id string) (cgroup, error) {
	entries, err := os.ReadDir(fs.dir("memory", c.memory))
	if err != nil {
		return cgroup{}, err
	}
	for _, e := range entries {
		if e.IsDir() && strings.Contains(e.Name(), id) {
			return cgroup{cpu: filepath.Join(c.cpu, e.Name()), memory: filepath.Join(c.memory, e.Name()), pids: filepath.Join(c.pids, e.Name())}, nil
		}
	}
	return cgroup{}, fmt.Errorf("no cgroup of container %s under %s", id, c.memory)
}

func (fs *cgroupFS) dir(controller, path string) string {
	if fs.v2 {
		return filepath.Join(fs.root, path)
	}
	if controller == "cpuacct" {
		controller = fs.cpuacct
	}
	return filepath.Join(fs.root, controller, path)
}

func (fs *cgroupFS) read(controller, path, file string) (string, error) {
	b, err := os.ReadFile(filepath.Join(fs.dir(controller, path), file))
	return string(b), err
}

func (fs *cgroupFS) readUint(controller, path, file string) (uint64, bool, error) {
	s, err := fs.read(controller, path, file)
	if err != nil {
		return 0, false, err
	}
	return ParseUint(s)
}

// cpu is the cgroup's cumulative CPU time in nanoseconds.
func (fs *cgroupFS) cpu(c cgroup) (uint64, error) {
	if fs.v2 {
		s, err := fs.read("cpu", c.cpu, "cpu.stat")
		if err != nil {
			return 0, err
		}
		return CPUV2(ParseFlatKeyed(s)), nil
	}
	n, _, err := fs.readUint("cpuacct", c.cpu, "cpuacct.usage")
	return n, err
}

func (fs *cgroupFS) memory(c cgroup) (Memory, error) {
	stat, err := fs.read("memory", c.memory, "memory.stat")
	if err != nil {
		return Memory{}, err
	}
	if fs.v2 {
		cur, _, err := fs.readUint("memory", c.memory, "memory.current")
		if err != nil {
			return Memory{}, err
		}
		limit, _, _ := fs.readUint("memory", c.memory, "memory.max")
		return MemoryV2(cur, limit, ParseFlatKeyed(stat)), nil
	}
	usage, _, err := fs.readUint("memory", c.memory, "memory.usage_in_bytes")
	if err != nil {
		return Memory{}, err
	}
	limit, _, _ := fs.readUint("memory", c.memory, "memory.limit_in_bytes")
	return MemoryV1(usage, limit, ParseFlatKeyed(stat)), nil
}

// pids is the number of tasks in the cgroup; ok false when not counted.
func (fs *cgroupFS) pids(c cgroup) (uint64, bool) {
	if c.pids == "" {
		return 0, false
	}
	n, ok, err := fs.readUint("pids", c.pids, "pids.current")
	return n, ok && err == nil
}
