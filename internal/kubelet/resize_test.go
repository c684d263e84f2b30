package kubelet

import (
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// reqs builds requirements from "cpu memory" requests and limits; "-"
// leaves one out.
func reqs(reqCPU, reqMem, limCPU, limMem string) v1.ResourceRequirements {
	list := func(cpu, mem string) v1.ResourceList {
		l := v1.ResourceList{}
		if cpu != "-" {
			l[v1.ResourceCPU] = resource.MustParse(cpu)
		}
		if mem != "-" {
			l[v1.ResourceMemory] = resource.MustParse(mem)
		}
		if len(l) == 0 {
			return nil
		}
		return l
	}
	return v1.ResourceRequirements{Requests: list(reqCPU, reqMem), Limits: list(limCPU, limMem)}
}

func resizePod(containers ...v1.Container) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "u", Generation: 2}, Spec: v1.PodSpec{Containers: containers}}
}

func TestDecideResize(t *testing.T) {
	allocatable := v1.ResourceList{v1.ResourceCPU: resource.MustParse("2"), v1.ResourceMemory: resource.MustParse("4Gi")}
	other := resizePod(v1.Container{Name: "o", Resources: reqs("1500m", "1Gi", "-", "-")})
	for _, tc := range []struct {
		name   string
		pod    *v1.Pod
		others []*v1.Pod
		fits   bool
		why    string
	}{
		{"alone, fits", resizePod(v1.Container{Name: "c", Resources: reqs("2", "1Gi", "-", "-")}), nil, true, ""},
		{"beside another, fits", resizePod(v1.Container{Name: "c", Resources: reqs("500m", "1Gi", "-", "-")}), []*v1.Pod{other}, true, ""},
		{"beside another, no cpu left", resizePod(v1.Container{Name: "c", Resources: reqs("600m", "1Gi", "-", "-")}), []*v1.Pod{other}, false,
			"Node didn't have enough resource: cpu, requested: 600, used: 1500, capacity: 2000"},
		{"no memory left", resizePod(v1.Container{Name: "c", Resources: reqs("100m", "4Gi", "-", "-")}), []*v1.Pod{other}, false,
			"Node didn't have enough resource: memory, requested: 4294967296, used: 1073741824, capacity: 4294967296"},
		// Init containers count as upstream's PodRequests counts them.
		{"init container larger", &v1.Pod{Spec: v1.PodSpec{
			InitContainers: []v1.Container{{Name: "i", Resources: reqs("3", "-", "-", "-")}},
			Containers:     []v1.Container{{Name: "c", Resources: reqs("100m", "-", "-", "-")}},
		}}, nil, false, "Node didn't have enough resource: cpu, requested: 3000, used: 0, capacity: 2000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fits, why := decideResize(tc.pod, tc.others, allocatable)
			if fits != tc.fits || why != tc.why {
				t.Errorf("got %v %q, want %v %q", fits, why, tc.fits, tc.why)
			}
		})
	}
}

func TestApplyAllocation(t *testing.T) {
	pod := resizePod(v1.Container{Name: "c", Resources: reqs("200m", "-", "-", "-")})
	if got := applyAllocation(pod, specAllocation(pod)); got != pod {
		t.Errorf("an allocation equal to the spec copied the pod")
	}
	old := allocation{"c": reqs("100m", "-", "-", "-")}
	got := applyAllocation(pod, old)
	if got.Spec.Containers[0].Resources.Requests.Cpu().MilliValue() != 100 || pod.Spec.Containers[0].Resources.Requests.Cpu().MilliValue() != 200 {
		t.Errorf("allocated pod %v, pod %v", got.Spec.Containers[0].Resources, pod.Spec.Containers[0].Resources)
	}
}

