package nodestatus

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestParseThresholds(t *testing.T) {
	const gi = int64(1) << 30
	for _, tc := range []struct {
		in             string
		wantErr        bool
		mem, disk, pid int64 // thresholds for 8 GiB memory, 100 GiB disk, 1000 pids
	}{
		{in: "", mem: 100 << 20, disk: 10 * gi, pid: 50},
		{in: "nodefs.available<2Gi", mem: 100 << 20, disk: 2 * gi, pid: 50},
		{in: "memory.available<1%, nodefs.available<0%,pid.available<10", mem: 8 * gi / 100, disk: 0, pid: 10},
		{in: "imagefs.available<15%,nodefs.inodesFree<5%", mem: 100 << 20, disk: 10 * gi, pid: 50},
		{in: "nodefs.available>10%", wantErr: true},
		{in: "nodefs.available<110%", wantErr: true},
		{in: "nodefs.available<lots", wantErr: true},
		{in: "swap.available<1Gi", wantErr: true},
	} {
		got, err := ParseThresholds(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("%q: err %v, want error %v", tc.in, err, tc.wantErr)
			continue
		}
		if tc.wantErr {
			continue
		}
		if m, d, p := got.Memory.of(8*gi), got.Nodefs.of(100*gi), got.PID.of(1000); m != tc.mem || d != tc.disk || p != tc.pid {
			t.Errorf("%q: memory %d disk %d pid %d, want %d %d %d", tc.in, m, d, p, tc.mem, tc.disk, tc.pid)
		}
	}
}

func TestDiskPressureFollowsThreshold(t *testing.T) {
	m := healthy()
	m.DiskBytes, m.DiskAvailable = 100<<30, 5<<30
	pressure := func(th Thresholds) v1.ConditionStatus {
		for _, c := range Conditions(m, th, nil, now) {
			if c.Type == v1.NodeDiskPressure {
				return c.Status
			}
		}
		t.Fatal("no DiskPressure condition")
		return ""
	}
	if got := pressure(DefaultThresholds()); got != v1.ConditionTrue {
		t.Errorf("5%% free under the default 10%%: DiskPressure %s", got)
	}
	low, err := ParseThresholds("nodefs.available<2Gi")
	if err != nil {
		t.Fatal(err)
	}
	if got := pressure(low); got != v1.ConditionFalse {
		t.Errorf("5 GiB free over a 2 GiB threshold: DiskPressure %s", got)
	}
}
