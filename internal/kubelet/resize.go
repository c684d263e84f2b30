package kubelet

import (
	"encoding/json"
	"fmt"
	"math"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/orca-project/orca/internal/kubelet/podstatus"
)

// In-place resize, as upstream's kubelet does it. A resize changes the
// pod's spec first; the kubelet then decides whether the node has room for
// it (the allocation), and brings the running containers to what was
// allocated (the actuation: CRI UpdateContainerResources, or a restart
// where the container's resize policy asks for one). What was allocated
// and what each container was last given are the kubelet's own record;
// every decision below is a pure function of them.

// allocation is what the kubelet admitted for a pod's containers, their
// resources by name (init and regular containers; ephemeral containers
// have none).
type allocation map[string]v1.ResourceRequirements

// specAllocation is what the pod's spec asks for.
func specAllocation(pod *v1.Pod) allocation {
	out := allocation{}
	for _, cs := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			out[cs[i].Name] = *cs[i].Resources.DeepCopy()
		}
	}
	return out
}

func (a allocation) equal(b allocation) bool {
	return equality.Semantic.DeepEqual(a, b)
}

// applyAllocation returns the pod as the kubelet runs it: its containers
// with their allocated resources, which differ from the spec's while a
// resize waits for room. The pod itself is left alone.
func applyAllocation(pod *v1.Pod, a allocation) *v1.Pod {
	if a == nil || specAllocation(pod).equal(a) {
		return pod
	}
	out := pod.DeepCopy()
	for _, cs := range [][]v1.Container{out.Spec.InitContainers, out.Spec.Containers} {
		for i := range cs {
			if r, ok := a[cs[i].Name]; ok {
				cs[i].Resources = *r.DeepCopy()
			}
		}
	}
	return out
}

// decideResize tells whether the node has room for the pod's resized
// requests beside the other pods' allocations, as upstream's admission of
// a resize; when it has not, the message is why, in upstream's words, and
// the resize waits (Deferred) to be decided again at a later sync.
func decideResize(pod *v1.Pod, others []*v1.Pod, allocatable v1.ResourceList) (bool, string) {
	want := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	used := v1.ResourceList{}
	for _, o := range others {
		for name, q := range resourcehelper.PodRequests(o, resourcehelper.PodResourcesOptions{}) {
			sum := used[name]
			sum.Add(q)
			used[name] = sum
		}
	}
	for _, name := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory} {
		capacity, ok := allocatable[name]
		if !ok {
			continue
		}
		w, u, c := amount(name, want[name]), amount(name, used[name]), amount(name, capacity)
		if w > c-u {
			return false, fmt.Sprintf("Node didn't have enough resource: %s, requested: %d, used: %d, capacity: %d", name, w, u, c)
		}
	}
	return true, ""
}

// amount is a quantity in the unit upstream's messages use: millicores
// for cpu, bytes for the rest.
func amount(name v1.ResourceName, q resource.Quantity) int64 {
	if name == v1.ResourceCPU {
		return q.MilliValue()
	}
	return q.Value()
}

// resourceValues are the resources the kubelet resizes in place, in the
// units the cgroups take: cpu in millicores, memory in bytes.
type resourceValues struct {
	cpuRequest, cpuLimit int64
	memRequest, memLimit int64
}

func valuesOf(r v1.ResourceRequirements) resourceValues {
	return resourceValues{
		cpuRequest: r.Requests.Cpu().MilliValue(), cpuLimit: r.Limits.Cpu().MilliValue(),
		memRequest: r.Requests.Memory().Value(), memLimit: r.Limits.Memory().Value(),
	}
}

// resizeStep is one running container to bring to its allocation.
type resizeStep struct {
	name, id         string
	desired, current resourceValues
}

// resizePlan is what the running containers of a pod need.
type resizePlan struct {
	// restart lists containers whose resize policy asks for a restart
	// for a resource that changed.
	restart []resizeStep
	// memory and cpu list the containers updated in place, resource by
	// resource, decreases first so that the node never holds more than
	// before and after.
	memory, cpu []resizeStep
}

func (p resizePlan) empty() bool {
	return len(p.restart)+len(p.memory)+len(p.cpu) == 0
}

