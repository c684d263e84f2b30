package podstatus

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// ActualResources is what a running container holds, as the runtime
// reads it back from the container's cgroup settings (cpu shares and
// quota, memory limit) and, where the cgroup keeps no trace of it (the
// memory request), as the kubelet last gave it. Nil fields are unknown.
type ActualResources struct {
	CPURequest, CPULimit, MemoryRequest, MemoryLimit *resource.Quantity
}

// Upstream's floors: a cpu limit under 10m still gets a 1 ms quota, and a
// request under 2m the minimum of 2 shares, so that near them the value
// read back says nothing of what was asked.
const (
	minMilliCPULimit = 10
	minShares        = 2
)

// statusResources is a container's status.resources as upstream's kubelet
// reports it: the allocated resources, with the values the runtime reports
// for a running container in place of the requests and limits allocated,
// except where both are at the floors, which would only confuse.
func statusResources(alloc v1.ResourceRequirements, run Instance) *v1.ResourceRequirements {
	res := alloc.DeepCopy()
	a := run.Resources
	if run.State != Running || a == nil {
		return res
	}
	if res.Limits != nil {
		if a.CPULimit != nil && (a.CPULimit.MilliValue() > minMilliCPULimit || res.Limits.Cpu().MilliValue() > minMilliCPULimit) {
			res.Limits[v1.ResourceCPU] = a.CPULimit.DeepCopy()
		}
		if a.MemoryLimit != nil {
			res.Limits[v1.ResourceMemory] = a.MemoryLimit.DeepCopy()
		}
	}
	if res.Requests != nil {
		if a.CPURequest != nil && (a.CPURequest.MilliValue() > minShares || res.Requests.Cpu().MilliValue() > minShares) {
			res.Requests[v1.ResourceCPU] = a.CPURequest.DeepCopy()
		}
		if a.MemoryRequest != nil {
			res.Requests[v1.ResourceMemory] = a.MemoryRequest.DeepCopy()
		}
	}
	return res
}

// allocatedOf is the resources the kubelet allocated to a container: its
// spec's unless the kubelet says otherwise (a resize not yet allocated).
func allocatedOf(in Input, c *v1.Container) v1.ResourceRequirements {
	if r, ok := in.Allocated[c.Name]; ok {
		return r
	}
	return c.Resources
}
