package core

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
)

// runSubresourceUpdate does to obj what the server does on a write
// through a partial subresource and returns the validation errors.
func runSubresourceUpdate(partial *registry.Subresource, obj, old runtime.Object) field.ErrorList {
	partial.PrepareForUpdate(obj, old)
	Pods.Default(obj)
	errs := Pods.Validate(obj)
	return append(errs, partial.ValidateUpdate(obj, old)...)
}

func debugger(name, target string) corev1.EphemeralContainer {
	return corev1.EphemeralContainer{
		EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: name, Image: "busybox", Stdin: true, TTY: true},
		TargetContainerName:      target,
	}
}

func TestPodEphemeralContainersUpdate(t *testing.T) {
	stored := func() *corev1.Pod {
		p := newPod()
		p.ResourceVersion = "5"
		p.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox"}}
		p.Spec.EphemeralContainers = []corev1.EphemeralContainer{debugger("first", "")}
		p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
		Pods.Default(p)
		return p
	}
	for _, tc := range []struct {
		name   string
		mutate func(*corev1.Pod)
		want   []string
	}{
		{"no change", func(*corev1.Pod) {}, nil},
		{"add one", func(p *corev1.Pod) {
			p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, debugger("second", "app"))
		}, nil},
		{"add one, order changed", func(p *corev1.Pod) {
			p.Spec.EphemeralContainers = append([]corev1.EphemeralContainer{debugger("second", "")}, p.Spec.EphemeralContainers...)
		}, nil},
		{"target an init container", func(p *corev1.Pod) {
			p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, debugger("second", "init"))
		}, nil},
		{"remove", func(p *corev1.Pod) { p.Spec.EphemeralContainers = nil },
			[]string{"spec.ephemeralContainers: Forbidden"}},
		{"change", func(p *corev1.Pod) { p.Spec.EphemeralContainers[0].Image = "busybox:2" },
			[]string{"spec.ephemeralContainers: Forbidden"}},
		{"name of a container", func(p *corev1.Pod) {
			p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, debugger("app", ""))
		}, []string{"spec.ephemeralContainers[1].name: Duplicate value"}},
		{"name of an init container", func(p *corev1.Pod) {
			p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, debugger("init", ""))
		}, []string{"spec.ephemeralContainers[1].name: Duplicate value"}},
		{"name of another ephemeral container", func(p *corev1.Pod) {
			p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, debugger("first", ""))
		}, []string{"spec.ephemeralContainers[1].name: Duplicate value"}},
		{"unknown target", func(p *corev1.Pod) {
			p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, debugger("second", "nope"))
		}, []string{"spec.ephemeralContainers[1].targetContainerName: Not found"}},
		{"target another ephemeral container", func(p *corev1.Pod) {
			p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, debugger("second", "first"))
		}, []string{"spec.ephemeralContainers[1].targetContainerName: Not found"}},
		{"ports, probes, resources, lifecycle", func(p *corev1.Pod) {
			ec := debugger("second", "")
			ec.Ports = []corev1.ContainerPort{{ContainerPort: 80}}
			ec.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}}
			ec.Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
			ec.Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}}
			p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, ec)
		}, []string{
			"spec.ephemeralContainers[1].lifecycle: Forbidden",
			"spec.ephemeralContainers[1].ports: Forbidden",
			"spec.ephemeralContainers[1].readinessProbe: Forbidden",
			"spec.ephemeralContainers[1].resources: Forbidden",
		}},
		{"subPath", func(p *corev1.Pod) {
			ec := debugger("second", "")
			ec.VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data", SubPath: "x"}}
			p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, ec)
		}, []string{"spec.ephemeralContainers[1].volumeMounts[0].subPath: Forbidden"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := stored()
			pod := old.DeepCopy()
			tc.mutate(pod)
			expectErrs(t, runSubresourceUpdate(podEphemeralContainers, pod, old), tc.want...)
		})
	}

	old := stored()
	pod := old.DeepCopy()
	pod.Spec.EphemeralContainers[0].Image = "busybox:2"
	errs := runSubresourceUpdate(podEphemeralContainers, pod, old)
	if len(errs) != 1 || !strings.HasPrefix(errs[0].Detail, `existing ephemeral containers "first" may not be changed`) {
		t.Errorf("change refused with %v", errs)
	}

	mirror := stored()
	mirror.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "x"}
	mirror.Spec.NodeName = "node-1"
	pod = mirror.DeepCopy()
	pod.Spec.EphemeralContainers = append(pod.Spec.EphemeralContainers, debugger("second", ""))
	errs = runSubresourceUpdate(podEphemeralContainers, pod, mirror)
	if len(errs) != 1 || errs[0].Detail != "static pods do not support ephemeral containers" {
		t.Errorf("static pod: %v", errs)
	}
}

// A write to /ephemeralcontainers carries a whole pod; only its
// ephemeral containers are taken.
func TestPreparePodForEphemeralContainersUpdate(t *testing.T) {
	old := newPod()
	old.Labels = map[string]string{"app": "web"}
	old.Status.Phase = corev1.PodRunning
	Pods.Default(old)
	pod := old.DeepCopy()
	pod.Labels = map[string]string{"app": "changed"}
	pod.Spec.Containers[0].Image = "nginx:2"
	pod.Spec.ActiveDeadlineSeconds = ptrTo(int64(5))
	pod.Status.Phase = corev1.PodFailed
	pod.Spec.EphemeralContainers = []corev1.EphemeralContainer{debugger("debug", "app")}
	preparePodForEphemeralContainersUpdate(pod, old)

	want := old.DeepCopy()
	want.Spec.EphemeralContainers = []corev1.EphemeralContainer{debugger("debug", "app")}
	if !semanticEqual(pod, want) {
		t.Errorf("prepared pod differs:\n%s", specDiff(want, pod))
	}
	if w := Pods.Subresources["ephemeralcontainers"]; w != podEphemeralContainers || !w.WritesSpec || len(w.Owns) != 1 || strings.Join(w.Owns[0], ".") != "spec.ephemeralContainers" {
		t.Errorf("subresource declares %+v", w)
	}
}
