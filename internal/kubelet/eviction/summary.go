package eviction

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// Observe reads the signals and the pods' use from the kubelet's summary,
// as upstream's makeSignalObservations and its rank functions do. A
// signal whose stats the summary lacks is left out, so it meets no
// threshold. The summary does not say which volumes use the node's
// disk, so pods (those known; others count no volumes) give them, as
// upstream's localVolumeNames.
func Observe(s *statsapi.Summary, pods []*v1.Pod) (Observations, Usage) {
	obs := Observations{}
	n := s.Node
	if m := n.Memory; m != nil && m.AvailableBytes != nil && m.WorkingSetBytes != nil {
		// The summary's available is the capacity less the working set.
		avail := int64(*m.AvailableBytes)
		obs[MemoryAvailable] = Observation{Available: avail, Capacity: avail + int64(*m.WorkingSetBytes)}
	}
	fsObservations(obs, n.Fs, NodeFsAvailable, NodeFsInodesFree)
	if n.Runtime != nil {
		fsObservations(obs, n.Runtime.ImageFs, ImageFsAvailable, ImageFsInodesFree)
	}
	if r := n.Rlimit; r != nil && r.MaxPID != nil && r.NumOfRunningProcesses != nil {
		obs[PIDAvailable] = Observation{Available: *r.MaxPID - *r.NumOfRunningProcesses, Capacity: *r.MaxPID}
	}

	local := map[types.UID]map[string]bool{}
	for _, p := range pods {
		local[p.UID] = localVolumeNames(p)
	}
	usage := Usage{}
	for _, ps := range s.Pods {
		uid := types.UID(ps.PodRef.UID)
		u := PodUsage{Containers: make(map[string]ContainerUsage, len(ps.Containers))}
		for _, c := range ps.Containers {
			var cu ContainerUsage
			if c.Memory != nil {
				cu.MemoryWorkingSet = value(c.Memory.WorkingSetBytes)
			}
			if c.Rootfs != nil {
				cu.RootfsBytes = value(c.Rootfs.UsedBytes)
				cu.Inodes += value(c.Rootfs.InodesUsed)
			}
			if c.Logs != nil {
				cu.LogsBytes = value(c.Logs.UsedBytes)
				cu.Inodes += value(c.Logs.InodesUsed)
			}
			u.Containers[c.Name] = cu
		}
		for _, v := range ps.VolumeStats {
			if local[uid][v.Name] {
				u.VolumeBytes += value(v.UsedBytes)
				u.VolumeInodes += value(v.InodesUsed)
			}
		}
		if ps.ProcessStats != nil {
			u.Processes = value(ps.ProcessStats.ProcessCount)
		}
		usage[uid] = u
	}
	return obs, usage
}

// fsObservations observes a file system's bytes and inodes.
func fsObservations(obs Observations, fs *statsapi.FsStats, bytes, inodes Signal) {
	if fs == nil {
		return
	}
	if fs.AvailableBytes != nil && fs.CapacityBytes != nil {
		obs[bytes] = Observation{Available: int64(*fs.AvailableBytes), Capacity: int64(*fs.CapacityBytes)}
	}
	if fs.InodesFree != nil && fs.Inodes != nil && *fs.Inodes > 0 {
		obs[inodes] = Observation{Available: int64(*fs.InodesFree), Capacity: int64(*fs.Inodes)}
	}
}

// localVolumeNames are the pod's volumes on the node's file system:
// emptyDirs not in memory, configMaps, git repositories and host paths,
// as upstream's.
func localVolumeNames(p *v1.Pod) map[string]bool {
	out := map[string]bool{}
	for _, v := range p.Spec.Volumes {
		if v.HostPath != nil || v.GitRepo != nil || v.ConfigMap != nil ||
			(v.EmptyDir != nil && v.EmptyDir.Medium == v1.StorageMediumDefault) {
			out[v.Name] = true
		}
	}
	return out
}

func value(p *uint64) int64 {
	if p == nil {
		return 0
	}
	return int64(*p)
}