func TestPlanResize(t *testing.T) {
	restart := func(name v1.ResourceName) []v1.ContainerResizePolicy {
		return []v1.ContainerResizePolicy{{ResourceName: name, RestartPolicy: v1.RestartContainer}}
	}
	names := func(steps []resizeStep) string {
		var out []string
		for _, s := range steps {
			out = append(out, s.name)
		}
		return strings.Join(out, ",")
	}
	for _, tc := range []struct {
		name                 string
		containers           []v1.Container
		running              map[string]string
		actuated             allocation
		restart, memory, cpu string
	}{
		{"nothing changed",
			[]v1.Container{{Name: "a", Resources: reqs("100m", "64Mi", "200m", "128Mi")}},
			map[string]string{"a": "ida"}, allocation{"a": reqs("100m", "64Mi", "200m", "128Mi")}, "", "", ""},
		{"no record: taken as given",
			[]v1.Container{{Name: "a", Resources: reqs("100m", "64Mi", "200m", "128Mi")}},
			map[string]string{"a": "ida"}, allocation{}, "", "", ""},
		{"not running: sized when it starts",
			[]v1.Container{{Name: "a", Resources: reqs("300m", "-", "-", "-")}},
			nil, allocation{"a": reqs("100m", "-", "-", "-")}, "", "", ""},
		{"cpu up in place",
			[]v1.Container{{Name: "a", Resources: reqs("300m", "-", "-", "-")}},
			map[string]string{"a": "ida"}, allocation{"a": reqs("100m", "-", "-", "-")}, "", "", "a"},
		{"equivalent quantities need nothing",
			[]v1.Container{{Name: "a", Resources: reqs("0.1", "-", "-", "-")}},
			map[string]string{"a": "ida"}, allocation{"a": reqs("100m", "-", "-", "-")}, "", "", ""},
		{"memory request only",
			[]v1.Container{{Name: "a", Resources: reqs("-", "30Mi", "-", "-")}},
			map[string]string{"a": "ida"}, allocation{"a": reqs("-", "35Mi", "-", "-")}, "", "a", ""},
		{"decreases first",
			[]v1.Container{
				{Name: "up", Resources: reqs("300m", "300Mi", "300m", "300Mi")},
				{Name: "down", Resources: reqs("100m", "100Mi", "100m", "100Mi")},
			},
			map[string]string{"up": "1", "down": "2"},
			allocation{"up": reqs("200m", "200Mi", "200m", "200Mi"), "down": reqs("200m", "200Mi", "200m", "200Mi")},
			"", "down,up", "down,up"},
		{"limit decides the direction",
			[]v1.Container{{Name: "a", Resources: reqs("50m", "-", "300m", "-")}, {Name: "b", Resources: reqs("150m", "-", "300m", "-")}},
			map[string]string{"a": "1", "b": "2"}, allocation{"a": reqs("100m", "-", "200m", "-"), "b": reqs("100m", "-", "300m", "-")},
			"", "", "a,b"},
		{"cpu restart policy, cpu changed",
			[]v1.Container{{Name: "a", ResizePolicy: restart(v1.ResourceCPU), Resources: reqs("300m", "64Mi", "-", "-")}},
			map[string]string{"a": "ida"}, allocation{"a": reqs("100m", "64Mi", "-", "-")}, "a", "", ""},
		{"cpu restart policy, memory changed",
			[]v1.Container{{Name: "a", ResizePolicy: restart(v1.ResourceCPU), Resources: reqs("100m", "128Mi", "-", "-")}},
			map[string]string{"a": "ida"}, allocation{"a": reqs("100m", "64Mi", "-", "-")}, "", "a", ""},
		{"memory restart policy, memory request changed",
			[]v1.Container{{Name: "a", ResizePolicy: restart(v1.ResourceMemory), Resources: reqs("100m", "128Mi", "-", "-")}},
			map[string]string{"a": "ida"}, allocation{"a": reqs("100m", "64Mi", "-", "-")}, "a", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := planResize(resizePod(tc.containers...), tc.running, tc.actuated)
			if names(p.restart) != tc.restart || names(p.memory) != tc.memory || names(p.cpu) != tc.cpu {
				t.Errorf("restart %q memory %q cpu %q, want %q %q %q", names(p.restart), names(p.memory), names(p.cpu), tc.restart, tc.memory, tc.cpu)
			}
			inProgress := resizeInProgress(resizePod(tc.containers...), tc.running, tc.actuated)
			if want := !p.empty(); inProgress != want {
				t.Errorf("in progress %v, want %v", inProgress, want)
			}
		})
	}

	// Init containers, sidecars or not, are resized as the others.
	pod := &v1.Pod{Spec: v1.PodSpec{
		InitContainers: []v1.Container{{Name: "init", Resources: reqs("200m", "-", "-", "-")}},
		Containers:     []v1.Container{{Name: "main", Resources: reqs("100m", "-", "-", "-")}},
	}}
	p := planResize(pod, map[string]string{"init": "1"}, allocation{"init": reqs("100m", "-", "-", "-"), "main": reqs("100m", "-", "-", "-")})
	if names(p.cpu) != "init" {
		t.Errorf("running init container not resized: %+v", p)
	}
}

func TestWithResource(t *testing.T) {
	given := reqs("100m", "64Mi", "200m", "128Mi")
	next := withResource(given, reqs("300m", "32Mi", "-", "-"), v1.ResourceMemory)
	want := reqs("100m", "32Mi", "200m", "-")
	if !specAllocationEqual(next, want) {
		t.Errorf("memory taken: %v, want %v", next, want)
	}
	if given.Limits.Memory().Value() != 128<<20 {
		t.Errorf("the input changed")
	}
	if got := withResource(v1.ResourceRequirements{}, reqs("1", "-", "2", "-"), v1.ResourceCPU); !specAllocationEqual(got, reqs("1", "-", "2", "-")) {
		t.Errorf("cpu into empty: %v", got)
	}
}

