// Package nodename rejects every node but the one a pod names in
// spec.nodeName (a pod created bound never reaches the scheduler, but a
// preemption dry run or a mirror of upstream's rule set may ask).
package nodename

import (
	"context"

	"github.com/orca-project/orca/internal/scheduler/framework"
)

// Name is the plugin's name.
const Name = "NodeName"

// ErrReason is upstream's reason.
const ErrReason = "node(s) didn't match the requested node name"

// Plugin is the filter.
type Plugin struct{}

var _ framework.FilterPlugin = (*Plugin)(nil)

// Name implements framework.Plugin.
func (*Plugin) Name() string { return Name }

// Filter implements framework.FilterPlugin.
func (*Plugin) Filter(_ context.Context, _ *framework.CycleState, pod *framework.PodInfo, node *framework.NodeInfo) *framework.Status {
	if pod.Pod.Spec.NodeName == "" || pod.Pod.Spec.NodeName == node.Name() {
		return nil
	}
	return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReason)
}
