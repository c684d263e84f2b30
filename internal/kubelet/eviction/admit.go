package eviction

import (
	"fmt"
	"sort"

	v1 "k8s.io/api/core/v1"
	v1helper "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"

	"github.com/orca-project/orca/internal/kubelet/podstatus"
)

// Reason is the status reason of an evicted pod, and of one the node
// refused for its pressure.
const Reason = "Evicted"

// systemCriticalPriority is upstream's scheduling.SystemCriticalPriority.
const systemCriticalPriority = 2 * 1000000000

// IsCritical reports whether a pod is never evicted, as upstream's
// kubelettypes.IsCriticalPod: a static or mirror pod, or one of system
// critical priority.
func IsCritical(pod *v1.Pod) bool {
	if src, ok := pod.Annotations["kubernetes.io/config.source"]; ok && src != "api" {
		return true
	}
	if _, ok := pod.Annotations["kubernetes.io/config.mirror"]; ok {
		return true
	}
	return pod.Spec.Priority != nil && *pod.Spec.Priority >= systemCriticalPriority
}

// Admit is upstream's eviction admission of a new pod while the node is
// under pressure: with memory pressure alone, only BestEffort pods not
// tolerating the memory-pressure taint are refused; with any other
// pressure every pod is, critical pods excepted. The message is
// upstream's "The node had condition: [MemoryPressure]. ".
func Admit(pod *v1.Pod, pressure map[v1.NodeConditionType]bool) (ok bool, message string) {
	var conds []v1.NodeConditionType
	for c, on := range pressure {
		if on {
			conds = append(conds, c)
		}
	}
	if len(conds) == 0 || IsCritical(pod) {
		return true, ""
	}
	sort.Slice(conds, func(i, j int) bool { return order(conds[i]) < order(conds[j]) })
	if len(conds) == 1 && conds[0] == v1.NodeMemoryPressure {
		if podstatus.QOSClass(pod) != v1.PodQOSBestEffort {
			return true, ""
		}
		taint := &v1.Taint{Key: v1.TaintNodeMemoryPressure, Effect: v1.TaintEffectNoSchedule}
		if v1helper.TolerationsTolerateTaint(klog.Background(), pod.Spec.Tolerations, taint, false) {
			return true, ""
		}
	}
	return false, fmt.Sprintf("The node had condition: %v. ", conds)
}

func order(c v1.NodeConditionType) int {
	switch c {
	case v1.NodeMemoryPressure:
		return 0
	case v1.NodeDiskPressure:
		return 1
	}
	return 2
}
