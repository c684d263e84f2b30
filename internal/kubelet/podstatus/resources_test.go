package podstatus

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestStatusResources(t *testing.T) {
	q := func(s string) *resource.Quantity { v := resource.MustParse(s); return &v }
	list := func(kv ...string) v1.ResourceList {
		l := v1.ResourceList{}
		for i := 0; i < len(kv); i += 2 {
			l[v1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
		}
		return l
	}
	for _, tc := range []struct {
		name  string
		alloc v1.ResourceRequirements
		run   Instance
		want  v1.ResourceRequirements
	}{
		{"not running: the allocation",
			v1.ResourceRequirements{Requests: list("cpu", "20m")},
			Instance{State: Exited, Resources: &ActualResources{CPURequest: q("50m")}},
			v1.ResourceRequirements{Requests: list("cpu", "20m")}},
		{"running: what it holds",
			v1.ResourceRequirements{Requests: list("cpu", "25m", "memory", "30Mi"), Limits: list("cpu", "35m", "memory", "50Mi")},
			Instance{State: Running, Resources: &ActualResources{CPURequest: q("20m"), CPULimit: q("30m"), MemoryRequest: q("35Mi"), MemoryLimit: q("45Mi")}},
			v1.ResourceRequirements{Requests: list("cpu", "20m", "memory", "35Mi"), Limits: list("cpu", "30m", "memory", "45Mi")}},
		// Upstream's "resize with equivalents": 1m and 5m read back as the
		// floors 2m and 10m, and the allocation is shown instead.
		{"at the floors: the allocation",
			v1.ResourceRequirements{Requests: list("cpu", "1m"), Limits: list("cpu", "5m")},
			Instance{State: Running, Resources: &ActualResources{CPURequest: q("2m"), CPULimit: q("10m")}},
			v1.ResourceRequirements{Requests: list("cpu", "1m"), Limits: list("cpu", "5m")}},
		// Nothing is added that was not allocated: shares of 2 for a
		// container without a cpu request.
		{"no cpu request allocated",
			v1.ResourceRequirements{Requests: list("memory", "35Mi")},
			Instance{State: Running, Resources: &ActualResources{CPURequest: q("2m"), MemoryRequest: q("35Mi")}},
			v1.ResourceRequirements{Requests: list("memory", "35Mi")}},
		{"running, nothing known", v1.ResourceRequirements{Limits: list("cpu", "1")}, Instance{State: Running},
			v1.ResourceRequirements{Limits: list("cpu", "1")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := statusResources(tc.alloc, tc.run); !equality.Semantic.DeepEqual(*got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// The status reports the allocation, not the spec, while a resize waits,
// and the resize conditions unless the pod has finished.
func TestStatusWithAllocationAndResizeConditions(t *testing.T) {
	p := pod(v1.RestartPolicyAlways, nil, "a")
	p.Spec.Containers[0].Resources.Requests = v1.ResourceList{v1.ResourceCPU: resource.MustParse("500m")}
	in := Input{Pod: p, SandboxReady: true, Now: now,
		Instances: map[string][]Instance{"a": {running(0)}},
		Allocated: map[string]v1.ResourceRequirements{"a": {Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m")}}},
		Resize:    []v1.PodCondition{{Type: v1.PodResizePending, Status: v1.ConditionTrue, Reason: v1.PodReasonDeferred}},
	}
	st := Compute(in)
	cs := st.ContainerStatuses[0]
	if cs.AllocatedResources.Cpu().MilliValue() != 100 || cs.Resources == nil || cs.Resources.Requests.Cpu().MilliValue() != 100 {
		t.Errorf("allocated %v, resources %v", cs.AllocatedResources, cs.Resources)
	}
	if c := cond(st, v1.PodResizePending); c.Reason != v1.PodReasonDeferred {
		t.Errorf("conditions %+v", st.Conditions)
	}
	// Old resize conditions the kubelet no longer holds go.
	in.Resize = nil
	in.Pod.Status = st
	if c := cond(Compute(in), v1.PodResizePending); c.Type != "" {
		t.Errorf("stale condition kept: %+v", c)
	}
	in.Resize = []v1.PodCondition{{Type: v1.PodResizeInProgress, Status: v1.ConditionTrue}}
	in.Instances = map[string][]Instance{"a": {exited(0, 0)}}
	in.Pod.Spec.RestartPolicy = v1.RestartPolicyNever
	if c := cond(Compute(in), v1.PodResizeInProgress); c.Type != "" {
		t.Errorf("a finished pod shows %+v", c)
	}
}
