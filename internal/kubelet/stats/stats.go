// Package stats is the kubelet's resource usage collection, what
// upstream's kubelet gets from cadvisor and the CRI: every housekeeping
// interval (10 s, as upstream) it reads the cgroup counters of the node,
// of each pod and of each of its containers (v1 or v2; a pod's cgroup is
// found from its sandbox process, whatever the QoS layout), the pod's
// network counters in its network namespace, and the disk used by the
// containers' writable layers (from the CRI), logs and the pod's volumes.
// The result is kept as one Snapshot: the Summary API's document and the
// cgroups behind it, which the kubelet's server answers from without
// touching the host, and which the eviction manager observes the node
// through (Summary).
package stats

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// DefaultInterval is upstream's housekeeping interval.
const DefaultInterval = 10 * time.Second

// Pod is a pod the kubelet runs, as the collector needs it.
type Pod struct {
	Namespace, Name, UID string
	StartTime            time.Time
	// SandboxID is the pod's ready sandbox; pods without one are not
	// measured.
	SandboxID  string
	Containers []Container
	// LogDir holds the pod's container logs, one directory per container.
	LogDir string
	// VolumeDir holds the pod's volumes: VolumeDir/PLUGIN/NAME.
	VolumeDir string
}

// Container is one running container of a pod.
type Container struct {
	Name, ID, Image string
	StartTime       time.Time
}

// Runtime is the part of the CRI the collector asks.
type Runtime interface {
	PodSandboxStatus(ctx context.Context, in *runtimeapi.PodSandboxStatusRequest, opts ...grpc.CallOption) (*runtimeapi.PodSandboxStatusResponse, error)
	ListContainerStats(ctx context.Context, in *runtimeapi.ListContainerStatsRequest, opts ...grpc.CallOption) (*runtimeapi.ListContainerStatsResponse, error)
	ImageFsInfo(ctx context.Context, in *runtimeapi.ImageFsInfoRequest, opts ...grpc.CallOption) (*runtimeapi.ImageFsInfoResponse, error)
}

// Config wires a Collector.
type Config struct {
	NodeName string
	// Pods lists the pods to measure.
	Pods    func() []Pod
	Runtime Runtime
	// RootDir is the node's data directory (the node fs); RuntimeDir the
	// runtime's (the image fs).
	RootDir, RuntimeDir string
	// SandboxImage labels the sandboxes' series on /metrics/cadvisor.
	SandboxImage string
	// Interval is the housekeeping interval; DefaultInterval when 0.
	Interval time.Duration
	// CgroupRoot and ProcRoot default to /sys/fs/cgroup and /proc.
	CgroupRoot, ProcRoot string
	Log                  *slog.Logger
}

// Snapshot is one round of measurements.
type Snapshot struct {
	// Time is when the round started.
	Time    time.Time
	Summary statsapi.Summary
	// Cgroups are the measured cgroups, for /metrics/cadvisor: the root,
	// each pod's, each sandbox's and each container's.
	Cgroups []Cgroup
}

// Cgroup is one measured cgroup and what cadvisor labels it with.
type Cgroup struct {
	// ID is the cgroup's path; Name the container's runtime ID.
	ID, Name, Image, Container, Pod, Namespace string
	Time                                       time.Time
	CPUNanos                                   *uint64
	Memory                                     *Memory
	Interfaces                                 []Interface
	FsUsage                                    *uint64
}

// Collector samples usage on an interval and keeps the latest Snapshot.
type Collector struct {
	cfg Config
	fs  *cgroupFS
	log *slog.Logger
	now func() time.Time

	mu     sync.Mutex
	latest *Snapshot
	// refresh asks Run for a round now; Run answers on the channel sent.
	refresh chan chan *Snapshot

	// pids and cgroups cache what does not change for a sandbox or a
	// container's life: the sandbox's process and the cgroups found.
	pids    map[string]int
	cgroups map[string]cgroup
	// prevCPU is the last cumulative sample of each cgroup, for rates.
	prevCPU map[string]cpuPoint
}

