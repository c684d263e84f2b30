package core

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
)

// podResize is pods/resize: containers' cpu and memory changed in place,
// which the pod's kubelet then actuates. As upstream, a write there keeps
// only containers' resources and resize policies (validation then allows
// only cpu and memory to change) and counts in the pod's generation.
//
// Orca's kubelet enforces no pod-level resources and no memory-backed
// volume sizes, so both stay out of a resize, as upstream leaves them out
// with InPlacePodLevelResourcesVerticalScaling and
// InPlacePodVerticalScalingMemoryBackedVolumes off.
var podResize = &registry.Subresource{
	PrepareForUpdate: registry.Typed2(preparePodForResize),
	ValidateUpdate:   registry.TypedValidateUpdate(validatePodResize),
	Owns: [][]string{
		{"spec", "containers", "*", "resources"},
		{"spec", "containers", "*", "resizePolicy"},
		{"spec", "initContainers", "*", "resources"},
		{"spec", "initContainers", "*", "resizePolicy"},
	},
	WritesSpec: true,
}

// preparePodForResize is upstream's dropNonResizeUpdates. A write that
// adds, removes, reorders or renames containers is left as it is, for
// validation to refuse.
func preparePodForResize(pod, old *corev1.Pod) {
	containers, ok := resizedContainers(pod.Spec.Containers, old.Spec.Containers)
	inits, ok2 := resizedContainers(pod.Spec.InitContainers, old.Spec.InitContainers)
	if !ok || !ok2 {
		return
	}
	pod.Spec = *old.Spec.DeepCopy()
	pod.Spec.Containers, pod.Spec.InitContainers = containers, inits
	pod.Status = *old.Status.DeepCopy()
	metav1.ResetObjectMetaForStatus(&pod.ObjectMeta, &old.ObjectMeta)
}

// resizedContainers is the old containers with the new ones' resources and
// resize policies; false when the two lists do not name the same
// containers in the same order.
func resizedContainers(cur, old []corev1.Container) ([]corev1.Container, bool) {
	if len(cur) != len(old) {
		return nil, false
	}
	if len(cur) == 0 {
		return cur, true
	}
	out := make([]corev1.Container, len(old))
	for i := range old {
		if cur[i].Name != old[i].Name {
			return nil, false
		}
		old[i].DeepCopyInto(&out[i])
		out[i].Resources = cur[i].Resources
		out[i].ResizePolicy = cur[i].ResizePolicy
	}
	return out, true
}

// validatePodResize is upstream's ValidatePodResize. The pod as a whole
// is validated with the pod (requests within limits, resize policies).
func validatePodResize(pod, old *corev1.Pod) field.ErrorList {
	if _, mirror := old.Annotations[corev1.MirrorPodAnnotationKey]; mirror {
		return field.ErrorList{field.Forbidden(field.NewPath(""), "static pods cannot be resized")}
	}
	if old.Spec.OS != nil && old.Spec.OS.Name == corev1.Windows {
		return field.ErrorList{field.Forbidden(field.NewPath(""), "windows pods cannot be resized")}
	}
	var allErrs field.ErrorList
	specPath := field.NewPath("spec")
	oldQOS := old.Status.QOSClass
	if oldQOS == "" {
		oldQOS = podQOSClass(&old.Spec)
	}
	if oldQOS != podQOSClass(&pod.Spec) {
		allErrs = append(allErrs, field.Invalid(specPath, pod.Status.QOSClass, "Pod QOS Class may not change as a result of resizing"))
	}
	if !resizeSupported(old) {
		allErrs = append(allErrs, field.Forbidden(specPath, "Pod running on node without support for resize"))
	}
	if hasPodLevelResources(old) || hasPodLevelResources(pod) {
		return append(allErrs, field.Forbidden(field.NewPath(""), "resize of pods with pod-level resources is forbidden when InPlacePodLevelResourcesVerticalScalingEnabled feature gate is disabled"))
	}
	if errs := validateResizeContainerOrder(pod, old, specPath); len(errs) > 0 {
		return append(allErrs, errs...)
	}

	for i := range old.Spec.InitContainers {
		allErrs = append(allErrs, validateContainerResize(&pod.Spec.InitContainers[i].Resources, &old.Spec.InitContainers[i].Resources,
			specPath.Child("initContainers").Index(i).Child("resources"))...)
	}
	for i := range old.Spec.Containers {
		allErrs = append(allErrs, validateContainerResize(&pod.Spec.Containers[i].Resources, &old.Spec.Containers[i].Resources,
			specPath.Child("containers").Index(i).Child("resources"))...)
	}

	// With cpu and memory put back, nothing of a container may differ.
	munged := *pod.Spec.DeepCopy()
	for i := range munged.Containers {
		c := &munged.Containers[i]
		keepCPUAndMemory(c, &old.Spec.Containers[i])
		if !semanticEqual(*c, old.Spec.Containers[i]) {
			allErrs = append(allErrs, field.Forbidden(specPath, "only cpu and memory resources are mutable"))
		}
	}
	for i := range munged.InitContainers {
		c := &munged.InitContainers[i]
		changed := !semanticEqual(*c, old.Spec.InitContainers[i])
		keepCPUAndMemory(c, &old.Spec.InitContainers[i])
		if !semanticEqual(*c, old.Spec.InitContainers[i]) {
			allErrs = append(allErrs, field.Forbidden(specPath.Child("initContainers").Index(i), "only cpu and memory resources for init or sidecar containers are mutable"))
		}
		if changed && !isSidecar(c) {
			for _, p := range c.ResizePolicy {
				if p.RestartPolicy == corev1.RestartContainer {
					allErrs = append(allErrs, field.Forbidden(specPath.Child("initContainers").Index(i), "non-sidecar init containers with a resize policy of RestartContainer cannot be resized"))
				}
			}
		}
	}
	if !semanticEqual(pod.Spec.Volumes, old.Spec.Volumes) {
		allErrs = append(allErrs, field.Forbidden(specPath.Child("volumes"), "volumes are immutable on resize when InPlacePodVerticalScalingMemoryBackedVolumes feature gate is disabled"))
	}
	munged.Volumes = old.Spec.Volumes
	if len(allErrs) == 0 && !semanticEqual(munged, old.Spec) {
		allErrs = append(allErrs, field.Forbidden(specPath, "only cpu and memory resources are mutable"))
	}
	return allErrs
}

