// Package observe reads the eviction manager's signals and the pods' use
// from the host: the root memory cgroup and /proc/meminfo, the file
// systems of the node and of containerd's images, the process table,
// the runtime's container stats, and the pods' log and emptyDir
// directories. It stands in for the kubelet's summary stats, which the
// manager consumes only through eviction.Stats.
package observe

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"google.golang.org/grpc"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/orca-project/orca/internal/kubelet/cgroups"
	"github.com/orca-project/orca/internal/kubelet/eviction"
)

// ContainerStats is the part of the CRI this package reads.
type ContainerStats interface {
	ListContainerStats(ctx context.Context, in *runtimeapi.ListContainerStatsRequest, opts ...grpc.CallOption) (*runtimeapi.ListContainerStatsResponse, error)
}

// Host observes one node.
type Host struct {
	Runtime ContainerStats
	Cgroups *cgroups.Manager
	// Proc is /proc.
	Proc string
	// NodeFs is a directory on the node's file system (the kubelet's
	// data), ImageFs one on the runtime's image store.
	NodeFs, ImageFs string
	// LogDir holds the pods' logs as LogDir/<ns>_<name>_<uid>/<container>/;
	// PodDir their volumes as PodDir/<uid>/volumes/kubernetes.io~empty-dir/.
	LogDir, PodDir string
}

// Observe implements eviction.Stats.
func (h *Host) Observe(ctx context.Context) (eviction.Observations, eviction.Usage, error) {
	obs := eviction.Observations{}
	if total, ws, err := h.memory(); err == nil {
		obs[eviction.MemoryAvailable] = eviction.Observation{Available: max(total-ws, 0), Capacity: total}
	}
	for _, fsys := range []struct {
		dir           string
		bytes, inodes eviction.Signal
	}{{h.NodeFs, eviction.NodeFsAvailable, eviction.NodeFsInodesFree}, {h.ImageFs, eviction.ImageFsAvailable, eviction.ImageFsInodesFree}} {
		var st syscall.Statfs_t
		if fsys.dir == "" || syscall.Statfs(fsys.dir, &st) != nil {
			continue
		}
		obs[fsys.bytes] = eviction.Observation{Available: int64(st.Bavail) * st.Bsize, Capacity: int64(st.Blocks) * st.Bsize}
		if st.Files > 0 {
			obs[fsys.inodes] = eviction.Observation{Available: int64(st.Ffree), Capacity: int64(st.Files)}
		}
	}
	if maxPIDs, used, err := h.pids(); err == nil {
		obs[eviction.PIDAvailable] = eviction.Observation{Available: maxPIDs - used, Capacity: maxPIDs}
	}
	usage, err := h.pods(ctx)
	if err != nil {
		return obs, nil, err
	}
	return obs, usage, nil
}

// memory is upstream's memory.available inputs: the machine's memory
// and the root cgroup's working set.
func (h *Host) memory() (total, workingSet int64, err error) {
	b, err := os.ReadFile(filepath.Join(h.Proc, "meminfo"))
	if err != nil {
		return 0, 0, err
	}
	mi := cgroups.ParseMeminfo(string(b))
	total = mi["MemTotal"]
	ws, err := h.Cgroups.RootWorkingSet(mi)
	return total, ws, err
}

func (h *Host) pids() (maxPIDs, used int64, err error) {
	b, err := os.ReadFile(filepath.Join(h.Proc, "sys/kernel/pid_max"))
	if err != nil {
		return 0, 0, err
	}
	maxPIDs, err = strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, 0, err
	}
	// Threads take pids too, as upstream's count of the kernel's tasks.
	b, err = os.ReadFile(filepath.Join(h.Proc, "loadavg"))
	if err != nil {
		return 0, 0, err
	}
	return maxPIDs, ParseLoadavgTasks(string(b)), nil
}

// ParseLoadavgTasks reads the number of tasks from /proc/loadavg
// ("0.00 0.01 0.05 1/123 4567": 123).
func ParseLoadavgTasks(s string) int64 {
	f := strings.Fields(s)
	if len(f) < 4 {
		return 0
	}
	_, total, _ := strings.Cut(f[3], "/")
	n, _ := strconv.ParseInt(total, 10, 64)
	return n
}

// pods gathers each pod's containers' stats from the runtime and its
// logs and emptyDirs from disk.
func (h *Host) pods(ctx context.Context) (eviction.Usage, error) {
	resp, err := h.Runtime.ListContainerStats(ctx, &runtimeapi.ListContainerStatsRequest{})
	if err != nil {
		return nil, err
	}
	usage := eviction.Usage{}
	logDirs := map[types.UID]string{}
	for _, s := range resp.Stats {
		labels := s.GetAttributes().GetLabels()
		uid := types.UID(labels["io.kubernetes.pod.uid"])
		name := labels["io.kubernetes.container.name"]
		if uid == "" || name == "" {
			continue
		}
		p := usage[uid]
		if p.Containers == nil {
			p.Containers = map[string]eviction.ContainerUsage{}
		}
		c := p.Containers[name]
		// Earlier runs of a container hold disk but no memory.
		c.MemoryWorkingSet += int64(s.GetMemory().GetWorkingSetBytes().GetValue())
		c.RootfsBytes += int64(s.GetWritableLayer().GetUsedBytes().GetValue())
		c.Inodes += int64(s.GetWritableLayer().GetInodesUsed().GetValue())
		p.Containers[name] = c
		usage[uid] = p
		if _, ok := logDirs[uid]; !ok {
			logDirs[uid] = h.podLogDir(uid)
		}
	}
	for uid, p := range usage {
		if dir := logDirs[uid]; dir != "" {
			for name, c := range p.Containers {
				c.LogsBytes, _ = du(filepath.Join(dir, name))
				p.Containers[name] = c
			}
		}
		p.VolumeBytes, p.VolumeInodes = du(filepath.Join(h.PodDir, string(uid), "volumes", "kubernetes.io~empty-dir"))
		usage[uid] = p
	}
	return usage, nil
}

// podLogDir finds the pod's log directory by its uid suffix.
func (h *Host) podLogDir(uid types.UID) string {
	m, _ := filepath.Glob(filepath.Join(h.LogDir, "*_"+string(uid)))
	if len(m) == 0 {
		return ""
	}
	return m[0]
}

// du is the bytes and inodes under a directory.
func du(dir string) (bytes, inodes int64) {
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		inodes++
		if info, err := d.Info(); err == nil && !d.IsDir() {
			if st, ok := info.Sys().(*syscall.Stat_t); ok {
				bytes += st.Blocks * 512
			} else {
				bytes += info.Size()
			}
		}
		return nil
	})
	return bytes, inodes
}
