package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// dist is the p50, p99 and max of a set of durations.
type dist struct {
	n             int
	p50, p99, max time.Duration
}

// distOf uses the nearest-rank percentile: with 30 samples p99 is the
// largest, so p99 and max agree until N reaches 100.
func distOf(ds []time.Duration) dist {
	if len(ds) == 0 {
		return dist{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := func(p float64) time.Duration {
		i := int(math.Ceil(p*float64(len(s)))) - 1
		return s[max(i, 0)]
	}
	return dist{n: len(s), p50: rank(0.50), p99: rank(0.99), max: s[len(s)-1]}
}

// vmRSS reads VmRSS (bytes) from a /proc/PID/status text.
func vmRSS(status string) (int64, error) {
	for _, l := range strings.Split(status, "\n") {
		if rest, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			f := strings.Fields(rest)
			if len(f) != 2 || f[1] != "kB" {
				return 0, fmt.Errorf("unexpected VmRSS line %q", l)
			}
			kb, err := strconv.ParseInt(f[0], 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmRSS line")
}

func rssOf(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("rss of %d: %w", pid, err)
	}
	return vmRSS(string(b))
}

// cpuTicks is utime+stime from a /proc/PID/stat text, in clock ticks.
func cpuTicks(stat string) (int64, error) {
	// The command name (field 2) may hold spaces; fields are counted
	// after its closing parenthesis.
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("malformed stat")
	}
	f := strings.Fields(stat[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("malformed stat")
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("malformed stat")
	}
	return u + s, nil
}

// clockTick is USER_HZ, 100 on every Linux this runs on.
const clockTick = 10 * time.Millisecond

func cpuOf(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	t, _ := cpuTicks(string(b))
	return time.Duration(t) * clockTick
}

// isShimOf says whether a NUL-separated command line is a runc v2 shim
// serving the containerd at socket; shims of other containerds on the
// machine (a developer's own cluster) are not this run's.
func isShimOf(cmdline, socket string) bool {
	args := strings.Split(strings.TrimRight(cmdline, "\x00"), "\x00")
	if len(args) == 0 || filepath.Base(args[0]) != "containerd-shim-runc-v2" {
		return false
	}
	for i := 1; i+1 < len(args); i++ {
		if (args[i] == "-address" || args[i] == "--address") && args[i+1] == socket {
			return true
		}
	}
	return false
}

// shims are the pids of this run's shims.
func shims(socket string) []int {
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && isShimOf(string(b), socket) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// phaseTimes reads the agent's "pod phase" log lines (slog text, with
// millisecond times) and returns, per namespace/name, when the kubelet
// first decided the pod was Running.
func phaseTimes(r io.Reader, phase string) map[string]time.Time {
	out := map[string]time.Time{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if !strings.Contains(l, `msg="pod phase"`) {
			continue
		}
		kv := map[string]string{}
		for _, f := range strings.Fields(l) {
			if k, v, ok := strings.Cut(f, "="); ok {
				kv[k] = v
			}
		}
		if kv["phase"] != phase {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, kv["time"])
		if err != nil {
			continue
		}
		if _, seen := out[kv["pod"]]; !seen {
			out[kv["pod"]] = t
		}
	}
	return out
}