// resizeSupported: a pod whose running containers report no resources
// runs on a kubelet that cannot resize; one with nothing running yet is
// given the benefit of the doubt, as upstream.
func resizeSupported(pod *corev1.Pod) bool {
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.State.Running != nil {
			return cs.Resources != nil
		}
	}
	return true
}

func hasPodLevelResources(pod *corev1.Pod) bool {
	r := pod.Spec.Resources
	return r != nil && len(r.Requests)+len(r.Limits) > 0
}

func validateResizeContainerOrder(pod, old *corev1.Pod, specPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, l := range []struct {
		name     string
		cur, old []corev1.Container
	}{{"containers", pod.Spec.Containers, old.Spec.Containers}, {"initContainers", pod.Spec.InitContainers, old.Spec.InitContainers}} {
		if len(l.cur) != len(l.old) {
			allErrs = append(allErrs, field.Forbidden(specPath.Child(l.name), l.name+" may not be added or removed on resize"))
			continue
		}
		for i := range l.old {
			if l.cur[i].Name != l.old[i].Name {
				allErrs = append(allErrs, field.Forbidden(specPath.Child(l.name).Index(i).Child("name"), l.name+" may not be renamed or reordered on resize"))
			}
		}
	}
	return allErrs
}

// validateContainerResize: requests and limits may change, but not go.
func validateContainerResize(cur, old *corev1.ResourceRequirements, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if resourcesRemoved(cur.Requests, old.Requests) {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("requests"), "resource requests cannot be removed"))
	}
	if resourcesRemoved(cur.Limits, old.Limits) {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("limits"), "resource limits cannot be removed"))
	}
	return allErrs
}

func resourcesRemoved(cur, old corev1.ResourceList) bool {
	for name := range old {
		if _, ok := cur[name]; !ok {
			return true
		}
	}
	return false
}

// keepCPUAndMemory gives c the old container's cpu and memory requests
// and limits (or none, where it had none), leaving every other resource
// as c has it.
func keepCPUAndMemory(c, old *corev1.Container) {
	c.Resources.Limits = withOldCPUAndMemory(c.Resources.Limits, old.Resources.Limits)
	c.Resources.Requests = withOldCPUAndMemory(c.Resources.Requests, old.Resources.Requests)
}

func withOldCPUAndMemory(cur, old corev1.ResourceList) corev1.ResourceList {
	if cur == nil && old == nil {
		return nil
	}
	out := corev1.ResourceList{}
	for name, q := range cur {
		if name != corev1.ResourceCPU && name != corev1.ResourceMemory {
			out[name] = q
		}
	}
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if q, ok := old[name]; ok {
			out[name] = q
		}
	}
	return out
}

func isSidecar(c *corev1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}