// planResize compares each running container's allocation (pod is the
// pod with its allocation applied) with what it was last given, as
// upstream's computePodResizeAction. running maps the names of the
// containers running in the current sandbox to their runtime IDs; a
// container with no record was given its allocation.
func planResize(pod *v1.Pod, running map[string]string, actuated allocation) resizePlan {
	var p resizePlan
	var memDown, memUp, cpuDown, cpuUp []resizeStep
	for _, cs := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			c := &cs[i]
			id, ok := running[c.Name]
			if !ok {
				continue
			}
			desired := valuesOf(c.Resources)
			current := desired
			if r, ok := actuated[c.Name]; ok {
				current = valuesOf(r)
			}
			if desired == current {
				continue
			}
			step := resizeStep{name: c.Name, id: id, desired: desired, current: current}
			cpuChanged := desired.cpuRequest != current.cpuRequest || desired.cpuLimit != current.cpuLimit
			memChanged := desired.memRequest != current.memRequest || desired.memLimit != current.memLimit
			if (cpuChanged && restartOnResize(c, v1.ResourceCPU)) || (memChanged && restartOnResize(c, v1.ResourceMemory)) {
				p.restart = append(p.restart, step)
				continue
			}
			if memChanged {
				if shrinks(desired.memLimit, current.memLimit, desired.memRequest, current.memRequest) {
					memDown = append(memDown, step)
				} else {
					memUp = append(memUp, step)
				}
			}
			if cpuChanged {
				if shrinks(desired.cpuLimit, current.cpuLimit, desired.cpuRequest, current.cpuRequest) {
					cpuDown = append(cpuDown, step)
				} else {
					cpuUp = append(cpuUp, step)
				}
			}
		}
	}
	p.memory = append(memDown, memUp...)
	p.cpu = append(cpuDown, cpuUp...)
	return p
}

// shrinks tells a decrease from an increase of one resource: a changed
// limit decides the direction; the request alone when the limit stays.
func shrinks(desiredLimit, currentLimit, desiredRequest, currentRequest int64) bool {
	if desiredLimit != currentLimit {
		return desiredLimit < currentLimit
	}
	return desiredRequest < currentRequest
}

// restartOnResize reads a container's resize policy for a resource;
// NotRequired is the default.
func restartOnResize(c *v1.Container, name v1.ResourceName) bool {
	for _, p := range c.ResizePolicy {
		if p.ResourceName == name {
			return p.RestartPolicy == v1.RestartContainer
		}
	}
	return false
}

// resizeInProgress tells whether a running container has not yet been
// given its allocation, as upstream's IsPodResizeInProgress.
func resizeInProgress(pod *v1.Pod, running map[string]string, actuated allocation) bool {
	for _, cs := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			if _, ok := running[cs[i].Name]; !ok {
				continue
			}
			if r, ok := actuated[cs[i].Name]; ok && valuesOf(r) != valuesOf(cs[i].Resources) {
				return true
			}
		}
	}
	return false
}

// resizeConditions are a pod's PodResizePending and PodResizeInProgress
// conditions, kept as upstream's status manager keeps them: each changes
// only through the transitions below, so a sync that changes nothing
// writes no status.
type resizeConditions struct {
	Pending, InProgress *v1.PodCondition
}

// setPending records a resize waiting for room; reasons other than
// Infeasible read as Deferred. It reports whether the reason or the
// generation changed, when upstream emits an event.
func (r *resizeConditions) setPending(reason, message string, generation int64, now time.Time) bool {
	if reason != v1.PodReasonInfeasible {
		reason = v1.PodReasonDeferred
	}
	prev := r.Pending
	r.Pending = resizeCondition(v1.PodResizePending, prev, reason, message, generation, now)
	return prev == nil || prev.Reason != reason || prev.ObservedGeneration != generation
}

func (r *resizeConditions) clearPending() { r.Pending = nil }

// setInProgress records a resize being actuated. An existing condition
// keeps its generation (clear it first to start a new resize) and, when
// no reason is given, its reason and message. It reports whether the
// condition changed.
func (r *resizeConditions) setInProgress(reason, message string, generation int64, now time.Time) bool {
	prev := r.InProgress
	if prev != nil {
		if reason == "" && message == "" {
			reason, message = prev.Reason, prev.Message
		}
		generation = prev.ObservedGeneration
	}
	r.InProgress = resizeCondition(v1.PodResizeInProgress, prev, reason, message, generation, now)
	return prev == nil || prev.Reason != reason || prev.Message != message
}

