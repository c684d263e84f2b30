// Package noderesources holds the resource plugins: Fit (a filter that
// checks requests against allocatable minus what is already requested,
// and a score by one of upstream's strategies: LeastAllocated by default,
// MostAllocated or RequestedToCapacityRatio) and BalancedAllocation.
package noderesources

import (
	"context"
	"fmt"
	"math"
	"sort"

	v1 "k8s.io/api/core/v1"

	"github.com/orca-project/orca/internal/scheduler/framework"
)

// FitName is the Fit plugin's name.
const FitName = "NodeResourcesFit"

// Fit is the resource filter and the score. The zero value is upstream's
// default configuration.
type Fit struct {
	// Strategy is the score; the zero value is LeastAllocated over cpu
	// and memory.
	Strategy Strategy
	// Ignored reports extended resources the filter does not check
	// (ignoredResources, ignoredResourceGroups); nil checks them all.
	Ignored func(v1.ResourceName) bool
}

var (
	_ framework.FilterPlugin = (*Fit)(nil)
	_ framework.ScorePlugin  = (*Fit)(nil)
)

// Name implements framework.Plugin.
func (*Fit) Name() string { return FitName }

// Insufficient lists the resources the node lacks for pod, with upstream's
// reason strings ("Too many pods", "Insufficient cpu", ...).
func Insufficient(pod *framework.PodInfo, node *framework.NodeInfo) []string {
	return insufficient(pod, node, nil)
}

func insufficient(pod *framework.PodInfo, node *framework.NodeInfo, ignored func(v1.ResourceName) bool) []string {
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
			if q > 0 && q > alloc.Scalar[name]-used.Scalar[name] && (ignored == nil || !ignored(name)) {
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
func (f *Fit) Filter(_ context.Context, _ *framework.CycleState, pod *framework.PodInfo, node *framework.NodeInfo) *framework.Status {
	if r := insufficient(pod, node, f.Ignored); len(r) > 0 {
		return framework.NewStatus(framework.Unschedulable, r...)
	}
	return nil
}

// Score implements framework.ScorePlugin with the configured strategy.
// Pods without cpu or memory requests count at the scoring defaults.
func (f *Fit) Score(_ context.Context, _ *framework.CycleState, pod *framework.PodInfo, node *framework.NodeInfo) (int64, *framework.Status) {
	req, alloc := vectors(f.Strategy.resources(), pod, node, true)
	return f.Strategy.Score(req, alloc), nil
}

// BalancedName is the BalancedAllocation plugin's name.
const BalancedName = "NodeResourcesBalancedAllocation"

// Balanced favours nodes whose resources would be used in equal
// proportion after placing the pod, so none runs out first.
type Balanced struct {
	// Resources are those compared; nil is cpu and memory.
	Resources []ResourceWeight
}

var _ framework.ScorePlugin = (*Balanced)(nil)

// Name implements framework.Plugin.
func (*Balanced) Name() string { return BalancedName }

// Score implements framework.ScorePlugin: (1 - standard deviation of the
// requested fractions) * MaxNodeScore, fractions capped at 1.
func (b *Balanced) Score(_ context.Context, _ *framework.CycleState, pod *framework.PodInfo, node *framework.NodeInfo) (int64, *framework.Status) {
	res := b.Resources
	if len(res) == 0 {
		res = defaultResources
	}
	req, alloc := vectors(res, pod, node, false)
	return balancedScore(req, alloc), nil
}

// balancedScore is upstream's: resources the node has none of are left
// out; with two resources the deviation is half their difference.
func balancedScore(requested, allocatable []int64) int64 {
	var fractions []float64
	var sum float64
	for i := range requested {
		if allocatable[i] == 0 {
			continue
		}
		f := math.Min(1, float64(requested[i])/float64(allocatable[i]))
		fractions = append(fractions, f)
		sum += f
	}
	var std float64
	switch n := len(fractions); {
	case n == 2:
		std = math.Abs(fractions[0]-fractions[1]) / 2
	case n > 2:
		mean := sum / float64(n)
		var sq float64
		for _, f := range fractions {
			sq += (f - mean) * (f - mean)
		}
		std = math.Sqrt(sq / float64(n))
	}
	return int64((1 - std) * float64(framework.MaxNodeScore))
}
