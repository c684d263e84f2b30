package cgroups

import (
	"strconv"
	"strings"
)

// ParseFlatKeyed reads a "key value" per line file (memory.stat).
func ParseFlatKeyed(s string) map[string]int64 {
	out := map[string]int64{}
	for _, l := range strings.Split(s, "\n") {
		f := strings.Fields(l)
		if len(f) != 2 {
			continue
		}
		if n, err := strconv.ParseInt(f[1], 10, 64); err == nil {
			out[f[0]] = n
		}
	}
	return out
}

// WorkingSet is cadvisor's working set: usage less inactive file pages
// (v1 names them total_inactive_file in a hierarchy's memory.stat, v2
// inactive_file), never below zero.
func WorkingSet(usage int64, stat map[string]int64, v2 bool) int64 {
	key := "total_inactive_file"
	if v2 {
		key = "inactive_file"
	}
	inactive, ok := stat[key]
	if !ok && !v2 {
		inactive = stat["inactive_file"]
	}
	if inactive > usage {
		return 0
	}
	return usage - inactive
}

// ParseMeminfo reads /proc/meminfo's totals, in bytes.
func ParseMeminfo(s string) map[string]int64 {
	out := map[string]int64{}
	for _, l := range strings.Split(s, "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		n, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			continue
		}
		if len(f) == 3 && f[2] == "kB" {
			n *= 1024
		}
		out[strings.TrimSuffix(f[0], ":")] = n
	}
	return out
}
