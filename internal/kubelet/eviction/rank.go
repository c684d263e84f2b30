package eviction

import (
	"fmt"
	"sort"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
)

// PodUsage is what one pod uses, as the node's stats report it.
type PodUsage struct {
	// Containers by name.
	Containers map[string]ContainerUsage
	// VolumeBytes and VolumeInodes are what its local volumes (emptyDir)
	// hold on the node's file system.
	VolumeBytes, VolumeInodes int64
	// Processes is how many processes it runs.
	Processes int64
}

// ContainerUsage is one container's use.
type ContainerUsage struct {
	// MemoryWorkingSet is the memory the kernel cannot easily reclaim.
	MemoryWorkingSet int64
	// RootfsBytes is its writable layer, LogsBytes its log files.
	RootfsBytes, LogsBytes int64
	// Inodes are those its writable layer and logs hold.
	Inodes int64
}

// Usage maps pods to what they use; a pod missing has no stats.
type Usage map[types.UID]PodUsage

// memory is the pod's working set.
func (p PodUsage) memory() int64 {
	var n int64
	for _, c := range p.Containers {
		n += c.MemoryWorkingSet
	}
	return n
}

// disk is the pod's use of a disk resource: bytes or inodes of its
// writable layers, logs and local volumes, the node's one file system
// holding them all.
func (p PodUsage) disk(r v1.ResourceName) int64 {
	var n int64
	for _, c := range p.Containers {
		if r == resourceInodes {
			n += c.Inodes
		} else {
			n += c.RootfsBytes + c.LogsBytes
		}
	}
	if r == resourceInodes {
		return n + p.VolumeInodes
	}
	return n + p.VolumeBytes
}

// usageOf is a pod's use of the resource an eviction reclaims.
func usageOf(p PodUsage, r v1.ResourceName) int64 {
	switch r {
	case v1.ResourceMemory:
		return p.memory()
	case resourcePIDs:
		return p.Processes
	}
	return p.disk(r)
}

// requestOf is the sum of a pod's requests of a resource: the larger of
// its regular containers together and any init container, as the
// scheduler counts them. Inodes and pids are never requested.
func requestOf(pod *v1.Pod, r v1.ResourceName) int64 {
	if r != v1.ResourceMemory && r != v1.ResourceEphemeralStorage {
		return 0
	}
	var sum int64
	for _, c := range pod.Spec.Containers {
		q := c.Resources.Requests[r]
		sum += q.Value()
	}
	for _, c := range pod.Spec.InitContainers {
		q := c.Resources.Requests[r]
		sum = max(sum, q.Value())
	}
	return sum
}

func priorityOf(pod *v1.Pod) int32 {
	if pod.Spec.Priority != nil {
		return *pod.Spec.Priority
	}
	return 0
}

// Rank orders pods for eviction to reclaim a resource, first to go
// first, as upstream's rankMemoryPressure and rankDiskPressureFunc: pods
// using more than they requested, then lower priority, then those using
// most above their request. Pods without stats count as using nothing.
// For pids upstream ranks by priority alone.
func Rank(pods []*v1.Pod, usage Usage, r v1.ResourceName) []*v1.Pod {
	out := append([]*v1.Pod(nil), pods...)
	over := func(p *v1.Pod) int64 {
		u, ok := usage[p.UID]
		if !ok {
			return 0
		}
		return usageOf(u, r) - requestOf(p, r)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if r != resourcePIDs {
			ea, eb := over(a) > 0, over(b) > 0
			if ea != eb {
				return ea
			}
		}
		if pa, pb := priorityOf(a), priorityOf(b); pa != pb {
			return pa < pb
		}
		if r == resourcePIDs {
			return false
		}
		return over(a) > over(b)
	})
	return out
}

// Message is upstream's eviction message: the resource the node was low
// on, the threshold and what was available, and each container using
// more than it requested.
func Message(r v1.ResourceName, t Threshold, o Observation, pod *v1.Pod, usage Usage) string {
	msg := fmt.Sprintf("The node was low on resource: %v. ", r)
	if o.Capacity > 0 || o.Available > 0 {
		msg += fmt.Sprintf("Threshold quantity: %v, available: %v. ", quantity(t.Value.Of(o.Capacity), r), quantity(o.Available, r))
	}
	u, ok := usage[pod.UID]
	if !ok {
		return msg
	}
	containers := append(append([]v1.Container(nil), pod.Spec.Containers...), pod.Spec.InitContainers...)
	for _, c := range containers {
		cu, ok := u.Containers[c.Name]
		if !ok {
			continue
		}
		var used int64
		switch r {
		case v1.ResourceMemory:
			used = cu.MemoryWorkingSet
		case v1.ResourceEphemeralStorage:
			used = cu.RootfsBytes + cu.LogsBytes
		default:
			continue
		}
		req := c.Resources.Requests[r]
		if used > req.Value() {
			msg += fmt.Sprintf("Container %s was using %s, request is %s, has larger consumption of %v. ", c.Name, quantity(used, r).String(), req.String(), r)
		}
	}
	return msg
}

// quantity formats an amount as upstream prints it: bytes in binary
// units (a plain number when not a round one), counts as numbers.
func quantity(n int64, r v1.ResourceName) *resource.Quantity {
	if r == resourceInodes || r == resourcePIDs {
		return resource.NewQuantity(n, resource.DecimalSI)
	}
	return resource.NewQuantity(n, resource.BinarySI)
}
