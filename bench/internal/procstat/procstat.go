// Package procstat reads a process's CPU time and resident set from
// /proc, for benchmarks that run the component they measure as a child
// process so that its figures are its own.
package procstat

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// userHZ is the unit of utime and stime in /proc/PID/stat. Linux fixes
// USER_HZ at 100 on every architecture Orca builds for, whatever the
// kernel's own tick rate.
const userHZ = 100

// Usage is one reading of a process's resources.
type Usage struct {
	CPU time.Duration // user + system time since the process started
	RSS int64         // resident set in bytes
}

// Read reads pid's CPU time and resident set from /proc.
func Read(pid int) (Usage, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return Usage{}, fmt.Errorf("read stat of %d: %w", pid, err)
	}
	cpu, err := parseCPU(stat)
	if err != nil {
		return Usage{}, fmt.Errorf("stat of %d: %w", pid, err)
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Usage{}, fmt.Errorf("read status of %d: %w", pid, err)
	}
	rss, err := parseRSS(status)
	if err != nil {
		return Usage{}, fmt.Errorf("status of %d: %w", pid, err)
	}
	return Usage{CPU: cpu, RSS: rss}, nil
}

// parseCPU returns utime+stime from the text of /proc/PID/stat. The
// command name (field 2) may hold spaces and parentheses, so fields are
// counted from the last ')'.
func parseCPU(stat []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("no command name in %q", stat)
	}
	// After ')' come fields 3 (state) onwards; utime and stime are 14 and 15.
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("only %d fields after the command name", len(f))
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("cpu ticks %q: %w", s, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
}

// parseRSS returns VmRSS in bytes from the text of /proc/PID/status.
func parseRSS(status []byte) (int64, error) {
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("VmRSS line %q", sc.Text())
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("VmRSS %q: %w", f[0], err)
		}
		return kb * 1024, nil
	}
	return 0, fmt.Errorf("no VmRSS line")
}

// Syscalls is how many read and write system calls pid has made (network,
// disk and pipes alike), from /proc/PID/io.
func Syscalls(pid int) (int64, error) {
	io, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return 0, fmt.Errorf("read io of %d: %w", pid, err)
	}
	n, err := parseSyscalls(io)
	if err != nil {
		return 0, fmt.Errorf("io of %d: %w", pid, err)
	}
	return n, nil
}

// parseSyscalls returns syscr+syscw from the text of /proc/PID/io.
func parseSyscalls(io []byte) (int64, error) {
	var n int64
	seen := 0
	for _, line := range strings.Split(string(io), "\n") {
		k, v, ok := strings.Cut(line, ": ")
		if !ok || (k != "syscr" && k != "syscw") {
			continue
		}
		c, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s %q: %w", k, v, err)
		}
		n += c
		seen++
	}
	if seen != 2 {
		return 0, fmt.Errorf("no syscr and syscw lines")
	}
	return n, nil
}
