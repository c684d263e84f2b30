package eviction

import (
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

func TestObserve(t *testing.T) {
	gi := int64(1024 * mi)
	fs := func(capacity, avail, inodes, free int64) *statsapi.FsStats {
		return &statsapi.FsStats{CapacityBytes: u64(capacity), AvailableBytes: u64(avail), Inodes: u64(inodes), InodesFree: u64(free)}
	}
	node := statsapi.NodeStats{
		Memory:  &statsapi.MemoryStats{AvailableBytes: u64(3 * gi), WorkingSetBytes: u64(5 * gi)},
		Fs:      fs(100*gi, 40*gi, 1000, 600),
		Runtime: &statsapi.RuntimeStats{ImageFs: fs(50*gi, 10*gi, 500, 100)},
		Rlimit:  &statsapi.RlimitStats{MaxPID: ptrTo(int64(4194304)), NumOfRunningProcesses: ptrTo(int64(312))},
	}
	withVolumes := &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "web"}, Spec: v1.PodSpec{Volumes: []v1.Volume{
		{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}},
		{Name: "ram", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory}}},
		{Name: "token", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{}}},
		{Name: "conf", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{}}},
	}}}
	vol := func(name string, bytes, inodes int64) statsapi.VolumeStats {
		return statsapi.VolumeStats{Name: name, FsStats: statsapi.FsStats{UsedBytes: u64(bytes), InodesUsed: u64(inodes)}}
	}
	web := statsapi.PodStats{
		PodRef: statsapi.PodReference{Name: "web", Namespace: "ns", UID: "web"},
		Containers: []statsapi.ContainerStats{
			{Name: "app", Memory: &statsapi.MemoryStats{WorkingSetBytes: u64(200 * mi)},
				Rootfs: &statsapi.FsStats{UsedBytes: u64(30 * mi), InodesUsed: u64(40)},
				Logs:   &statsapi.FsStats{UsedBytes: u64(5 * mi), InodesUsed: u64(2)}},
			{Name: "starting"},
		},
		VolumeStats:  []statsapi.VolumeStats{vol("scratch", 70*mi, 9), vol("ram", 1*gi, 1), vol("token", 1*mi, 5), vol("conf", 2*mi, 3)},
		ProcessStats: &statsapi.ProcessStats{ProcessCount: u64(7)},
	}
	allObs := Observations{
		MemoryAvailable:   {Available: 3 * gi, Capacity: 8 * gi},
		NodeFsAvailable:   {Available: 40 * gi, Capacity: 100 * gi},
		NodeFsInodesFree:  {Available: 600, Capacity: 1000},
		ImageFsAvailable:  {Available: 10 * gi, Capacity: 50 * gi},
		ImageFsInodesFree: {Available: 100, Capacity: 500},
		PIDAvailable:      {Available: 4194304 - 312, Capacity: 4194304},
	}
	webUsage := PodUsage{
		Containers: map[string]ContainerUsage{
			"app":      {MemoryWorkingSet: 200 * mi, RootfsBytes: 30 * mi, LogsBytes: 5 * mi, Inodes: 42},
			"starting": {},
		},
		Processes: 7,
	}
	webLocal := webUsage
	webLocal.VolumeBytes, webLocal.VolumeInodes = 72*mi, 12

	for _, tc := range []struct {
		name      string
		summary   statsapi.Summary
		pods      []*v1.Pod
		wantObs   Observations
		wantUsage Usage
	}{
		{name: "every signal; local volumes of the pod's spec: emptyDir on disk and configMap, not memory or projected",
			summary: statsapi.Summary{Node: node, Pods: []statsapi.PodStats{web}}, pods: []*v1.Pod{withVolumes},
			wantObs: allObs, wantUsage: Usage{"web": webLocal}},
		{name: "a pod whose spec is unknown counts no volumes",
			summary: statsapi.Summary{Node: node, Pods: []statsapi.PodStats{web}},
			wantObs: allObs, wantUsage: Usage{"web": webUsage}},
		{name: "nothing sampled: no signal, so no threshold met",
			summary: statsapi.Summary{}, wantObs: Observations{}, wantUsage: Usage{}},
		{name: "partial stats: memory without a working set, a file system without inodes, no pid limit",
			summary: statsapi.Summary{Node: statsapi.NodeStats{
				Memory:  &statsapi.MemoryStats{AvailableBytes: u64(gi)},
				Fs:      &statsapi.FsStats{CapacityBytes: u64(10 * gi), AvailableBytes: u64(gi)},
				Runtime: &statsapi.RuntimeStats{},
				Rlimit:  &statsapi.RlimitStats{NumOfRunningProcesses: ptrTo(int64(10))},
			}},
			wantObs:   Observations{NodeFsAvailable: {Available: gi, Capacity: 10 * gi}},
			wantUsage: Usage{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obs, usage := Observe(&tc.summary, tc.pods)
			if !reflect.DeepEqual(obs, tc.wantObs) {
				t.Errorf("observations\n%v\nwant\n%v", obs, tc.wantObs)
			}
			if !reflect.DeepEqual(usage, tc.wantUsage) {
				t.Errorf("usage\n%+v\nwant\n%+v", usage, tc.wantUsage)
			}
		})
	}
}

func ptrTo[T any](v T) *T { return &v }
