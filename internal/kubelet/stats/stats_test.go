package stats

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// fakeRuntime answers the collector's CRI calls from fixed data.
type fakeRuntime struct {
	pids   map[string]string // sandbox ID -> verbose info
	layers []*runtimeapi.ContainerStats
}

func (f fakeRuntime) PodSandboxStatus(_ context.Context, in *runtimeapi.PodSandboxStatusRequest, _ ...grpc.CallOption) (*runtimeapi.PodSandboxStatusResponse, error) {
	return &runtimeapi.PodSandboxStatusResponse{Info: map[string]string{"info": f.pids[in.PodSandboxId]}}, nil
}

func (f fakeRuntime) ListContainerStats(context.Context, *runtimeapi.ListContainerStatsRequest, ...grpc.CallOption) (*runtimeapi.ListContainerStatsResponse, error) {
	return &runtimeapi.ListContainerStatsResponse{Stats: f.layers}, nil
}

func (f fakeRuntime) ImageFsInfo(context.Context, *runtimeapi.ImageFsInfoRequest, ...grpc.CallOption) (*runtimeapi.ImageFsInfoResponse, error) {
	return &runtimeapi.ImageFsInfoResponse{}, nil
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeCgroupV1 lays out one v1 cgroup's counters.
func writeCgroupV1(t *testing.T, root, path, cpu, usage, stat string) {
	write(t, filepath.Join(root, "cpuacct", path, "cpuacct.usage"), cpu)
	write(t, filepath.Join(root, "memory", path, "memory.usage_in_bytes"), usage)
	write(t, filepath.Join(root, "memory", path, "memory.limit_in_bytes"), "9223372036854771712\n")
	write(t, filepath.Join(root, "memory", path, "memory.stat"), stat)
}

// A pod's cgroup is the parent of its sandbox process's, whichever QoS
// layout holds it; containers are found below it by their IDs, and the
// second round has CPU rates.
func TestCollectPods(t *testing.T) {
	for _, tc := range []struct {
		name, podCgroup string
	}{
		{"guaranteed", "/kubepods/pod-uid-1"},
		{"burstable", "/kubepods/burstable/pod-uid-1"},
		{"besteffort, systemd-style names", "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod_uid_1.slice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cg, proc := t.TempDir(), t.TempDir()
			sandbox, ctr := "sb0123", "c4567"
			ctrDir := "cri-containerd-" + ctr + ".scope"
			write(t, filepath.Join(proc, "4242", "cgroup"), "4:memory:"+tc.podCgroup+"/"+sandbox+"\n2:cpuacct:"+tc.podCgroup+"/"+sandbox+"\n0::/\n")
			write(t, filepath.Join(proc, "4242", "net", "dev"), netDev)
			writeCgroupV1(t, cg, tc.podCgroup, "3000000000\n", "104857600\n", "total_inactive_file 4194304\ntotal_rss 94371840\n")
			writeCgroupV1(t, cg, tc.podCgroup+"/"+sandbox, "1000000\n", "1048576\n", "total_inactive_file 0\n")
			writeCgroupV1(t, cg, tc.podCgroup+"/"+ctrDir, "2999000000\n", "103809024\n", "total_inactive_file 4194304\ntotal_rss 94371840\ntotal_pgfault 17\n")
			now := time.Unix(1700000000, 0)
			c := New(Config{
				NodeName: "n1", CgroupRoot: cg, ProcRoot: proc,
				Runtime: fakeRuntime{pids: map[string]string{sandbox: `{"pid":4242}`}, layers: []*runtimeapi.ContainerStats{{
					Attributes:    &runtimeapi.ContainerAttributes{Id: ctr},
					WritableLayer: &runtimeapi.FilesystemUsage{Timestamp: now.UnixNano(), UsedBytes: &runtimeapi.UInt64Value{Value: 8192}},
				}}},
				Pods: func() []Pod {
					return []Pod{{Namespace: "ns", Name: "p", UID: "uid-1", SandboxID: sandbox, StartTime: now.Add(-time.Minute),
						Containers: []Container{{Name: "app", ID: ctr, Image: "img", StartTime: now.Add(-time.Minute)}}}}
				},
			})
			c.now = func() time.Time { return now }
			snap := c.Collect(context.Background())
			if len(snap.Summary.Pods) != 1 {
				t.Fatalf("pods: %+v", snap.Summary.Pods)
			}
			p := snap.Summary.Pods[0]
			if p.CPU == nil || *p.CPU.UsageCoreNanoSeconds != 3e9 || p.CPU.UsageNanoCores != nil {
				t.Errorf("pod CPU %+v, want 3e9 ns and no rate yet", p.CPU)
			}
			if p.Memory == nil || *p.Memory.WorkingSetBytes != 96<<20 || *p.Memory.RSSBytes != 90<<20 {
				t.Errorf("pod memory %+v, want working set 96 MiB, RSS 90 MiB", p.Memory)
			}
			if p.Network == nil || p.Network.Name != "eth0" || *p.Network.RxBytes != 2345678 {
				t.Errorf("pod network %+v", p.Network)
			}
			ct := p.Containers[0]
			if ct.Memory == nil || *ct.Memory.WorkingSetBytes != 95<<20 || *ct.Memory.PageFaults != 17 || ct.Rootfs == nil || *ct.Rootfs.UsedBytes != 8192 {
				t.Errorf("container stats %+v", ct)
			}
			ids := map[string]bool{}
			for _, g := range snap.Cgroups {
				ids[g.ID] = true
			}
			for _, want := range []string{"/", tc.podCgroup, tc.podCgroup + "/" + sandbox, tc.podCgroup + "/" + ctrDir} {
				if !ids[want] {
					t.Errorf("no cgroup %s among %v", want, ids)
				}
			}

			// Ten seconds later the container used half a core more.
			writeCgroupV1(t, cg, tc.podCgroup+"/"+ctrDir, "7999000000\n", "103809024\n", "total_inactive_file 4194304\n")
			now = now.Add(10 * time.Second)
			p = c.Collect(context.Background()).Summary.Pods[0]
			if r := p.Containers[0].CPU.UsageNanoCores; r == nil || *r != 5e8 {
				t.Errorf("container rate %v, want 5e8 nano-cores", r)
			}
		})
	}
}

