// Package nodeunschedulable rejects cordoned nodes (spec.unschedulable)
// unless the pod tolerates the unschedulable taint.
package nodeunschedulable

import (
	"context"

	v1 "k8s.io/api/core/v1"
	v1helper "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"

	"github.com/orca-project/orca/internal/scheduler/framework"
)

// Name is the plugin's name.
const Name = "NodeUnschedulable"

// ErrReason is upstream's reason.
const ErrReason = "node(s) were unschedulable"

// Plugin is the filter.
type Plugin struct{}

var _ framework.FilterPlugin = (*Plugin)(nil)

// Name implements framework.Plugin.
func (*Plugin) Name() string { return Name }

// Filter implements framework.FilterPlugin.
func (*Plugin) Filter(_ context.Context, _ *framework.CycleState, pod *framework.PodInfo, node *framework.NodeInfo) *framework.Status {
	if !node.Unschedulable {
		return nil
	}
	taint := v1.Taint{Key: v1.TaintNodeUnschedulable, Effect: v1.TaintEffectNoSchedule}
	if v1helper.TolerationsTolerateTaint(klog.Background(), pod.Pod.Spec.Tolerations, &taint, false) {
		return nil
	}
	return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReason)
}
