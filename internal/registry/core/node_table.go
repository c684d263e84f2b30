package core

import (
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/printers"
)

// nodeTable prints nodes as upstream's `kubectl get` does.
var nodeTable = &registry.Table{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Status", Type: "string", Description: "The status of the node"},
		{Name: "Roles", Type: "string", Description: "The roles of the node"},
		printers.AgeColumn(),
		{Name: "Version", Type: "string", Description: corev1.NodeSystemInfo{}.SwaggerDoc()["kubeletVersion"]},
		{Name: "Internal-IP", Type: "string", Priority: 1, Description: corev1.NodeStatus{}.SwaggerDoc()["addresses"]},
		{Name: "External-IP", Type: "string", Priority: 1, Description: corev1.NodeStatus{}.SwaggerDoc()["addresses"]},
		{Name: "OS-Image", Type: "string", Priority: 1, Description: corev1.NodeSystemInfo{}.SwaggerDoc()["osImage"]},
		{Name: "Kernel-Version", Type: "string", Priority: 1, Description: corev1.NodeSystemInfo{}.SwaggerDoc()["kernelVersion"]},
		{Name: "Container-Runtime", Type: "string", Priority: 1, Description: corev1.NodeSystemInfo{}.SwaggerDoc()["containerRuntimeVersion"]},
	},
	Row: registry.TypedRow(nodeRow),
}

// nodeFields lists the fields a field selector over nodes may name.
var nodeFields = registry.TypedFields(func(node *corev1.Node) fields.Set {
	return fields.Set{"spec.unschedulable": strconv.FormatBool(node.Spec.Unschedulable)}
})

const (
	// labelNodeRolePrefix marks a role by the key alone:
	// node-role.kubernetes.io/control-plane="".
	labelNodeRolePrefix = "node-role.kubernetes.io/"
	// nodeLabelRole is the older form that names the role in the value.
	nodeLabelRole = "kubernetes.io/role"
)

func nodeRow(node *corev1.Node, now time.Time) []any {
	// Only the Ready condition shows; pressure conditions would drown it.
	var status []string
	for i := range node.Status.Conditions {
		c := &node.Status.Conditions[i]
		if c.Type != corev1.NodeReady {
			continue
		}
		// Upstream keys conditions by type, so the last Ready entry wins.
		if c.Status == corev1.ConditionTrue {
			status = []string{string(c.Type)}
		} else {
			status = []string{"Not" + string(c.Type)}
		}
	}
	if len(status) == 0 {
		status = append(status, "Unknown")
	}
	if node.Spec.Unschedulable {
		status = append(status, "SchedulingDisabled")
	}

	roles := strings.Join(findNodeRoles(node), ",")
	if roles == "" {
		roles = "<none>"
	}

	info := node.Status.NodeInfo
	return []any{
		strings.Join(status, ","),
		roles,
		printers.TranslateTimestampSince(node.CreationTimestamp, now),
		info.KubeletVersion,
		nodeAddress(node, corev1.NodeInternalIP),
		nodeAddress(node, corev1.NodeExternalIP),
		orUnknown(info.OSImage),
		orUnknown(info.KernelVersion),
		orUnknown(info.ContainerRuntimeVersion),
	}
}

// findNodeRoles returns the node's roles, sorted and without duplicates.
func findNodeRoles(node *corev1.Node) []string {
	set := map[string]bool{}
	for k, v := range node.Labels {
		switch {
		case strings.HasPrefix(k, labelNodeRolePrefix):
			if role := strings.TrimPrefix(k, labelNodeRolePrefix); role != "" {
				set[role] = true
			}
		case k == nodeLabelRole && v != "":
			set[v] = true
		}
	}
	roles := make([]string, 0, len(set))
	for r := range set {
		roles = append(roles, r)
	}
	sort.Strings(roles)
	return roles
}

func nodeAddress(node *corev1.Node, t corev1.NodeAddressType) string {
	for _, a := range node.Status.Addresses {
		if a.Type == t {
			return a.Address
		}
	}
	return "<none>"
}

func orUnknown(s string) string {
	if s == "" {
		return "<unknown>"
	}
	return s
}
