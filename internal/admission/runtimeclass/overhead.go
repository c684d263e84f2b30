package runtimeclass

import (
	"errors"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
)

// Upstream's refusals. An overhead is the runtime's cost per pod, which
// only the class that names the runtime can know, so a pod may not state
// one of its own.
var (
	errOverheadMismatch = errors.New("pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead")
	errOverheadNoClass  = errors.New("pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead")
)

// setOverhead gives the pod its class's fixed overhead. A pod that states
// the same overhead itself is accepted; a different one is not.
func setOverhead(pod *corev1.Pod, rc *nodev1.RuntimeClass) error {
	if rc == nil || rc.Overhead == nil {
		return nil
	}
	if len(pod.Spec.Overhead) > 0 && !apiequality.Semantic.DeepEqual(rc.Overhead.PodFixed, pod.Spec.Overhead) {
		return errOverheadMismatch
	}
	pod.Spec.Overhead = rc.Overhead.PodFixed.DeepCopy()
	return nil
}

// checkOverhead is the validating half: the pod's overhead must be
// exactly its class's, and absent when the class (or the pod) names none.
func checkOverhead(pod *corev1.Pod, rc *nodev1.RuntimeClass) error {
	if rc != nil && rc.Overhead != nil {
		if !apiequality.Semantic.DeepEqual(rc.Overhead.PodFixed, pod.Spec.Overhead) {
			return errOverheadMismatch
		}
		return nil
	}
	if pod.Spec.Overhead != nil {
		return errOverheadNoClass
	}
	return nil
}
