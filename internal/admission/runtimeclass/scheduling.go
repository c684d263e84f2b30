package runtimeclass

import (
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
)

// setScheduling keeps the pod to the nodes that run its class: the class's
// node selector joins the pod's (a key both set to different values is a
// conflict the pod cannot satisfy) and its tolerations join the pod's.
func setScheduling(pod *corev1.Pod, rc *nodev1.RuntimeClass) error {
	if rc == nil || rc.Scheduling == nil {
		return nil
	}
	selector := maps.Clone(pod.Spec.NodeSelector)
	for key, classValue := range rc.Scheduling.NodeSelector {
		if podValue, ok := selector[key]; ok && podValue != classValue {
			return fmt.Errorf("conflict: runtimeClass.scheduling.nodeSelector[%s] = %s; pod.spec.nodeSelector[%s] = %s", key, classValue, key, podValue)
		}
		if selector == nil {
			selector = map[string]string{}
		}
		selector[key] = classValue
	}
	pod.Spec.NodeSelector = selector
	pod.Spec.Tolerations = mergeTolerations(pod.Spec.Tolerations, rc.Scheduling.Tolerations)
	return nil
}

// mergeTolerations is upstream's: the pod's tolerations then the class's,
// leaving out any that another in the list already covers (of two equal
// ones, the first stays).
func mergeTolerations(first, second []corev1.Toleration) []corev1.Toleration {
	all := append(append([]corev1.Toleration(nil), first...), second...)
	var merged []corev1.Toleration
next:
	for i, t := range all {
		for _, m := range merged {
			if covers(m, t) {
				continue next
			}
		}
		for _, later := range all[i+1:] {
			if !apiequality.Semantic.DeepEqual(t, later) && covers(later, t) {
				continue next
			}
		}
		merged = append(merged, t)
	}
	return merged
}

// covers reports whether ss tolerates every taint t tolerates.
func covers(ss, t corev1.Toleration) bool {
	if apiequality.Semantic.DeepEqual(t, ss) {
		return true
	}
	// An empty key with Exists matches every key.
	if t.Key != ss.Key && (ss.Key != "" || ss.Operator != corev1.TolerationOpExists) {
		return false
	}
	// An empty effect matches every effect.
	if t.Effect != ss.Effect && ss.Effect != "" {
		return false
	}
	// A NoExecute toleration that lets go sooner covers less.
	if ss.Effect == corev1.TaintEffectNoExecute && ss.TolerationSeconds != nil {
		if t.TolerationSeconds == nil || *t.TolerationSeconds > *ss.TolerationSeconds {
			return false
		}
	}
	switch ss.Operator {
	case corev1.TolerationOpEqual, "":
		return t.Operator == corev1.TolerationOpEqual && t.Value == ss.Value
	case corev1.TolerationOpExists:
		return true
	}
	return false
}
