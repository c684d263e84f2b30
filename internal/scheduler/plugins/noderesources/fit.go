// Package noderesources holds the resource plugins: Fit (a filter that
// checks requests against allocatable minus what is already requested,
// and the LeastAllocated score) and BalancedAllocation.
package noderesources

import (
	"context"
	"fmt"
	"math"
	"sort"

	"github.com/orca-project/orca/internal/scheduler/framework"
)

// FitName is the Fit plugin's name.
const FitName = "NodeResourcesFit"

// Fit is the resource filter and the LeastAllocated score.
type Fit struct{}

var (
	_ framework.FilterPlugin = (*Fit)(nil)
	_ framework.ScorePlugin  = (*Fit)(nil)
)

// Name implements framework.Plugin.
func (*Fit) Name() string { return FitName }

// Insufficient lists the resources the node lacks for pod, with upstream's
// reason strings ("Too many pods", "Insufficient cpu", ...).
func Insufficient(pod *framework.PodInfo, node *framework.NodeInfo) []string {
	var reasons []string
	if int64(len(node.Pods))+1 > node.Allocatable.AllowedPodNumber {
		reasons = append(reasons, "Too many pods")
	}
	req, alloc, used := pod.Requests, node.Allocatable, node.Requested
	if req.MilliCPU > 0 && req.MilliCPU > alloc.MilliCPU-used.MilliCPU {
		reasons = append(reasons, "Insufficient cpu")
	}
	if req.Memory > 0 && req.Memory > alloc.Memory-used.Memory {
		reasons = append(reasons, "Insufficient memory")
	}
	if req.EphemeralStorage > 0 && req.EphemeralStorage > alloc.EphemeralStorage-used.EphemeralStorage {
		reasons = append(reasons, "Insufficient ephemeral-storage")
	}
	if len(req.Scalar) > 0 {
		names := make([]string, 0, len(req.Scalar))
		for name, q := range req.Scalar {
			if q > 0 && q > alloc.Scalar[name]-used.Scalar[name] {
				names = append(names, string(name))
			}
		}
		sort.Strings(names)
		for _, n := range names {
			reasons = append(reasons, fmt.Sprintf("Insufficient %s", n))
		}
	}
	return reasons
}

// Filter implements framework.FilterPlugin.
func (*Fit) Filter(_ context.Context, _ *framework.CycleState, pod *framework.PodInfo, node *framework.NodeInfo) *framework.Status {
	if r := Insufficient(pod, node); len(r) > 0 {
		return framework.NewStatus(framework.Unschedulable, r...)
	}
	return nil
}

// Score implements framework.ScorePlugin with upstream's LeastAllocated
// strategy over cpu and memory (weight 1 each): the emptier the node
// after placing the pod, the higher the score. Pods without requests
// count at the scoring defaults.
func (*Fit) Score(_ context.Context, _ *framework.CycleState, pod *framework.PodInfo, node *framework.NodeInfo) (int64, *framework.Status) {
	cpu := leastAllocated(node.NonZeroRequested.MilliCPU+pod.NonZeroCPU, node.Allocatable.MilliCPU)
	mem := leastAllocated(node.NonZeroRequested.Memory+pod.NonZeroMem, node.Allocatable.Memory)
	return (cpu + mem) / 2, nil
}

func leastAllocated(requested, capacity int64) int64 {
	if capacity == 0 || requested > capacity {
		return 0
	}
	return (capacity - requested) * framework.MaxNodeScore / capacity
}

// BalancedName is the BalancedAllocation plugin's name.
const BalancedName = "NodeResourcesBalancedAllocation"

// Balanced favours nodes whose cpu and memory would be used in equal
// proportion after placing the pod, so neither runs out first.
type Balanced struct{}

var _ framework.ScorePlugin = (*Balanced)(nil)

// Name implements framework.Plugin.
func (*Balanced) Name() string { return BalancedName }

// Score implements framework.ScorePlugin: (1 - standard deviation of the
// requested fractions) * MaxNodeScore, fractions capped at 1.
func (*Balanced) Score(_ context.Context, _ *framework.CycleState, pod *framework.PodInfo, node *framework.NodeInfo) (int64, *framework.Status) {
	fr := func(req, alloc int64) float64 {
		if alloc == 0 {
			return 0
		}
		return math.Min(1, float64(req)/float64(alloc))
	}
	cpu := fr(node.Requested.MilliCPU+pod.Requests.MilliCPU, node.Allocatable.MilliCPU)
	mem := fr(node.Requested.Memory+pod.Requests.Memory, node.Allocatable.Memory)
	std := math.Abs(cpu-mem) / 2
	return int64((1 - std) * float64(framework.MaxNodeScore)), nil
}