type cpuPoint struct {
	nanos uint64
	at    int64
}

// New returns a collector; Run starts it.
func New(cfg Config) *Collector {
	if cfg.Interval == 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.CgroupRoot == "" {
		cfg.CgroupRoot = "/sys/fs/cgroup"
	}
	if cfg.ProcRoot == "" {
		cfg.ProcRoot = "/proc"
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	return &Collector{
		cfg: cfg, fs: newCgroupFS(cfg.CgroupRoot), log: cfg.Log, now: time.Now,
		pids: map[string]int{}, cgroups: map[string]cgroup{}, prevCPU: map[string]cpuPoint{},
		refresh: make(chan chan *Snapshot),
	}
}

// Run samples at once and then every interval, or sooner when Summary
// asks for a new round, until ctx ends.
func (c *Collector) Run(ctx context.Context) {
	t := time.NewTicker(c.cfg.Interval)
	defer t.Stop()
	var waiting chan *Snapshot
	for {
		snap := c.Collect(ctx)
		c.mu.Lock()
		c.latest = snap
		c.mu.Unlock()
		if waiting != nil {
			waiting <- snap
			waiting = nil
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case waiting = <-c.refresh:
		}
	}
}

// ErrUnavailable is returned by Summary when no round recent enough has
// been taken: sampling has not finished its first round, or has stalled.
var ErrUnavailable = errors.New("stats: summary unavailable")

// Summary is the last round's summary, as upstream's summary provider
// serves the eviction manager; with update, that of a round taken now
// (upstream's updateStats), which waits for the round in progress and
// then one more. A summary older than three intervals is stale: a
// decision on it would act on a node that may have changed since.
func (c *Collector) Summary(ctx context.Context, update bool) (*statsapi.Summary, error) {
	if update {
		w := make(chan *Snapshot, 1)
		select {
		case c.refresh <- w:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		select {
		case snap := <-w:
			return &snap.Summary, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	snap := c.Latest()
	if snap == nil {
		return nil, fmt.Errorf("%w: no round taken yet", ErrUnavailable)
	}
	if age := c.now().Sub(snap.Time); age > 3*c.cfg.Interval {
		return nil, fmt.Errorf("%w: last round is %s old", ErrUnavailable, age.Round(time.Second))
	}
	return &snap.Summary, nil
}

// Latest is the last snapshot; nil before the first round.
func (c *Collector) Latest() *Snapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.latest
}

// Collect takes one round of measurements. It keeps the collector's
// caches and previous samples, so rounds must not overlap: Run calls it.
func (c *Collector) Collect(ctx context.Context) *Snapshot {
	now := c.now()
	snap := &Snapshot{Time: now, Summary: statsapi.Summary{Pods: []statsapi.PodStats{}}}
	seenCPU := map[string]cpuPoint{}
	layers := c.writableLayers(ctx)
	snap.Summary.Node = c.node(ctx, now, seenCPU, snap)
	pods := c.cfg.Pods()
	sort.Slice(pods, func(i, j int) bool {
		if pods[i].Namespace != pods[j].Namespace {
			return pods[i].Namespace < pods[j].Namespace
		}
		return pods[i].Name < pods[j].Name
	})
	live := map[string]bool{}
	for _, p := range pods {
		if p.SandboxID == "" {
			continue
		}
		live[p.SandboxID] = true
		for _, ct := range p.Containers {
			live[ct.ID] = true
		}
		ps, err := c.pod(ctx, p, layers, seenCPU, snap)
		if err != nil {
			c.log.Debug("pod stats", "pod", p.Namespace+"/"+p.Name, "err", err)
		}
		snap.Summary.Pods = append(snap.Summary.Pods, ps)
	}
	for id := range c.pids {
		if !live[id] {
			delete(c.pids, id)
		}
	}
	for id := range c.cgroups {
		if !live[id] {
			delete(c.cgroups, id)
		}
	}
	c.prevCPU = seenCPU
	return snap
}

// cpuStats reads a cgroup's CPU and derives its rate from the previous
// round's sample of the same cgroup.
func (c *Collector) cpuStats(cg cgroup, now time.Time, seen map[string]cpuPoint) (*statsapi.CPUStats, *uint64) {
	nanos, err := c.fs.cpu(cg)
	if err != nil {
		return nil, nil
	}
	return c.cpuFrom(cg.cpu, nanos, now, seen)
}

func (c *Collector) cpuFrom(key string, nanos uint64, now time.Time, seen map[string]cpuPoint) (*statsapi.CPUStats, *uint64) {
	at := now.UnixNano()
	seen[key] = cpuPoint{nanos: nanos, at: at}
	s := &statsapi.CPUStats{Time: metav1.NewTime(now), UsageCoreNanoSeconds: ptr(nanos)}
	if prev, ok := c.prevCPU[key]; ok {
		s.UsageNanoCores = ptr(NanoCores(prev.nanos, nanos, prev.at, at))
	}
	return s, ptr(nanos)
}

func memoryStats(m Memory, now time.Time) *statsapi.MemoryStats {
	s := &statsapi.MemoryStats{
		Time: metav1.NewTime(now), UsageBytes: ptr(m.Usage), WorkingSetBytes: ptr(m.WorkingSet),
		RSSBytes: ptr(m.RSS), PageFaults: ptr(m.PageFaults), MajorPageFaults: ptr(m.MajorPageFaults),
	}
	if m.Limit > 0 {
		s.AvailableBytes = ptr(m.Limit - min(m.WorkingSet, m.Limit))
	}
	return s
}

func (c *Collector) node(ctx context.Context, now time.Time, seen map[string]cpuPoint, snap *Snapshot) statsapi.NodeStats {
	n := statsapi.NodeStats{NodeName: c.cfg.NodeName}
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) == nil {
		n.StartTime = metav1.NewTime(now.Add(-time.Duration(si.Uptime) * time.Second).Truncate(time.Second))
		n.Rlimit = &statsapi.RlimitStats{Time: metav1.NewTime(now), NumOfRunningProcesses: ptr(int64(si.Procs))}
		if b, err := os.ReadFile(filepath.Join(c.cfg.ProcRoot, "sys/kernel/pid_max")); err == nil {
			if v, _, err := ParseUint(string(b)); err == nil {
				n.Rlimit.MaxPID = ptr(int64(v))
			}
		}
	}
	cg := Cgroup{ID: "/", Time: now}
	if nanos, err := c.nodeCPU(); err == nil {
		n.CPU, cg.CPUNanos = c.cpuFrom("/", nanos, now, seen)
	}
	if m, err := nodeMemory(c.fs, c.cfg.ProcRoot); err == nil {
		n.Memory = memoryStats(m, now)
		cg.Memory = &m
	}
	n.Swap = c.nodeSwap(now)
	if b, err := os.ReadFile(filepath.Join(c.cfg.ProcRoot, "self/net/dev")); err == nil {
		if ifs, err := ParseNetDev(string(b)); err == nil {
			n.Network = networkStats(ifs, now)
			cg.Interfaces = ifs
		}
	}
	if fs := statfs(c.cfg.RootDir, now); fs != nil {
		n.Fs = fs
		cg.FsUsage = fs.UsedBytes
	}
	if imageFs := c.imageFs(ctx, now); imageFs != nil {
		n.Runtime = &statsapi.RuntimeStats{ImageFs: imageFs, ContainerFs: imageFs}
	}
	// The pods' own top cgroup, upstream's "pods" system container.
	pods := cgroup{cpu: "/kubepods", memory: "/kubepods", pids: "/kubepods"}
	if m, err := c.fs.memory(pods); err == nil {
		sc := statsapi.ContainerStats{Name: statsapi.SystemContainerPods, StartTime: n.StartTime, Memory: memoryStats(m, now)}
		sc.CPU, _ = c.cpuStats(pods, now, seen)
		n.SystemContainers = append(n.SystemContainers, sc)
	}
	snap.Cgroups = append(snap.Cgroups, cg)
	return n
}

// nodeSwap is the machine's swap, nil without any.
func (c *Collector) nodeSwap(now time.Time) *statsapi.SwapStats {
	b, err := os.ReadFile(filepath.Join(c.cfg.ProcRoot, "meminfo"))
	if err != nil {
		return nil
	}
	mi := ParseMeminfo(string(b))
	total, free := mi["SwapTotal"], mi["SwapFree"]
	if total == 0 {
		return nil
	}
	return &statsapi.SwapStats{Time: metav1.NewTime(now), SwapAvailableBytes: ptr(free), SwapUsageBytes: ptr(total - min(free, total))}
}

// nodeCPU is the machine's CPU time: the root cgroup's, or on cgroup v2
// without a root cpu.stat, /proc/stat's busy time.
func (c *Collector) nodeCPU() (uint64, error) {
	if n, err := c.fs.cpu(cgroup{cpu: "/"}); err == nil {
		return n, nil
	}
	b, err := os.ReadFile(filepath.Join(c.cfg.ProcRoot, "stat"))
	if err != nil {
		return 0, err
	}
	return ParseProcStatCPU(string(b), 100)
}

// NodeMemory is the machine's memory as the summary reports it, from the
// cgroup and proc file systems mounted at cgroupRoot and procRoot. Its
// Limit is the machine's memory, so the node's AvailableBytes is
// MemTotal less the root working set, upstream's memory.available.
func NodeMemory(cgroupRoot, procRoot string) (Memory, error) {
	return nodeMemory(newCgroupFS(cgroupRoot), procRoot)
}

// nodeMemory is the root cgroup's memory; v2 keeps none at the root, so
// there it comes from /proc/meminfo as cadvisor takes it.
func nodeMemory(fs *cgroupFS, procRoot string) (Memory, error) {
	if !fs.v2 {
		m, err := fs.memory(cgroup{cpu: "/", memory: "/", pids: "/"})
		if err == nil {
			if mi, err := os.ReadFile(filepath.Join(procRoot, "meminfo")); err == nil {
				m.Limit = ParseMeminfo(string(mi))["MemTotal"]
			}
		}
		return m, err
	}
	b, err := os.ReadFile(filepath.Join(procRoot, "meminfo"))
	if err != nil {
		return Memory{}, err
	}
	return MemoryFromMeminfo(ParseMeminfo(string(b))), nil
}

func (c *Collector) pod(ctx context.Context, p Pod, layers map[string]*runtimeapi.FilesystemUsage, seen map[string]cpuPoint, snap *Snapshot) (statsapi.PodStats, error) {
	now := c.now()
	ps := statsapi.PodStats{
		PodRef:     statsapi.PodReference{Name: p.Name, Namespace: p.Namespace, UID: p.UID},
		StartTime:  metav1.NewTime(p.StartTime),
		Containers: []statsapi.ContainerStats{},
	}
	var ephemeral uint64
	var ephemeralInodes uint64
	for _, ct := range p.Containers {
		cs := statsapi.ContainerStats{Name: ct.Name, StartTime: metav1.NewTime(ct.StartTime)}
		if l := layers[ct.ID]; l != nil {
			cs.Rootfs = &statsapi.FsStats{Time: metav1.NewTime(time.Unix(0, l.Timestamp))}
			if l.UsedBytes != nil {
				cs.Rootfs.UsedBytes = ptr(l.UsedBytes.Value)
				ephemeral += l.UsedBytes.Value
			}
			if l.InodesUsed != nil {
				cs.Rootfs.InodesUsed = ptr(l.InodesUsed.Value)
				ephemeralInodes += l.InodesUsed.Value
			}
		}
		if p.LogDir != "" {
			if used, inodes, err := du(filepath.Join(p.LogDir, ct.Name)); err == nil {
				cs.Logs = &statsapi.FsStats{Time: metav1.NewTime(now), UsedBytes: ptr(used), InodesUsed: ptr(inodes)}
				ephemeral += used
				ephemeralInodes += inodes
			}
		}
		ps.Containers = append(ps.Containers, cs)
	}
	for _, v := range volumes(p.VolumeDir, now) {
		ps.VolumeStats = append(ps.VolumeStats, v)
		ephemeral += *v.UsedBytes
		ephemeralInodes += *v.InodesUsed
	}
	ps.EphemeralStorage = &statsapi.FsStats{Time: metav1.NewTime(now), UsedBytes: ptr(ephemeral), InodesUsed: ptr(ephemeralInodes)}

	pid, err := c.sandboxPID(ctx, p.SandboxID)
	if err != nil {
		return ps, err
	}
	sandboxCg, err := c.cgroupOf(p.SandboxID, pid)
	if err != nil {
		return ps, err
	}
	podCg := sandboxCg.parent()
	pc := Cgroup{ID: podCg.memory, Pod: p.Name, Namespace: p.Namespace, Time: now}
	ps.CPU, pc.CPUNanos = c.cpuStats(podCg, now, seen)
	if m, err := c.fs.memory(podCg); err == nil {
		ps.Memory = memoryStats(m, now)
		pc.Memory = &m
	}
	if n, ok := c.fs.pids(podCg); ok {
		ps.ProcessStats = &statsapi.ProcessStats{ProcessCount: ptr(n)}
	}
	snap.Cgroups = append(snap.Cgroups, pc)
	sb := Cgroup{ID: sandboxCg.memory, Name: p.SandboxID, Image: c.cfg.SandboxImage, Pod: p.Name, Namespace: p.Namespace, Time: now}
	if b, err := os.ReadFile(filepath.Join(c.cfg.ProcRoot, strconv.Itoa(pid), "net/dev")); err == nil {
		if ifs, err := ParseNetDev(string(b)); err == nil {
			ps.Network = networkStats(ifs, now)
			sb.Interfaces = ifs
		}
	}
	sb.CPUNanos, sb.Memory = c.cgroupUsage(sandboxCg)
	snap.Cgroups = append(snap.Cgroups, sb)

	for i, ct := range p.Containers {
		cg, ok := c.cgroups[ct.ID]
		if !ok {
			if cg, err = c.fs.child(podCg, ct.ID); err != nil {
				c.log.Debug("container cgroup", "pod", p.Namespace+"/"+p.Name, "container", ct.Name, "err", err)
				continue
			}
			c.cgroups[ct.ID] = cg
		}
		cs := &ps.Containers[i]
		cc := Cgroup{ID: cg.memory, Name: ct.ID, Image: ct.Image, Container: ct.Name, Pod: p.Name, Namespace: p.Namespace, Time: now}
		cs.CPU, cc.CPUNanos = c.cpuStats(cg, now, seen)
		if m, err := c.fs.memory(cg); err == nil {
			cs.Memory = memoryStats(m, now)
			cc.Memory = &m
		}
		if cs.Rootfs != nil {
			cc.FsUsage = cs.Rootfs.UsedBytes
		}
		snap.Cgroups = append(snap.Cgroups, cc)
	}
	return ps, nil
}

func (c *Collector) cgroupUsage(cg cgroup) (*uint64, *Memory) {
	var cpu *uint64
	if n, err := c.fs.cpu(cg); err == nil {
		cpu = &n
	}
	m, err := c.fs.memory(cg)
	if err != nil {
		return cpu, nil
	}
	return cpu, &m
}

// cgroupOf finds the cgroup of the sandbox's process (the pod's cgroup
// is its parent, whichever QoS layout holds it).
func (c *Collector) cgroupOf(sandboxID string, pid int) (cgroup, error) {
	if cg, ok := c.cgroups[sandboxID]; ok {
		return cg, nil
	}
	b, err := os.ReadFile(filepath.Join(c.cfg.ProcRoot, strconv.Itoa(pid), "cgroup"))
	if err != nil {
		return cgroup{}, fmt.Errorf("cgroup of sandbox %s: %w", sandboxID, err)
	}
	paths, err := ParseProcCgroup(string(b))
	if err != nil {
		return cgroup{}, err
	}
	cg, err := c.fs.of(paths)
	if err != nil {
		return cgroup{}, fmt.Errorf("cgroup of sandbox %s: %w", sandboxID, err)
	}
	c.cgroups[sandboxID] = cg
	return cg, nil
}

// sandboxPID asks the runtime for the sandbox's process (containerd's
// verbose status carries it as info.pid).
func (c *Collector) sandboxPID(ctx context.Context, id string) (int, error) {
	if pid, ok := c.pids[id]; ok {
		return pid, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	resp, err := c.cfg.Runtime.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: id, Verbose: true})
	if err != nil {
		return 0, fmt.Errorf("status of sandbox %s: %w", id, err)
	}
	pid, err := SandboxPID(resp.GetInfo())
	if err != nil {
		return 0, fmt.Errorf("sandbox %s: %w", id, err)
	}
	c.pids[id] = pid
	return pid, nil
}

// SandboxPID reads the sandbox process from a verbose PodSandboxStatus's
// info.
func SandboxPID(info map[string]string) (int, error) {
	var v struct {
		Pid int `json:"pid"`
	}
	if err := json.Unmarshal([]byte(info["info"]), &v); err != nil {
		return 0, fmt.Errorf("verbose info: %w", err)
	}
	if v.Pid <= 0 {
		return 0, fmt.Errorf("verbose info has no pid")
	}
	return v.Pid, nil
}

func (c *Collector) writableLayers(ctx context.Context) map[string]*runtimeapi.FilesystemUsage {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := c.cfg.Runtime.ListContainerStats(ctx, &runtimeapi.ListContainerStatsRequest{})
	if err != nil {
		c.log.Debug("container stats", "err", err)
		return nil
	}
	out := make(map[string]*runtimeapi.FilesystemUsage, len(resp.Stats))
	for _, s := range resp.Stats {
		if s.Attributes != nil && s.WritableLayer != nil {
			out[s.Attributes.Id] = s.WritableLayer
		}
	}
	return out
}

func (c *Collector) imageFs(ctx context.Context, now time.Time) *statsapi.FsStats {
	if c.cfg.RuntimeDir == "" {
		return nil
	}
	fs := statfs(c.cfg.RuntimeDir, now)
	if fs == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	resp, err := c.cfg.Runtime.ImageFsInfo(ctx, &runtimeapi.ImageFsInfoRequest{})
	if err == nil && len(resp.ImageFilesystems) > 0 {
		u := resp.ImageFilesystems[0]
		if u.UsedBytes != nil {
			fs.UsedBytes = ptr(u.UsedBytes.Value)
		}
		if u.InodesUsed != nil {
			fs.InodesUsed = ptr(u.InodesUsed.Value)
		}
	}
	return fs
}

// defaultInterface is the pod interface upstream's summary puts first.
const defaultInterface = "eth0"

func networkStats(ifs []Interface, now time.Time) *statsapi.NetworkStats {
	n := &statsapi.NetworkStats{Time: metav1.NewTime(now)}
	for _, i := range ifs {
		s := statsapi.InterfaceStats{Name: i.Name, RxBytes: ptr(i.RxBytes), RxErrors: ptr(i.RxErrors), TxBytes: ptr(i.TxBytes), TxErrors: ptr(i.TxErrors)}
		if i.Name == defaultInterface {
			n.InterfaceStats = s
		}
		n.Interfaces = append(n.Interfaces, s)
	}
	return n
}

func ptr[T any](v T) *T { return &v }