// clearInProgress ends a resize, returning the generation it was for.
func (r *resizeConditions) clearInProgress() (int64, bool) {
	if r.InProgress == nil {
		return 0, false
	}
	gen := r.InProgress.ObservedGeneration
	r.InProgress = nil
	return gen, true
}

func (r resizeConditions) list() []v1.PodCondition {
	var out []v1.PodCondition
	for _, c := range []*v1.PodCondition{r.Pending, r.InProgress} {
		if c != nil {
			out = append(out, *c)
		}
	}
	return out
}

// backfillResize takes back the conditions a pod's status shows, after a
// kubelet restart.
func backfillResize(conds []v1.PodCondition) resizeConditions {
	var r resizeConditions
	for i := range conds {
		c := conds[i]
		switch c.Type {
		case v1.PodResizePending:
			r.Pending = &c
		case v1.PodResizeInProgress:
			r.InProgress = &c
		}
	}
	return r
}

func resizeCondition(t v1.PodConditionType, prev *v1.PodCondition, reason, message string, generation int64, now time.Time) *v1.PodCondition {
	c := &v1.PodCondition{
		Type: t, Status: v1.ConditionTrue, Reason: reason, Message: message, ObservedGeneration: generation,
		LastProbeTime: metav1.NewTime(now), LastTransitionTime: metav1.NewTime(now),
	}
	if prev != nil && prev.Reason == reason {
		c.LastTransitionTime = prev.LastTransitionTime
	}
	return c
}

// resizeEventMessage is upstream's event text for a resize: what happened,
// then the pod's containers' resources and the generation as JSON.
func resizeEventMessage(prefix string, pod *v1.Pod, generation int64, errMsg string) string {
	type containerAllocation struct {
		Name      string                  `json:"name"`
		Resources v1.ResourceRequirements `json:"resources,omitempty"`
	}
	summary := struct {
		InitContainers []containerAllocation `json:"initContainers,omitempty"`
		Containers     []containerAllocation `json:"containers,omitempty"`
		Generation     int64                 `json:"generation"`
		Error          string                `json:"error,omitempty"`
	}{Generation: generation, Error: errMsg}
	for _, c := range pod.Spec.InitContainers {
		summary.InitContainers = append(summary.InitContainers, containerAllocation{c.Name, c.Resources})
	}
	for _, c := range pod.Spec.Containers {
		summary.Containers = append(summary.Containers, containerAllocation{c.Name, c.Resources})
	}
	b, err := json.Marshal(summary)
	if err != nil {
		return prefix
	}
	return prefix + ": " + string(b)
}

// reportedResources reads what the runtime says a running container holds
// back into quantities, as upstream's kubelet: cpu limit from the quota,
// cpu request from the shares, memory limit. What the runtime does not
// report, the memory request always among it, is what the kubelet last
// gave the container (actuated, when it knows).
func reportedResources(lr *runtimeapi.LinuxContainerResources, actuated *v1.ResourceRequirements) *podstatus.ActualResources {
	out := &podstatus.ActualResources{}
	if lr != nil {
		if lr.CpuPeriod > 0 && lr.CpuQuota > 0 {
			out.CPULimit = resource.NewMilliQuantity(lr.CpuQuota*1000/lr.CpuPeriod, resource.DecimalSI)
		}
		if lr.CpuShares >= minCPUShares {
			out.CPURequest = resource.NewMilliQuantity(int64(math.Ceil(float64(lr.CpuShares*1000)/1024)), resource.DecimalSI)
		}
		if lr.MemoryLimitInBytes > 0 {
			out.MemoryLimit = resource.NewQuantity(lr.MemoryLimitInBytes, resource.BinarySI)
		}
	}
	if actuated == nil {
		return out
	}
	known := func(list v1.ResourceList, name v1.ResourceName) *resource.Quantity {
		if q, ok := list[name]; ok && !q.IsZero() {
			return &q
		}
		return nil
	}
	if out.CPULimit == nil && out.CPURequest == nil && out.MemoryLimit == nil {
		out.CPULimit, out.CPURequest = known(actuated.Limits, v1.ResourceCPU), known(actuated.Requests, v1.ResourceCPU)
		out.MemoryLimit = known(actuated.Limits, v1.ResourceMemory)
	}
	out.MemoryRequest = known(actuated.Requests, v1.ResourceMemory)
	return out
}

// minCPUShares is the least cpu.shares the kubelet sets, as upstream.
const minCPUShares = 2
