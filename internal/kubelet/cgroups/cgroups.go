// Package cgroups lays out the kubelet's QoS cgroup tree as upstream's
// cgroupfs driver does: /kubepods holds the Guaranteed pods directly
// (/kubepods/pod<uid>), /kubepods/burstable and /kubepods/besteffort the
// others. The kubelet creates each pod's cgroup with the pod's limits
// before its sandbox starts, keeps the tiers' cpu shares in step with
// their pods, and removes the pod's cgroup once the pod is gone.
//
// What goes where, and with which values, are pure functions (Path,
// PodValues, BurstableShares, Files); Manager writes them to cgroup v1
// or v2 file systems.
package cgroups

import (
	"strconv"

	v1 "k8s.io/api/core/v1"

	"github.com/orca-project/orca/internal/kubelet/podstatus"
)

// Root is the cgroup all pods live under.
const Root = "/kubepods"

// Upstream's cpu arithmetic (pkg/kubelet/cm/helpers_linux.go).
const (
	minShares     = 2
	maxShares     = 262144
	sharesPerCPU  = 1024
	milliPerCPU   = 1000
	quotaPeriod   = 100000
	minQuotaValue = 1000
)

// TierPath is the cgroup of a QoS class's tier.
func TierPath(qos v1.PodQOSClass) string {
	switch qos {
	case v1.PodQOSBurstable:
		return Root + "/burstable"
	case v1.PodQOSBestEffort:
		return Root + "/besteffort"
	}
	return Root
}

// Path is the pod's cgroup, the CgroupParent of its sandbox.
func Path(pod *v1.Pod) string {
	return TierPath(podstatus.QOSClass(pod)) + "/pod" + string(pod.UID)
}

// Values are a cgroup's settings; a negative limit is none.
type Values struct {
	CPUShares   int64
	CPUQuota    int64
	CPUPeriod   int64
	MemoryLimit int64
}

// MilliCPUToShares is upstream's conversion of a cpu request to shares.
func MilliCPUToShares(milli int64) int64 {
	if milli == 0 {
		return minShares
	}
	s := milli * sharesPerCPU / milliPerCPU
	return min(max(s, minShares), maxShares)
}

// milliCPUToQuota is upstream's conversion of a cpu limit to a CFS quota.
func milliCPUToQuota(milli int64) int64 {
	if milli == 0 {
		return -1
	}
	return max(milli*quotaPeriod/milliPerCPU, minQuotaValue)
}

// podTotals are a pod's effective requests and limits, as the scheduler
// counts them (regular containers together, or the largest init
// container), and whether every container declares each limit.
func podTotals(pod *v1.Pod) (cpuReq, cpuLim, memLim int64, cpuLimAll, memLimAll bool) {
	cpuLimAll, memLimAll = true, true
	for _, c := range pod.Spec.Containers {
		cpuReq += c.Resources.Requests.Cpu().MilliValue()
		cpuLim += c.Resources.Limits.Cpu().MilliValue()
		memLim += c.Resources.Limits.Memory().Value()
	}
	for _, c := range pod.Spec.InitContainers {
		cpuReq = max(cpuReq, c.Resources.Requests.Cpu().MilliValue())
		cpuLim = max(cpuLim, c.Resources.Limits.Cpu().MilliValue())
		memLim = max(memLim, c.Resources.Limits.Memory().Value())
	}
	for _, cs := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range cs {
			if _, ok := c.Resources.Limits[v1.ResourceCPU]; !ok {
				cpuLimAll = false
			}
			if _, ok := c.Resources.Limits[v1.ResourceMemory]; !ok {
				memLimAll = false
			}
		}
	}
	if ov := pod.Spec.Overhead; ov != nil {
		cpuReq += ov.Cpu().MilliValue()
		cpuLim += ov.Cpu().MilliValue()
		memLim += ov.Memory().Value()
	}
	return
}

