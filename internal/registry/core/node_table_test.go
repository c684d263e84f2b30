package core

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestNodeColumns(t *testing.T) {
	checkTableColumns(t, nodeTable, []tableCol{
		{"Status", "string", 0}, {"Roles", "string", 0}, {"Age", "string", 0}, {"Version", "string", 0},
		{"Internal-IP", "string", 1}, {"External-IP", "string", 1}, {"OS-Image", "string", 1},
		{"Kernel-Version", "string", 1}, {"Container-Runtime", "string", 1},
	})
}

func nodeConditionOf(t corev1.NodeConditionType, s corev1.ConditionStatus) corev1.NodeCondition {
	return corev1.NodeCondition{Type: t, Status: s}
}

func TestNodeRow(t *testing.T) {
	for _, tc := range []struct {
		name          string
		node          corev1.Node
		status, roles string
	}{
		{
			name: "ready worker",
			node: corev1.Node{Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
				nodeConditionOf(corev1.NodeMemoryPressure, corev1.ConditionFalse), nodeConditionOf(corev1.NodeReady, corev1.ConditionTrue),
			}}},
			status: "Ready", roles: "<none>",
		},
		{
			name: "cordoned control plane",
			node: corev1.Node{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{
					"node-role.kubernetes.io/control-plane": "", "node-role.kubernetes.io/etcd": "true",
					"node-role.kubernetes.io/": "", "kubernetes.io/hostname": "cp",
				}},
				Spec:   corev1.NodeSpec{Unschedulable: true},
				Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{nodeConditionOf(corev1.NodeReady, corev1.ConditionTrue)}},
			},
			status: "Ready,SchedulingDisabled", roles: "control-plane,etcd",
		},
		{
			name: "not ready, legacy role label",
			node: corev1.Node{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"kubernetes.io/role": "master", "node-role.kubernetes.io/master": ""}},
				Status:     corev1.NodeStatus{Conditions: []corev1.NodeCondition{nodeConditionOf(corev1.NodeReady, corev1.ConditionUnknown)}},
			},
			status: "NotReady", roles: "master",
		},
		{
			name:   "no conditions",
			node:   corev1.Node{Spec: corev1.NodeSpec{Unschedulable: true}},
			status: "Unknown,SchedulingDisabled", roles: "<none>",
		},
		{
			name: "empty legacy role ignored",
			node: corev1.Node{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"kubernetes.io/role": ""}},
				Status:     corev1.NodeStatus{Conditions: []corev1.NodeCondition{nodeConditionOf(corev1.NodeReady, corev1.ConditionFalse)}},
			},
			status: "NotReady", roles: "<none>",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkTableCells(t, nodeTable, &tc.node, map[string]any{"Status": tc.status, "Roles": tc.roles})
		})
	}
}

func TestNodeWideCells(t *testing.T) {
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{CreationTimestamp: tableAgo(100 * time.Minute)},
		Status: corev1.NodeStatus{
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeHostName, Address: "n1"}, {Type: corev1.NodeInternalIP, Address: "10.0.0.1"},
				{Type: corev1.NodeInternalIP, Address: "10.0.0.2"}, {Type: corev1.NodeExternalIP, Address: "1.2.3.4"},
			},
			NodeInfo: corev1.NodeSystemInfo{KubeletVersion: "v1.37.2", OSImage: "Debian", KernelVersion: "6.1", ContainerRuntimeVersion: "containerd://2.0"},
		},
	}
	checkTableCells(t, nodeTable, node, map[string]any{
		"Age": "100m", "Version": "v1.37.2", "Internal-IP": "10.0.0.1", "External-IP": "1.2.3.4",
		"OS-Image": "Debian", "Kernel-Version": "6.1", "Container-Runtime": "containerd://2.0",
	})
	checkTableCells(t, nodeTable, &corev1.Node{}, map[string]any{
		"Version": "", "Internal-IP": "<none>", "External-IP": "<none>",
		"OS-Image": "<unknown>", "Kernel-Version": "<unknown>", "Container-Runtime": "<unknown>",
	})
}

func TestNodeFields(t *testing.T) {
	if got := nodeFields(&corev1.Node{Spec: corev1.NodeSpec{Unschedulable: true}}); len(got) != 1 || got["spec.unschedulable"] != "true" {
		t.Errorf("got %v", got)
	}
	if got := nodeFields(&corev1.Node{})["spec.unschedulable"]; got != "false" {
		t.Errorf("got %q", got)
	}
}
