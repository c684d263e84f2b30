package nodelifecycle

import (
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// conditionTaints maps a node condition in a given status to the
// NoSchedule taint upstream's TaintNodesByCondition puts on the node.
var conditionTaints = map[v1.NodeConditionType]map[v1.ConditionStatus]string{
	v1.NodeReady:              {v1.ConditionFalse: v1.TaintNodeNotReady, v1.ConditionUnknown: v1.TaintNodeUnreachable},
	v1.NodeMemoryPressure:     {v1.ConditionTrue: v1.TaintNodeMemoryPressure},
	v1.NodeDiskPressure:       {v1.ConditionTrue: v1.TaintNodeDiskPressure},
	v1.NodeNetworkUnavailable: {v1.ConditionTrue: v1.TaintNodeNetworkUnavailable},
	v1.NodePIDPressure:        {v1.ConditionTrue: v1.TaintNodePIDPressure},
}

// conditionTaintKeys are the keys of conditionTaints' taints: the
// NoSchedule taints this controller owns, with the unschedulable one.
var conditionTaintKeys = map[string]bool{
	v1.TaintNodeNotReady: true, v1.TaintNodeUnreachable: true, v1.TaintNodeMemoryPressure: true,
	v1.TaintNodeDiskPressure: true, v1.TaintNodeNetworkUnavailable: true, v1.TaintNodePIDPressure: true,
	v1.TaintNodeUnschedulable: true,
}

// noScheduleTaints are the NoSchedule taints a node's conditions and
// spec.unschedulable call for.
func noScheduleTaints(node *v1.Node) []v1.Taint {
	var out []v1.Taint
	for _, c := range node.Status.Conditions {
		if key, ok := conditionTaints[c.Type][c.Status]; ok {
			out = append(out, v1.Taint{Key: key, Effect: v1.TaintEffectNoSchedule})
		}
	}
	if node.Spec.Unschedulable {
		out = append(out, v1.Taint{Key: v1.TaintNodeUnschedulable, Effect: v1.TaintEffectNoSchedule})
	}
	return out
}

// reconcileNoSchedule is the node's taints with the condition taints made
// to match want; other taints are kept in order. changed is false when
// nothing is to be written.
func reconcileNoSchedule(taints, want []v1.Taint) (out []v1.Taint, changed bool) {
	wanted := map[string]bool{}
	for _, t := range want {
		wanted[t.Key] = true
	}
	have := map[string]bool{}
	for _, t := range taints {
		if t.Effect == v1.TaintEffectNoSchedule && conditionTaintKeys[t.Key] {
			if !wanted[t.Key] {
				changed = true
				continue
			}
			have[t.Key] = true
		}
		out = append(out, t)
	}
	for _, t := range want {
		if !have[t.Key] {
			out = append(out, t)
			have[t.Key] = true
			changed = true
		}
	}
	return out, changed
}

// noExecuteKey is the NoExecute taint a node's Ready condition calls for
// ("" when Ready is True or absent).
func noExecuteKey(ready *v1.NodeCondition) string {
	if ready == nil {
		return ""
	}
	switch ready.Status {
	case v1.ConditionFalse:
		return v1.TaintNodeNotReady
	case v1.ConditionUnknown:
		return v1.TaintNodeUnreachable
	}
	return ""
}

func isNoExecuteHealthTaint(t v1.Taint) bool {
	return t.Effect == v1.TaintEffectNoExecute && (t.Key == v1.TaintNodeNotReady || t.Key == v1.TaintNodeUnreachable)
}

// hasNoExecute reports whether the node carries the NoExecute taint key.
func hasNoExecute(taints []v1.Taint, key string) bool {
	for _, t := range taints {
		if t.Effect == v1.TaintEffectNoExecute && t.Key == key {
			return true
		}
	}
	return false
}

// withNoExecute is the node's taints with key ("" for none) as its only
// health NoExecute taint: the other one is swapped out, an existing one
// keeps its timeAdded (it is when the eviction clock started).
func withNoExecute(taints []v1.Taint, key string, now time.Time) (out []v1.Taint, changed bool) {
	found := false
	for _, t := range taints {
		if isNoExecuteHealthTaint(t) {
			if t.Key != key {
				changed = true
				continue
			}
			found = true
		}
		out = append(out, t)
	}
	if key != "" && !found {
		ts := metav1.NewTime(now)
		out = append(out, v1.Taint{Key: key, Effect: v1.TaintEffectNoExecute, TimeAdded: &ts})
		changed = true
	}
	return out, changed
}
