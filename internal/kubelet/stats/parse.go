package stats

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
)

// CgroupPaths are where a process sits in each hierarchy: one path per
// cgroup v1 controller, and the unified (v2) path.
type CgroupPaths struct {
	// V1 maps a controller (cpuacct, memory, pids...) to its path; a
	// mount of several controllers ("cpu,cpuacct") is listed under each.
	V1 map[string]string
	// Unified is the cgroup v2 path ("0::PATH"), empty when absent.
	Unified string
}

// ParseProcCgroup reads /proc/<pid>/cgroup: "ID:CONTROLLERS:PATH" lines,
// "0::PATH" being the unified hierarchy.
func ParseProcCgroup(text string) (CgroupPaths, error) {
	out := CgroupPaths{V1: map[string]string{}}
	for _, line := range strings.Split(text, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			return CgroupPaths{}, fmt.Errorf("cgroup line %q: want ID:CONTROLLERS:PATH", line)
		}
		if parts[0] == "0" && parts[1] == "" {
			out.Unified = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			if c != "" {
				out.V1[c] = parts[2]
			}
		}
	}
	return out, nil
}

// ParseFlatKeyed reads a flat keyed file ("KEY VALUE" lines) as cgroup
// memory.stat and cpu.stat are; lines that are not a key and one
// unsigned number are skipped.
func ParseFlatKeyed(text string) map[string]uint64 {
	out := map[string]uint64{}
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		if n, err := strconv.ParseUint(f[1], 10, 64); err == nil {
			out[f[0]] = n
		}
	}
	return out
}

// ParseUint reads a single-number file (cpuacct.usage, memory.current);
// "max" reads as 0 with ok false (no limit).
func ParseUint(text string) (n uint64, ok bool, err error) {
	s := strings.TrimSpace(text)
	if s == "max" {
		return 0, false, nil
	}
	n, err = strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("parse %q: %w", s, err)
	}
	return n, true, nil
}

// Memory is one cgroup's memory, as cadvisor reports it.
type Memory struct {
	Usage, WorkingSet, RSS, PageFaults, MajorPageFaults uint64
	// Limit is the cgroup's limit, 0 without one.
	Limit uint64
}

// unlimited is above what a v1 limit_in_bytes holds when none is set
// (PAGE_COUNTER_MAX pages rounded), the bound cadvisor uses too.
const unlimited = uint64(1) << 62

// MemoryV1 computes a v1 cgroup's memory from memory.usage_in_bytes and
// memory.stat, hierarchically (the total_ keys) as cadvisor: the working
// set is the usage less the inactive file pages, floored at 0.
func MemoryV1(usage, limit uint64, stat map[string]uint64) Memory {
	m := Memory{
		Usage: usage, RSS: stat["total_rss"],
		PageFaults: stat["total_pgfault"], MajorPageFaults: stat["total_pgmajfault"],
	}
	m.WorkingSet = workingSet(usage, stat["total_inactive_file"])
	if limit < unlimited {
		m.Limit = limit
	}
	return m
}

// MemoryV2 computes a v2 cgroup's memory from memory.current,
// memory.max (0 for "max") and memory.stat: anon is the RSS.
func MemoryV2(current, limit uint64, stat map[string]uint64) Memory {
	return Memory{
		Usage: current, RSS: stat["anon"], Limit: limit,
		PageFaults: stat["pgfault"], MajorPageFaults: stat["pgmajfault"],
		WorkingSet: workingSet(current, stat["inactive_file"]),
	}
}

// MemoryFromMeminfo is the node's memory where no root cgroup accounts it
// (cgroup v2), as cadvisor computes it: usage is what is not free, and
// the working set that less the inactive file pages. meminfo values are
// in bytes.
func MemoryFromMeminfo(meminfo map[string]uint64) Memory {
	usage := meminfo["MemTotal"] - min(meminfo["MemFree"], meminfo["MemTotal"])
	return Memory{
		Usage: usage, Limit: meminfo["MemTotal"],
		WorkingSet: workingSet(usage, meminfo["Inactive(file)"]),
		RSS:        meminfo["AnonPages"],
	}
}

func workingSet(usage, inactiveFile uint64) uint64 {
	if inactiveFile >= usage {
		return 0
	}
	return usage - inactiveFile
}

// CPUV2 is the cumulative CPU time in nanoseconds a v2 cpu.stat reports.
func CPUV2(stat map[string]uint64) uint64 { return stat["usage_usec"] * 1000 }

// ParseMeminfo reads /proc/meminfo into bytes by key.
func ParseMeminfo(text string) map[string]uint64 {
	out := map[string]uint64{}
	for _, line := range strings.Split(text, "\n") {
		key, rest, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			continue
		}
		n, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			continue
		}
		if len(f) > 1 && f[1] == "kB" {
			n *= 1024
		}
		out[key] = n
	}
	return out
}

// Interface is one network interface's counters from /proc/net/dev.
type Interface struct {
	Name                                    string
	RxBytes, RxPackets, RxErrors, RxDropped uint64
	TxBytes, TxPackets, TxErrors, TxDropped uint64
}

// ParseNetDev reads /proc/<pid>/net/dev, the counters of the process's
// network namespace; the loopback interface is left out, as cadvisor
// leaves it.
func ParseNetDev(text string) ([]Interface, error) {
	var out []Interface
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue // the two header lines
		}
		name = strings.TrimSpace(name)
		if name == "lo" {
			continue
		}
		f := strings.Fields(rest)
		if len(f) < 16 {
			return nil, fmt.Errorf("net/dev line of %s: %d fields, want 16", name, len(f))
		}
		var n [16]uint64
		for i := range n {
			v, err := strconv.ParseUint(f[i], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("net/dev line of %s: %w", name, err)
			}
			n[i] = v
		}
		out = append(out, Interface{
			Name:    name,
			RxBytes: n[0], RxPackets: n[1], RxErrors: n[2], RxDropped: n[3],
			TxBytes: n[8], TxPackets: n[9], TxErrors: n[10], TxDropped: n[11],
		})
	}
	return out, sc.Err()
}

// ParseProcStatCPU is the machine's busy CPU time in nanoseconds from
// the "cpu" line of /proc/stat (user, nice, system, irq, softirq, steal;
// idle and iowait are not use), given the clock ticks per second.
func ParseProcStatCPU(text string, ticks uint64) (uint64, error) {
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 9 || f[0] != "cpu" {
			continue
		}
		var busy uint64
		for _, i := range []int{1, 2, 3, 6, 7, 8} {
			v, err := strconv.ParseUint(f[i], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("/proc/stat cpu line: %w", err)
			}
			busy += v
		}
		return busy * (1e9 / ticks), nil
	}
	return 0, fmt.Errorf("/proc/stat: no cpu line")
}

// NanoCores is the CPU rate between two cumulative samples, in
// billionths of a core, as cadvisor derives usageNanoCores; 0 when the
// samples are not in order or the counter went back (a new cgroup).
func NanoCores(prevNanos, curNanos uint64, prevUnixNano, curUnixNano int64) uint64 {
	if curUnixNano <= prevUnixNano || curNanos < prevNanos {
		return 0
	}
	return uint64(float64(curNanos-prevNanos) / float64(curUnixNano-prevUnixNano) * 1e9)
}
