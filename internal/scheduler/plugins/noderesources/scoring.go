package noderesources

import (
	"math"

	v1 "k8s.io/api/core/v1"

	"github.com/orca-project/orca/internal/scheduler/framework"
)

// StrategyType names one of upstream's NodeResourcesFit scoring
// strategies.
type StrategyType string

// The strategies, spelled as in KubeSchedulerConfiguration.
const (
	LeastAllocated           StrategyType = "LeastAllocated"
	MostAllocated            StrategyType = "MostAllocated"
	RequestedToCapacityRatio StrategyType = "RequestedToCapacityRatio"
)

// maxCustomPriorityScore is the top of a RequestedToCapacityRatio shape
// (upstream's config.MaxCustomPriorityScore); shapes are scaled from it
// to MaxNodeScore.
const maxCustomPriorityScore = 10

// ResourceWeight is one resource a score looks at, with its weight.
type ResourceWeight struct {
	Name   v1.ResourceName
	Weight int64
}

// ShapePoint is a point of RequestedToCapacityRatio's broken-linear
// function: utilization in percent, score in [0, 10] as configured.
type ShapePoint struct {
	Utilization, Score int64
}

// Strategy is how Fit scores a node. The zero value is upstream's
// default: LeastAllocated over cpu and memory, weight 1 each.
type Strategy struct {
	Type      StrategyType
	Resources []ResourceWeight
	// Shape is RequestedToCapacityRatio's function, in increasing
	// utilization.
	Shape []ShapePoint
}

var defaultResources = []ResourceWeight{{Name: v1.ResourceCPU, Weight: 1}, {Name: v1.ResourceMemory, Weight: 1}}

func (s Strategy) resources() []ResourceWeight {
	if len(s.Resources) == 0 {
		return defaultResources
	}
	return s.Resources
}

// Score combines requested (the node's requests with the pod's added)
// and allocatable, one entry per resource in s.Resources order, into
// a node score with upstream's formulas. Resources the node has none
// of are left out of the weighted mean.
func (s Strategy) Score(requested, allocatable []int64) int64 {
	res := s.resources()
	var per func(req, alloc int64) int64
	switch s.Type {
	case MostAllocated:
		per = mostRequestedScore
	case RequestedToCapacityRatio:
		return s.ratioScore(requested, allocatable)
	default:
		per = leastRequestedScore
	}
	var total, weights int64
	for i := range requested {
		if allocatable[i] == 0 {
			continue
		}
		total += per(requested[i], allocatable[i]) * res[i].Weight
		weights += res[i].Weight
	}
	if weights == 0 {
		return 0
	}
	return total / weights
}

func leastRequestedScore(requested, capacity int64) int64 {
	if capacity == 0 || requested > capacity {
		return 0
	}
	return (capacity - requested) * framework.MaxNodeScore / capacity
}

// mostRequestedScore caps requested at capacity: pods without requests
// count at the scoring defaults and may overshoot a small node.
func mostRequestedScore(requested, capacity int64) int64 {
	if capacity == 0 {
		return 0
	}
	requested = min(requested, capacity)
	return requested * framework.MaxNodeScore / capacity
}

// ratioScore is upstream's RequestedToCapacityRatio: each resource's
// utilization goes through the shape; resources scoring 0 do not count
// in the mean, which is rounded.
func (s Strategy) ratioScore(requested, allocatable []int64) int64 {
	res := s.resources()
	var total, weights int64
	for i := range requested {
		if allocatable[i] == 0 {
			continue
		}
		util := int64(100)
		if requested[i] <= allocatable[i] {
			util = requested[i] * 100 / allocatable[i]
		}
		sc := brokenLinear(s.Shape, util)
		if sc > 0 {
			total += sc * res[i].Weight
			weights += res[i].Weight
		}
	}
	if weights == 0 {
		return 0
	}
	return int64(math.Round(float64(total) / float64(weights)))
}

// brokenLinear interpolates the shape at utilization p, with scores
// scaled to MaxNodeScore.
func brokenLinear(shape []ShapePoint, p int64) int64 {
	scale := framework.MaxNodeScore / maxCustomPriorityScore
	for i, pt := range shape {
		if p <= pt.Utilization {
			if i == 0 {
				return pt.Score * scale
			}
			prev := shape[i-1]
			return prev.Score*scale + (pt.Score-prev.Score)*scale*(p-prev.Utilization)/(pt.Utilization-prev.Utilization)
		}
	}
	if len(shape) == 0 {
		return 0
	}
	return shape[len(shape)-1].Score * scale
}

// amount reads one resource out of a Resource.
func amount(r framework.Resource, name v1.ResourceName) int64 {
	switch name {
	case v1.ResourceCPU:
		return r.MilliCPU
	case v1.ResourceMemory:
		return r.Memory
	case v1.ResourceEphemeralStorage:
		return r.EphemeralStorage
	case v1.ResourcePods:
		return r.AllowedPodNumber
	}
	return r.Scalar[name]
}

// vectors lists, per scored resource, what the node would have requested
// with the pod on it and what it can allocate. nonZero counts request-less
// cpu and memory at the scoring defaults (Fit does, BalancedAllocation
// does not). An extended resource the pod does not ask for is left out,
// as upstream: it would only favour nodes without it.
func vectors(res []ResourceWeight, pod *framework.PodInfo, node *framework.NodeInfo, nonZero bool) (requested, allocatable []int64) {
	requested = make([]int64, len(res))
	allocatable = make([]int64, len(res))
	for i, r := range res {
		podReq := amount(pod.Requests, r.Name)
		nodeReq := amount(node.Requested, r.Name)
		switch {
		case nonZero && r.Name == v1.ResourceCPU:
			podReq, nodeReq = pod.NonZeroCPU, node.NonZeroRequested.MilliCPU
		case nonZero && r.Name == v1.ResourceMemory:
			podReq, nodeReq = pod.NonZeroMem, node.NonZeroRequested.Memory
		case podReq == 0 && !basic(r.Name):
			continue
		}
		allocatable[i] = amount(node.Allocatable, r.Name)
		if allocatable[i] == 0 {
			continue
		}
		requested[i] = nodeReq + podReq
	}
	return requested, allocatable
}

func basic(name v1.ResourceName) bool {
	switch name {
	case v1.ResourceCPU, v1.ResourceMemory, v1.ResourceEphemeralStorage, v1.ResourcePods:
		return true
	}
	return false
}
