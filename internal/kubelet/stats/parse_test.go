package stats

import (
	"reflect"
	"testing"
)

func TestParseProcCgroup(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       CgroupPaths
		wantErr    bool
	}{{
		name: "v1 hybrid, separate cpu and cpuacct",
		text: "9:name=systemd:/\n8:pids:/kubepods/besteffort/pod1/abc\n4:memory:/kubepods/besteffort/pod1/abc\n2:cpuacct:/kubepods/besteffort/pod1/abc\n1:cpu:/kubepods/besteffort/pod1/abc\n0::/\n",
		want: CgroupPaths{V1: map[string]string{"name=systemd": "/", "pids": "/kubepods/besteffort/pod1/abc", "memory": "/kubepods/besteffort/pod1/abc", "cpuacct": "/kubepods/besteffort/pod1/abc", "cpu": "/kubepods/besteffort/pod1/abc"}, Unified: "/"},
	}, {
		name: "v1 with a joint cpu,cpuacct mount",
		text: "3:cpu,cpuacct:/kubepods/pod2/x\n2:memory:/kubepods/pod2/x\n",
		want: CgroupPaths{V1: map[string]string{"cpu": "/kubepods/pod2/x", "cpuacct": "/kubepods/pod2/x", "memory": "/kubepods/pod2/x"}},
	}, {
		name: "v2",
		text: "0::/kubepods/burstable/pod3/def\n",
		want: CgroupPaths{V1: map[string]string{}, Unified: "/kubepods/burstable/pod3/def"},
	}, {
		name: "systemd driver path with colons kept",
		text: "0::/kubepods.slice/kubepods-pod4.slice/cri-containerd-a:b.scope\n",
		want: CgroupPaths{V1: map[string]string{}, Unified: "/kubepods.slice/kubepods-pod4.slice/cri-containerd-a:b.scope"},
	}, {
		name: "malformed", text: "garbage\n", wantErr: true,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseProcCgroup(tc.text)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if !tc.wantErr && !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

const memoryStatV1 = `cache 11468800
rss 5701632
pgfault 123355
inactive_file 57344
total_cache 40960000
total_rss 104857600
total_pgfault 5000
total_pgmajfault 7
total_inactive_file 20480000
total_active_file 4096
`

const memoryStatV2 = `anon 52428800
file 10485760
inactive_file 8388608
active_file 2097152
pgfault 912
pgmajfault 3
`

func TestMemory(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  Memory
		want Memory
	}{{
		name: "v1 uses the hierarchical totals",
		got:  MemoryV1(150000000, 9223372036854771712, ParseFlatKeyed(memoryStatV1)),
		want: Memory{Usage: 150000000, WorkingSet: 150000000 - 20480000, RSS: 104857600, PageFaults: 5000, MajorPageFaults: 7},
	}, {
		name: "v1 with a limit",
		got:  MemoryV1(1000, 268435456, map[string]uint64{"total_inactive_file": 200}),
		want: Memory{Usage: 1000, WorkingSet: 800, Limit: 268435456},
	}, {
		name: "v1 working set floors at zero",
		got:  MemoryV1(100, 0, map[string]uint64{"total_inactive_file": 400}),
		want: Memory{Usage: 100},
	}, {
		name: "v2",
		got:  MemoryV2(62914560, 0, ParseFlatKeyed(memoryStatV2)),
		want: Memory{Usage: 62914560, WorkingSet: 62914560 - 8388608, RSS: 52428800, PageFaults: 912, MajorPageFaults: 3},
	}, {
		name: "node from meminfo",
		got:  MemoryFromMeminfo(ParseMeminfo("MemTotal:       4000 kB\nMemFree:        1000 kB\nInactive(file):  500 kB\nAnonPages:       700 kB\nHugePages_Total:       0\n")),
		want: Memory{Usage: 3000 * 1024, WorkingSet: 2500 * 1024, RSS: 700 * 1024, Limit: 4000 * 1024},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("got %+v, want %+v", tc.got, tc.want)
			}
		})
	}
}

