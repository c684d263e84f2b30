package core

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
)

// podEphemeralContainers is pods/ephemeralcontainers, the only way to add
// an ephemeral container to a pod (`kubectl debug` uses it). Everything
// else a write there carries is put back, and, as upstream, the pod's
// generation counts the change.
var podEphemeralContainers = &registry.Subresource{
	PrepareForUpdate: registry.Typed2(preparePodForEphemeralContainersUpdate),
	ValidateUpdate:   registry.TypedValidateUpdate(validatePodEphemeralContainersUpdate),
	Owns:             [][]string{{"spec", "ephemeralContainers"}},
	WritesSpec:       true,
}

// preparePodForEphemeralContainersUpdate keeps only the write's
// ephemeral containers; the metadata status writers may not change is
// not written here either.
func preparePodForEphemeralContainersUpdate(pod, old *corev1.Pod) {
	ecs := pod.Spec.EphemeralContainers
	pod.Spec = *old.Spec.DeepCopy()
	pod.Spec.EphemeralContainers = ecs
	pod.Status = *old.Status.DeepCopy()
	metav1.ResetObjectMetaForStatus(&pod.ObjectMeta, &old.ObjectMeta)
}

// validatePodEphemeralContainersUpdate is upstream's: ephemeral
// containers may only be added. Each existing one must come back
// unchanged, found by name since a patch need not keep the order. The
// spec as a whole is validated with the pod, which checks names against
// every container and targetContainerName against the pod's own.
func validatePodEphemeralContainersUpdate(pod, old *corev1.Pod) field.ErrorList {
	allErrs := validatePodAnnotationUpdates(pod, old)
	if _, mirror := old.Annotations[corev1.MirrorPodAnnotationKey]; mirror {
		return field.ErrorList{field.Forbidden(field.NewPath(""), "static pods do not support ephemeral containers")}
	}
	specPath := field.NewPath("spec", "ephemeralContainers")
	byName := make(map[string]*corev1.EphemeralContainer, len(pod.Spec.EphemeralContainers))
	for i := range pod.Spec.EphemeralContainers {
		byName[pod.Spec.EphemeralContainers[i].Name] = &pod.Spec.EphemeralContainers[i]
	}
	for _, o := range old.Spec.EphemeralContainers {
		n, ok := byName[o.Name]
		switch {
		case !ok:
			allErrs = append(allErrs, field.Forbidden(specPath, fmt.Sprintf("existing ephemeral containers %q may not be removed\n", o.Name)))
		case !semanticEqual(o, *n):
			allErrs = append(allErrs, field.Forbidden(specPath, fmt.Sprintf("existing ephemeral containers %q may not be changed\n%v", o.Name, specDiff(o, *n))))
		}
	}
	return allErrs
}
