package framework

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
)

// Resource is a compact sum of resources, in the units the scheduler
// compares: millicores, bytes, pod count, and integer counts of extended
// resources (nvidia.com/gpu, hugepages-*, ...).
type Resource struct {
	MilliCPU         int64
	Memory           int64
	EphemeralStorage int64
	AllowedPodNumber int64
	Scalar           map[v1.ResourceName]int64
}

// NewResource converts a ResourceList.
func NewResource(rl v1.ResourceList) Resource {
	var r Resource
	r.AddList(rl)
	return r
}

// AddList adds a ResourceList.
func (r *Resource) AddList(rl v1.ResourceList) {
	for name, q := range rl {
		switch name {
		case v1.ResourceCPU:
			r.MilliCPU += q.MilliValue()
		case v1.ResourceMemory:
			r.Memory += q.Value()
		case v1.ResourceEphemeralStorage:
			r.EphemeralStorage += q.Value()
		case v1.ResourcePods:
			r.AllowedPodNumber += q.Value()
		default:
			if isScalar(name) {
				r.SetScalar(name, r.Scalar[name]+q.Value())
			}
		}
	}
}

// Add adds another Resource (sign -1 subtracts it).
func (r *Resource) Add(o Resource, sign int64) {
	r.MilliCPU += sign * o.MilliCPU
	r.Memory += sign * o.Memory
	r.EphemeralStorage += sign * o.EphemeralStorage
	r.AllowedPodNumber += sign * o.AllowedPodNumber
	for name, v := range o.Scalar {
		r.SetScalar(name, r.Scalar[name]+sign*v)
	}
}

// SetScalar sets an extended resource.
func (r *Resource) SetScalar(name v1.ResourceName, v int64) {
	if r.Scalar == nil {
		r.Scalar = map[v1.ResourceName]int64{}
	}
	r.Scalar[name] = v
}

// Clone copies the Resource, including its map.
func (r Resource) Clone() Resource {
	c := r
	if r.Scalar != nil {
		c.Scalar = make(map[v1.ResourceName]int64, len(r.Scalar))
		for k, v := range r.Scalar {
			c.Scalar[k] = v
		}
	}
	return c
}

// isScalar is upstream's IsScalarResourceName: extended resources (a
// domain-qualified name outside kubernetes.io), hugepages and
// attachable volumes are counted; the rest (e.g. "storage") are not.
func isScalar(name v1.ResourceName) bool {
	s := string(name)
	if len(s) > len(v1.ResourceHugePagesPrefix) && s[:len(v1.ResourceHugePagesPrefix)] == v1.ResourceHugePagesPrefix {
		return true
	}
	if len(s) > len("attachable-volumes-") && s[:len("attachable-volumes-")] == "attachable-volumes-" {
		return true
	}
	for i := 0; i < len(s); i++ {
		if s[i] == '/' {
			prefix := s[:i]
			return prefix != "kubernetes.io" && !hasSuffix(prefix, ".kubernetes.io") && prefix != "requests"
		}
	}
	return false
}

func hasSuffix(s, suffix string) bool {
	return len(s) >= len(suffix) && s[len(s)-len(suffix):] == suffix
}

// Defaults for pods that request nothing, used only by scoring, as
// upstream does: without them a node full of request-less pods would look
// empty and attract every new pod.
const (
	DefaultMilliCPURequest int64 = 100
	DefaultMemoryRequest   int64 = 200 * 1024 * 1024
)

// podRequests computes what a pod asks of a node the way upstream does:
// the larger of the sum of regular (and sidecar) containers and the
// largest init container, plus pod overhead, with pod-level resources
// taking precedence when set.
func podRequests(pod *v1.Pod) (req Resource, nonZeroCPU, nonZeroMem int64) {
	rl := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	req = NewResource(rl)
	nz := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{
		NonMissingContainerRequests: v1.ResourceList{
			v1.ResourceCPU:    *resourceQuantity(DefaultMilliCPURequest, true),
			v1.ResourceMemory: *resourceQuantity(DefaultMemoryRequest, false),
		},
	})
	nzr := NewResource(nz)
	return req, nzr.MilliCPU, nzr.Memory
}

func resourceQuantity(v int64, milli bool) *resource.Quantity {
	if milli {
		return resource.NewMilliQuantity(v, resource.DecimalSI)
	}
	return resource.NewQuantity(v, resource.BinarySI)
}
