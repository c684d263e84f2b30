package core

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// resources builds requirements from "cpu/memory" pairs; "" leaves one out.
func resources(reqCPU, reqMem, limCPU, limMem string) corev1.ResourceRequirements {
	list := func(cpu, mem string) corev1.ResourceList {
		if cpu == "" && mem == "" {
			return nil
		}
		l := corev1.ResourceList{}
		if cpu != "" {
			l[corev1.ResourceCPU] = resource.MustParse(cpu)
		}
		if mem != "" {
			l[corev1.ResourceMemory] = resource.MustParse(mem)
		}
		return l
	}
	return corev1.ResourceRequirements{Requests: list(reqCPU, reqMem), Limits: list(limCPU, limMem)}
}

func TestPodResize(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	stored := func(r corev1.ResourceRequirements) *corev1.Pod {
		p := newPod()
		p.ResourceVersion = "5"
		p.Spec.Containers[0].Resources = r
		p.Spec.InitContainers = []corev1.Container{
			{Name: "init", Image: "busybox", Resources: *r.DeepCopy()},
			{Name: "sidecar", Image: "busybox", RestartPolicy: &always, Resources: *r.DeepCopy()},
		}
		Pods.Default(p)
		preparePodForCreate(p)
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app",
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}, Resources: &corev1.ResourceRequirements{}}}
		return p
	}
	burstable := resources("100m", "100Mi", "200m", "")
	guaranteed := resources("100m", "100Mi", "100m", "100Mi")
	for _, tc := range []struct {
		name   string
		old    corev1.ResourceRequirements
		mutate func(*corev1.Pod)
		want   []string
		detail string
	}{
		{"cpu limit", burstable, func(p *corev1.Pod) { p.Spec.Containers[0].Resources = resources("100m", "100Mi", "300m", "") }, nil, ""},
		{"memory request", burstable, func(p *corev1.Pod) { p.Spec.Containers[0].Resources = resources("100m", "50Mi", "200m", "") }, nil, ""},
		{"add limits, still burstable", burstable, func(p *corev1.Pod) { p.Spec.Containers[0].Resources = resources("100m", "100Mi", "200m", "200Mi") }, nil, ""},
		{"guaranteed stays guaranteed", guaranteed, func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources = resources("150m", "150Mi", "150m", "150Mi")
			p.Spec.InitContainers[0].Resources = resources("150m", "150Mi", "150m", "150Mi")
			p.Spec.InitContainers[1].Resources = resources("50m", "50Mi", "50m", "50Mi")
		}, nil, ""},
		{"guaranteed to burstable", guaranteed, func(p *corev1.Pod) { p.Spec.Containers[0].Resources = resources("100m", "100Mi", "200m", "100Mi") },
			[]string{"spec: Invalid value"}, "Pod QOS Class may not change as a result of resizing"},
		{"remove a limit", burstable, func(p *corev1.Pod) { p.Spec.Containers[0].Resources = resources("100m", "100Mi", "", "") },
			[]string{"spec.containers[0].resources.limits: Forbidden"}, "resource limits cannot be removed"},
		{"remove a request", burstable, func(p *corev1.Pod) { p.Spec.Containers[0].Resources = resources("100m", "", "200m", "") },
			[]string{"spec.containers[0].resources.requests: Forbidden"}, "resource requests cannot be removed"},
		{"remove an init container's request", burstable, func(p *corev1.Pod) { p.Spec.InitContainers[0].Resources = resources("100m", "", "200m", "") },
			[]string{"spec.initContainers[0].resources.requests: Forbidden"}, "resource requests cannot be removed"},
		{"storage", burstable, func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Limits[corev1.ResourceEphemeralStorage] = resource.MustParse("1Gi")
		}, []string{"spec: Forbidden"}, "only cpu and memory resources are mutable"},
		{"sidecar storage", burstable, func(p *corev1.Pod) {
			p.Spec.InitContainers[1].Resources.Requests[corev1.ResourceEphemeralStorage] = resource.MustParse("1Gi")
		}, []string{"spec.initContainers[1]: Forbidden"}, "only cpu and memory resources for init or sidecar containers are mutable"},
		{"sidecar cpu", burstable, func(p *corev1.Pod) { p.Spec.InitContainers[1].Resources = resources("150m", "100Mi", "300m", "") }, nil, ""},
		{"init container cpu", burstable, func(p *corev1.Pod) { p.Spec.InitContainers[0].Resources = resources("150m", "100Mi", "300m", "") }, nil, ""},
		{"resize policy", burstable, func(p *corev1.Pod) {
			p.Spec.Containers[0].ResizePolicy = []corev1.ContainerResizePolicy{{ResourceName: corev1.ResourceCPU, RestartPolicy: corev1.RestartContainer}}
		}, []string{"spec: Forbidden"}, "only cpu and memory resources are mutable"},
		{"image", burstable, func(p *corev1.Pod) { p.Spec.Containers[0].Image = "nginx:2" }, nil, ""}, // put back, not refused
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := stored(tc.old)
			pod := old.DeepCopy()
			tc.mutate(pod)
			errs := runSubresourceUpdate(podResize, pod, old)
			expectErrs(t, errs, tc.want...)
			if tc.detail != "" && (len(errs) == 0 || !strings.Contains(errs[0].Detail, tc.detail)) {
				t.Errorf("detail %v, want %q", errs, tc.detail)
			}
			if len(tc.want) == 0 && pod.Spec.Containers[0].Image != "nginx:1.25" {
				t.Errorf("the image changed through /resize")
			}
		})
	}
}