func specAllocationEqual(a, b v1.ResourceRequirements) bool {
	return allocation{"x": a}.equal(allocation{"x": b})
}

func TestResizeConditions(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	var r resizeConditions
	if !r.setPending(v1.PodReasonDeferred, "no room", 2, t0) {
		t.Errorf("first pending not reported as a change")
	}
	if r.setPending(v1.PodReasonDeferred, "no room still", 2, t0.Add(time.Minute)) {
		t.Errorf("same reason and generation reported as a change")
	}
	if r.Pending.LastTransitionTime.Time != t0 || r.Pending.LastProbeTime.Time != t0.Add(time.Minute) || r.Pending.Message != "no room still" {
		t.Errorf("pending %+v", r.Pending)
	}
	if !r.setPending("OutOfcpu", "x", 3, t0) || r.Pending.Reason != v1.PodReasonDeferred || r.Pending.ObservedGeneration != 3 {
		t.Errorf("another reason reads as Deferred, a new generation is a change: %+v", r.Pending)
	}
	r.clearPending()

	if !r.setInProgress("", "", 3, t0) || r.InProgress.Reason != "" || r.InProgress.ObservedGeneration != 3 {
		t.Errorf("in progress %+v", r.InProgress)
	}
	if r.setInProgress("", "", 4, t0) || r.InProgress.ObservedGeneration != 3 {
		t.Errorf("the generation of an existing condition changed: %+v", r.InProgress)
	}
	if !r.setInProgress(v1.PodReasonError, "boom", 4, t0) || r.InProgress.Reason != v1.PodReasonError {
		t.Errorf("error not recorded: %+v", r.InProgress)
	}
	if r.setInProgress("", "", 4, t0) || r.InProgress.Message != "boom" {
		t.Errorf("the error was not kept: %+v", r.InProgress)
	}
	if gen, ok := r.clearInProgress(); !ok || gen != 3 {
		t.Errorf("clear: %d %v", gen, ok)
	}
	if _, ok := r.clearInProgress(); ok {
		t.Errorf("cleared twice")
	}

	back := backfillResize([]v1.PodCondition{{Type: v1.PodReady}, {Type: v1.PodResizeInProgress, Status: v1.ConditionTrue, ObservedGeneration: 5}})
	if back.Pending != nil || back.InProgress == nil || back.InProgress.ObservedGeneration != 5 || len(back.list()) != 1 {
		t.Errorf("backfill %+v", back)
	}
}

func TestReportedResources(t *testing.T) {
	q := resource.MustParse
	actuated := reqs("20m", "35Mi", "30m", "45Mi")
	for _, tc := range []struct {
		name                        string
		lr                          *runtimeapi.LinuxContainerResources
		actuated                    *v1.ResourceRequirements
		cpuReq, cpuLim, memReq, mem string
	}{
		// The values kubelets derive from upstream's own conversions
		// come back unchanged.
		{"from the cgroup", &runtimeapi.LinuxContainerResources{CpuShares: 20, CpuPeriod: 100000, CpuQuota: 3000, MemoryLimitInBytes: 45 << 20}, &actuated, "20m", "30m", "35Mi", "45Mi"},
		{"no limits", &runtimeapi.LinuxContainerResources{CpuShares: 25, CpuPeriod: 100000}, nil, "25m", "", "", ""},
		{"floor shares", &runtimeapi.LinuxContainerResources{CpuShares: 2, CpuPeriod: 100000, CpuQuota: 1000}, nil, "2m", "10m", "", ""},
		{"nothing reported: what was given", nil, &actuated, "20m", "30m", "35Mi", "45Mi"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := reportedResources(tc.lr, tc.actuated)
			check := func(what string, g *resource.Quantity, want string) {
				switch {
				case want == "" && g != nil:
					t.Errorf("%s %s, want none", what, g)
				case want != "" && (g == nil || g.Cmp(q(want)) != 0):
					t.Errorf("%s %v, want %s", what, g, want)
				}
			}
			check("cpu request", got.CPURequest, tc.cpuReq)
			check("cpu limit", got.CPULimit, tc.cpuLim)
			check("memory request", got.MemoryRequest, tc.memReq)
			check("memory limit", got.MemoryLimit, tc.mem)
		})
	}
}

func TestResizeEventMessage(t *testing.T) {
	pod := resizePod(v1.Container{Name: "c1", Resources: reqs("25m", "-", "-", "-")})
	got := resizeEventMessage("Pod resize started", pod, 2, "")
	want := `Pod resize started: {"containers":[{"name":"c1","resources":{"requests":{"cpu":"25m"}}}],"generation":2}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