// The eviction manager's summary: none before the first round, none once
// sampling has stalled for three intervals, and a new round on request.
func TestSummary(t *testing.T) {
	now := time.Unix(1700000000, 0)
	newCollector := func() *Collector {
		c := New(Config{NodeName: "n1", CgroupRoot: t.TempDir(), ProcRoot: t.TempDir(), Runtime: fakeRuntime{},
			Pods: func() []Pod { return nil }, Interval: 10 * time.Second})
		c.now = func() time.Time { return now }
		return c
	}
	for _, tc := range []struct {
		name    string
		taken   *time.Time
		wantErr bool
	}{
		{name: "no round yet", wantErr: true},
		{name: "last round 25s old", taken: ptr(now.Add(-25 * time.Second))},
		{name: "last round 31s old: stale", taken: ptr(now.Add(-31 * time.Second)), wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCollector()
			if tc.taken != nil {
				c.latest = &Snapshot{Time: *tc.taken, Summary: statsapi.Summary{Node: statsapi.NodeStats{NodeName: "n1"}}}
			}
			s, err := c.Summary(context.Background(), false)
			if tc.wantErr {
				if !errors.Is(err, ErrUnavailable) {
					t.Errorf("summary %v, err %v: want ErrUnavailable", s, err)
				}
				return
			}
			if err != nil || s.Node.NodeName != "n1" {
				t.Errorf("summary %v, err %v", s, err)
			}
		})
	}

	t.Run("update takes a new round", func(t *testing.T) {
		c := newCollector()
		rounds := 0
		c.cfg.Pods = func() []Pod { rounds++; return nil }
		c.cfg.Interval = time.Hour
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go c.Run(ctx)
		for i := 1; i <= 2; i++ {
			if _, err := c.Summary(ctx, true); err != nil {
				t.Fatal(err)
			}
		}
		// The first round at start, then one per request: a request
		// waits for the round in progress and then takes its own.
		if rounds != 3 {
			t.Errorf("%d rounds, want 3", rounds)
		}
	})
}
