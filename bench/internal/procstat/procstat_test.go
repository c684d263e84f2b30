package procstat

import (
	"testing"
	"time"
)

func TestParseCPU(t *testing.T) {
	for _, tc := range []struct {
		name, stat string
		want       time.Duration
		wantErr    bool
	}{
		{"plain", "4242 (workloads) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 75 0 0 20 0 12 0 100 0 0", 3250 * time.Millisecond, false},
		// A command name may contain spaces and ')' of its own.
		{"odd command name", "7 (a) b (c)) R 1 7 7 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 1 0 0", 30 * time.Millisecond, false},
		{"truncated", "7 (x) R 1 2 3", 0, true},
		{"no command", "garbage", 0, true},
	} {
		got, err := parseCPU([]byte(tc.stat))
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("%s: parseCPU = %v, %v; want %v, error %v", tc.name, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestParseRSS(t *testing.T) {
	got, err := parseRSS([]byte("Name:\tworkloads\nVmPeak:\t  900 kB\nVmRSS:\t   51200 kB\nThreads:\t9\n"))
	if err != nil || got != 51200*1024 {
		t.Errorf("parseRSS = %d, %v; want %d", got, err, 51200*1024)
	}
	if _, err := parseRSS([]byte("Name:\tkthreadd\n")); err == nil {
		t.Error("parseRSS of a kernel thread's status (no VmRSS) succeeded")
	}
}

func TestParseSyscalls(t *testing.T) {
	got, err := parseSyscalls([]byte("rchar: 120\nwchar: 80\nsyscr: 7\nsyscw: 5\nread_bytes: 0\n"))
	if err != nil || got != 12 {
		t.Errorf("parseSyscalls = %d, %v; want 12", got, err)
	}
	if _, err := parseSyscalls([]byte("rchar: 120\n")); err == nil {
		t.Error("parseSyscalls without syscr and syscw succeeded")
	}
	if _, err := parseSyscalls([]byte("syscr: x\nsyscw: 5\n")); err == nil {
		t.Error("parseSyscalls of a malformed count succeeded")
	}
}