func TestParseUint(t *testing.T) {
	for _, tc := range []struct {
		text    string
		want    uint64
		ok      bool
		wantErr bool
	}{
		{"123456789\n", 123456789, true, false},
		{"max\n", 0, false, false},
		{"", 0, false, true},
		{"-1", 0, false, true},
	} {
		n, ok, err := ParseUint(tc.text)
		if n != tc.want || ok != tc.ok || (err != nil) != tc.wantErr {
			t.Errorf("ParseUint(%q) = %d, %v, %v; want %d, %v, error %v", tc.text, n, ok, err, tc.want, tc.ok, tc.wantErr)
		}
	}
}

func TestCPUV2(t *testing.T) {
	for _, tc := range []struct {
		text string
		want uint64
	}{
		{"usage_usec 1500\nuser_usec 1000\nsystem_usec 500\nnr_periods 0\n", 1500000},
		{"nr_periods 0\n", 0},
	} {
		if got := CPUV2(ParseFlatKeyed(tc.text)); got != tc.want {
			t.Errorf("CPUV2(%q) = %d, want %d", tc.text, got, tc.want)
		}
	}
}

const netDev = `Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo:    1000      10    0    0    0     0          0         0     1000      10    0    0    0     0       0          0
  eth0: 2345678    1234    1    2    0     0          0         0   876543     567    3    4    0     0       0          0
`

func TestParseNetDev(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []Interface
		wantErr    bool
	}{{
		name: "loopback left out",
		text: netDev,
		want: []Interface{{Name: "eth0", RxBytes: 2345678, RxPackets: 1234, RxErrors: 1, RxDropped: 2, TxBytes: 876543, TxPackets: 567, TxErrors: 3, TxDropped: 4}},
	}, {
		name: "short line", text: "eth0: 1 2 3\n", wantErr: true,
	}, {
		name: "headers only", text: "Inter-|\n face |\n",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseNetDev(tc.text)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestParseProcStatCPU(t *testing.T) {
	// user nice system idle iowait irq softirq steal
	text := "cpu  100 20 30 5000 40 5 6 7 0 0\ncpu0 50 10 15 2500 20 2 3 3 0 0\nbtime 1700000000\n"
	got, err := ParseProcStatCPU(text, 100)
	if err != nil {
		t.Fatal(err)
	}
	if want := uint64(100+20+30+5+6+7) * 10_000_000; got != want {
		t.Errorf("got %d, want %d", got, want)
	}
	if _, err := ParseProcStatCPU("intr 1\n", 100); err == nil {
		t.Error("no cpu line: want an error")
	}
}

func TestNanoCores(t *testing.T) {
	const s = int64(1e9)
	for _, tc := range []struct {
		name          string
		prev, cur     uint64
		prevAt, curAt int64
		want          uint64
	}{
		{"one core busy", 0, 10 * uint64(s), 0, 10 * s, 1e9},
		{"a quarter core", 5e9, 7.5e9, 100 * s, 110 * s, 250e6},
		{"idle", 5e9, 5e9, 0, 10 * s, 0},
		{"counter reset", 9e9, 1e9, 0, 10 * s, 0},
		{"same instant", 1e9, 2e9, 5 * s, 5 * s, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := NanoCores(tc.prev, tc.cur, tc.prevAt, tc.curAt); got != tc.want {
				t.Errorf("got %d, want %d", got, tc.want)
			}
		})
	}
}

func TestSandboxPID(t *testing.T) {
	for _, tc := range []struct {
		name    string
		info    map[string]string
		want    int
		wantErr bool
	}{
		{"containerd's verbose info", map[string]string{"info": `{"pid":4242,"processStatus":"running","netNamespaceClosed":false}`}, 4242, false},
		{"no info", nil, 0, true},
		{"no pid", map[string]string{"info": `{"processStatus":"created"}`}, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := SandboxPID(tc.info)
			if got != tc.want || (err != nil) != tc.wantErr {
				t.Errorf("got %d, %v; want %d, error %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}