// Validation of cases that the preparation of a write never lets
// through, and of pods that cannot be resized at all.
func TestValidatePodResize(t *testing.T) {
	base := func() *corev1.Pod {
		p := newPod()
		p.ResourceVersion = "5"
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "b", Image: "busybox"})
		p.Spec.Containers[0].Resources = resources("100m", "", "", "")
		Pods.Default(p)
		return p
	}
	for _, tc := range []struct {
		name         string
		old, mutate  func(*corev1.Pod)
		want, detail string
	}{
		{"static pod", func(p *corev1.Pod) { p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "x"} }, nil,
			"[]: Forbidden", "static pods cannot be resized"},
		{"windows pod", func(p *corev1.Pod) { p.Spec.OS = &corev1.PodOS{Name: corev1.Windows} }, nil,
			"[]: Forbidden", "windows pods cannot be resized"},
		{"pod-level resources", func(p *corev1.Pod) { r := resources("1", "", "", ""); p.Spec.Resources = &r }, nil,
			"[]: Forbidden", "resize of pods with pod-level resources is forbidden"},
		{"kubelet reports no resources", func(p *corev1.Pod) {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
		}, nil, "spec: Forbidden", "Pod running on node without support for resize"},
		{"container added", nil, func(p *corev1.Pod) {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "c", Image: "x"})
		},
			"spec.containers: Forbidden", "containers may not be added or removed on resize"},
		{"containers reordered", nil, func(p *corev1.Pod) {
			p.Spec.Containers[0], p.Spec.Containers[1] = p.Spec.Containers[1], p.Spec.Containers[0]
		},
			"spec.containers[0].name: Forbidden", "containers may not be renamed or reordered on resize"},
		{"volumes", nil, func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
		}, "spec.volumes: Forbidden", "volumes are immutable on resize"},
		{"non-sidecar init container with RestartContainer", func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "i", Image: "x", Resources: resources("100m", "", "", ""),
				ResizePolicy: []corev1.ContainerResizePolicy{{ResourceName: corev1.ResourceCPU, RestartPolicy: corev1.RestartContainer}}}}
		}, func(p *corev1.Pod) { p.Spec.InitContainers[0].Resources = resources("200m", "", "", "") },
			"spec.initContainers[0]: Forbidden", "non-sidecar init containers with a resize policy of RestartContainer cannot be resized"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := base()
			if tc.old != nil {
				tc.old(old)
			}
			pod := old.DeepCopy()
			if tc.mutate != nil {
				tc.mutate(pod)
			}
			errs := validatePodResize(pod, old)
			found := false
			for _, e := range errs {
				if e.Field+": "+e.Type.String() == tc.want && strings.Contains(e.Detail, tc.detail) {
					found = true
				}
			}
			if !found {
				t.Errorf("errors %v, want %s %q", errs, tc.want, tc.detail)
			}
		})
	}
}

func TestPreparePodForResize(t *testing.T) {
	old := newPod()
	old.Labels = map[string]string{"app": "web"}
	old.Spec.Containers[0].Resources = resources("100m", "", "", "")
	Pods.Default(old)
	pod := old.DeepCopy()
	pod.Labels["app"] = "changed"
	pod.Spec.Containers[0].Image = "nginx:2"
	pod.Spec.Containers[0].Resources = resources("200m", "", "", "")
	pod.Spec.Containers[0].ResizePolicy = []corev1.ContainerResizePolicy{{ResourceName: corev1.ResourceCPU, RestartPolicy: corev1.RestartContainer}}
	pod.Spec.ActiveDeadlineSeconds = ptrTo(int64(5))
	preparePodForResize(pod, old)

	want := old.DeepCopy()
	want.Spec.Containers[0].Resources = resources("200m", "", "", "")
	want.Spec.Containers[0].ResizePolicy = []corev1.ContainerResizePolicy{{ResourceName: corev1.ResourceCPU, RestartPolicy: corev1.RestartContainer}}
	if !semanticEqual(pod, want) {
		t.Errorf("prepared pod differs:\n%s", specDiff(want, pod))
	}

	// Renamed containers are left for validation to refuse.
	renamed := old.DeepCopy()
	renamed.Spec.Containers[0].Name = "other"
	preparePodForResize(renamed, old)
	if renamed.Spec.Containers[0].Name != "other" {
		t.Errorf("a renamed container was put back")
	}
}

func TestResizePolicyOnCreate(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	restart := []corev1.ContainerResizePolicy{{ResourceName: corev1.ResourceCPU, RestartPolicy: corev1.RestartContainer}}
	p := newPod()
	p.Spec.InitContainers = []corev1.Container{
		{Name: "init", Image: "busybox", ResizePolicy: restart},
		{Name: "sidecar", Image: "busybox", RestartPolicy: &always, ResizePolicy: restart},
	}
	expectErrs(t, runCreate(Pods, p), "spec.initContainers[0].resizePolicy[0].restartPolicy: Invalid value")

	never := newPod()
	never.Spec.RestartPolicy = corev1.RestartPolicyNever
	never.Spec.Containers[0].ResizePolicy = restart
	errs := runCreate(Pods, never)
	expectErrs(t, errs, "spec.containers[0].resizePolicy: Invalid value")
	expectDetail(t, errs, "spec.containers[0].resizePolicy", "must be 'NotRequired' when pod `restartPolicy` is 'Never'")
}
