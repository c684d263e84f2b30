// Package tainttoleration keeps pods off nodes whose NoSchedule and
// NoExecute taints they do not tolerate, and steers them away from nodes
// with untolerated PreferNoSchedule taints.
package tainttoleration

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	v1helper "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"

	"github.com/orca-project/orca/internal/scheduler/framework"
)

// Name is the plugin's name.
const Name = "TaintToleration"

// Plugin is the filter and the score.
type Plugin struct{}

var (
	_ framework.FilterPlugin         = (*Plugin)(nil)
	_ framework.ScorePlugin          = (*Plugin)(nil)
	_ framework.NormalizeScorePlugin = (*Plugin)(nil)
)

// Name implements framework.Plugin.
func (*Plugin) Name() string { return Name }

// Filter implements framework.FilterPlugin with upstream's reason
// "node(s) had untolerated taint {key: value}".
func (*Plugin) Filter(_ context.Context, _ *framework.CycleState, pod *framework.PodInfo, node *framework.NodeInfo) *framework.Status {
	if len(node.Taints) == 0 {
		return nil
	}
	taint, found := v1helper.FindMatchingUntoleratedTaint(klog.Background(), node.Taints, pod.Pod.Spec.Tolerations, func(t *v1.Taint) bool {
		return t.Effect == v1.TaintEffectNoSchedule || t.Effect == v1.TaintEffectNoExecute
	}, false)
	if !found {
		return nil
	}
	return framework.NewStatus(framework.UnschedulableAndUnresolvable, fmt.Sprintf("node(s) had untolerated taint {%s: %s}", taint.Key, taint.Value))
}

// Score counts the node's PreferNoSchedule taints the pod does not
// tolerate; NormalizeScore turns fewer into better.
func (*Plugin) Score(_ context.Context, _ *framework.CycleState, pod *framework.PodInfo, node *framework.NodeInfo) (int64, *framework.Status) {
	if len(node.Taints) == 0 {
		return 0, nil
	}
	var tols []v1.Toleration
	for _, t := range pod.Pod.Spec.Tolerations {
		if t.Effect == "" || t.Effect == v1.TaintEffectPreferNoSchedule {
			tols = append(tols, t)
		}
	}
	var n int64
	for i := range node.Taints {
		t := &node.Taints[i]
		if t.Effect == v1.TaintEffectPreferNoSchedule && !v1helper.TolerationsTolerateTaint(klog.Background(), tols, t, false) {
			n++
		}
	}
	return n, nil
}

// NormalizeScore reverses the counts onto [0, MaxNodeScore].
func (*Plugin) NormalizeScore(_ context.Context, _ *framework.CycleState, _ *framework.PodInfo, scores []framework.NodeScore) *framework.Status {
	framework.DefaultNormalizeScore(framework.MaxNodeScore, true, scores)
	return nil
}