// PodValues are the pod cgroup's settings, as upstream's
// ResourceConfigForPod: cpu shares from its requests, and a cpu quota
// and memory limit only when every container has that limit.
func PodValues(pod *v1.Pod) Values {
	v := Values{CPUShares: minShares, CPUQuota: -1, CPUPeriod: quotaPeriod, MemoryLimit: -1}
	cpuReq, cpuLim, memLim, cpuAll, memAll := podTotals(pod)
	if podstatus.QOSClass(pod) == v1.PodQOSBestEffort {
		return v
	}
	v.CPUShares = MilliCPUToShares(cpuReq)
	if cpuAll {
		v.CPUQuota = milliCPUToQuota(cpuLim)
	}
	if memAll && memLim > 0 {
		v.MemoryLimit = memLim
	}
	return v
}

// BurstableShares is the burstable tier's cpu shares: its pods' cpu
// requests together (besteffort's are always the minimum, 2).
func BurstableShares(pods []*v1.Pod) int64 {
	var milli int64
	for _, p := range pods {
		if podstatus.QOSClass(p) == v1.PodQOSBurstable {
			req, _, _, _, _ := podTotals(p)
			milli += req
		}
	}
	return MilliCPUToShares(milli)
}

// TierValues are a tier's settings: cpu shares only.
func TierValues(qos v1.PodQOSClass, pods []*v1.Pod) Values {
	v := Values{CPUShares: minShares, CPUQuota: -1, CPUPeriod: quotaPeriod, MemoryLimit: -1}
	if qos == v1.PodQOSBurstable {
		v.CPUShares = BurstableShares(pods)
	}
	return v
}

// File is one setting: the controller (v1's hierarchy, "" on v2) and
// the file name in the cgroup's directory.
type File struct {
	Controller, Name, Value string
}

// Files are the files that carry values on cgroup v1 or v2, as runc
// converts them (v2's cpu.weight from shares).
func Files(v Values, v2 bool) []File {
	if !v2 {
		mem := "-1"
		if v.MemoryLimit >= 0 {
			mem = strconv.FormatInt(v.MemoryLimit, 10)
		}
		return []File{
			{"cpu", "cpu.shares", strconv.FormatInt(v.CPUShares, 10)},
			{"cpu", "cpu.cfs_period_us", strconv.FormatInt(v.CPUPeriod, 10)},
			{"cpu", "cpu.cfs_quota_us", strconv.FormatInt(v.CPUQuota, 10)},
			{"memory", "memory.limit_in_bytes", mem},
		}
	}
	quota, mem := "max", "max"
	if v.CPUQuota >= 0 {
		quota = strconv.FormatInt(v.CPUQuota, 10)
	}
	if v.MemoryLimit >= 0 {
		mem = strconv.FormatInt(v.MemoryLimit, 10)
	}
	return []File{
		{"", "cpu.weight", strconv.FormatInt(SharesToWeight(v.CPUShares), 10)},
		{"", "cpu.max", quota + " " + strconv.FormatInt(v.CPUPeriod, 10)},
		{"", "memory.max", mem},
	}
}

// SharesToWeight is runc's conversion of v1 cpu shares to v2's weight.
func SharesToWeight(shares int64) int64 {
	if shares == 0 {
		return 0
	}
	return 1 + ((shares-2)*9999)/262142
}

// Widest is what holds both a and b: the larger shares, and the larger
// quota and memory limit, none beating any. A pod being resized has it
// while its containers move from a to b, as upstream raises the pod's
// cgroup before its containers and lowers it after them.
func Widest(a, b Values) Values {
	wider := func(x, y int64) int64 {
		if x < 0 || y < 0 {
			return -1
		}
		return max(x, y)
	}
	return Values{
		CPUShares:   max(a.CPUShares, b.CPUShares),
		CPUQuota:    wider(a.CPUQuota, b.CPUQuota),
		CPUPeriod:   b.CPUPeriod,
		MemoryLimit: wider(a.MemoryLimit, b.MemoryLimit),
	}
}
