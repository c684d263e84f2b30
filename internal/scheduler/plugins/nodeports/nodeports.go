// Package nodeports rejects nodes where a host port the pod asks for is
// already taken.
package nodeports

import (
	"context"

	"github.com/orca-project/orca/internal/scheduler/framework"
)

// Name is the plugin's name.
const Name = "NodePorts"

// ErrReason is upstream's reason.
const ErrReason = "node(s) didn't have free ports for the requested pod ports"

// Plugin is the filter.
type Plugin struct{}

var _ framework.FilterPlugin = (*Plugin)(nil)

// Name implements framework.Plugin.
func (*Plugin) Name() string { return Name }

// Filter implements framework.FilterPlugin.
func (*Plugin) Filter(_ context.Context, _ *framework.CycleState, pod *framework.PodInfo, node *framework.NodeInfo) *framework.Status {
	for _, p := range pod.HostPorts {
		if node.PortConflict(p) {
			return framework.NewStatus(framework.Unschedulable, ErrReason)
		}
	}
	return nil
}
