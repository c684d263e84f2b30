package main

import (
	"strings"
	"testing"
	"time"
)

func TestDistOf(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		var out []time.Duration
		for _, x := range v {
			out = append(out, time.Duration(x)*time.Millisecond)
		}
		return out
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = 100 - i
	}
	for _, tc := range []struct {
		name          string
		in            []time.Duration
		p50, p99, max time.Duration
	}{
		{"empty", nil, 0, 0, 0},
		{"one", ms(7), 7 * time.Millisecond, 7 * time.Millisecond, 7 * time.Millisecond},
		{"unsorted four", ms(40, 10, 30, 20), 20 * time.Millisecond, 40 * time.Millisecond, 40 * time.Millisecond},
		{"hundred: p99 is not the max", ms(hundred...), 50 * time.Millisecond, 99 * time.Millisecond, 100 * time.Millisecond},
	} {
		d := distOf(tc.in)
		if d.p50 != tc.p50 || d.p99 != tc.p99 || d.max != tc.max {
			t.Errorf("%s: got p50 %v p99 %v max %v, want %v %v %v", tc.name, d.p50, d.p99, d.max, tc.p50, tc.p99, tc.max)
		}
	}
}

func TestVmRSS(t *testing.T) {
	got, err := vmRSS("Name:\torca\nVmPeak:\t  900 kB\nVmRSS:\t   81234 kB\nThreads: 12\n")
	if err != nil || got != 81234*1024 {
		t.Fatalf("vmRSS = %d, %v; want %d", got, err, 81234*1024)
	}
	if _, err := vmRSS("Name:\tkthreadd\n"); err == nil {
		t.Fatal("a kernel thread has no VmRSS: want an error")
	}
}

func TestCPUTicks(t *testing.T) {
	// The command name may hold spaces and parentheses.
	stat := "4242 (my (odd) cmd) S 1 4242 4242 0 -1 4194560 100 0 0 0 150 27 0 0 20 0 9 0 100 0 0"
	got, err := cpuTicks(stat)
	if err != nil || got != 177 {
		t.Fatalf("cpuTicks = %d, %v; want 177", got, err)
	}
}

func TestIsShimOf(t *testing.T) {
	sock := "/tmp/orca-bench-pods-1/node/agent/containerd/containerd.sock"
	cmd := func(args ...string) string { return strings.Join(args, "\x00") + "\x00" }
	for _, tc := range []struct {
		name    string
		cmdline string
		want    bool
	}{
		{"this run's shim", cmd("/usr/bin/containerd-shim-runc-v2", "-namespace", "k8s.io", "-id", "abc", "-address", sock), true},
		{"another containerd's shim", cmd("/usr/bin/containerd-shim-runc-v2", "-namespace", "k8s.io", "-id", "abc", "-address", "/run/containerd/containerd.sock"), false},
		{"containerd itself", cmd("/usr/bin/containerd", "--config", "x", "--address", sock), false},
		{"address flag last, no value", cmd("/usr/bin/containerd-shim-runc-v2", "-address"), false},
	} {
		if got := isShimOf(tc.cmdline, sock); got != tc.want {
			t.Errorf("%s: isShimOf = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestPhaseTimes(t *testing.T) {
	log := `time=2026-11-22T06:01:02.100Z level=INFO msg="agent running" component=agent node=bench-node
time=2026-11-22T06:01:03.250Z level=INFO msg="pod phase" component=agent pod=bench/cold-00 phase=Pending
time=2026-11-22T06:01:03.500Z level=INFO msg="pod phase" component=agent pod=bench/cold-00 phase=Running
time=2026-11-22T06:01:09.000Z level=INFO msg="pod phase" component=agent pod=bench/cold-00 phase=Running
time=2026-11-22T06:01:04.125Z level=INFO msg="pod phase" component=agent pod=bench/cold-01 phase=Running
`
	got := phaseTimes(strings.NewReader(log), "Running")
	want := map[string]string{"bench/cold-00": "2026-11-22T06:01:03.5Z", "bench/cold-01": "2026-11-22T06:01:04.125Z"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for pod, w := range want {
		if g := got[pod].Format(time.RFC3339Nano); g != w {
			t.Errorf("%s: got %s, want %s (the first Running line)", pod, g, w)
		}
	}
}
