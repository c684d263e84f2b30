// Package testutil builds nodes and pods for the scheduler's table tests.
package testutil

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orca-project/orca/internal/scheduler/framework"
)

// Node returns a node with allocatable cpu (cores), memory (GiB) and 110
// pods, and the given labels (kubernetes.io/hostname is added).
func Node(name string, cpu, memGi int64, labels map[string]string) *v1.Node {
	l := map[string]string{v1.LabelHostname: name}
	for k, v := range labels {
		l[k] = v
	}
	rl := v1.ResourceList{
		v1.ResourceCPU:              *resource.NewQuantity(cpu, resource.DecimalSI),
		v1.ResourceMemory:           *resource.NewQuantity(memGi<<30, resource.BinarySI),
		v1.ResourcePods:             *resource.NewQuantity(110, resource.DecimalSI),
		v1.ResourceEphemeralStorage: *resource.NewQuantity(100<<30, resource.BinarySI),
	}
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l},
		Status:     v1.NodeStatus{Capacity: rl, Allocatable: rl.DeepCopy()},
	}
}

// WithTaints adds taints to a node.
func WithTaints(n *v1.Node, taints ...v1.Taint) *v1.Node {
	n.Spec.Taints = append(n.Spec.Taints, taints...)
	return n
}

// WithAllocatable sets one allocatable resource.
func WithAllocatable(n *v1.Node, name v1.ResourceName, q string) *v1.Node {
	n.Status.Allocatable[name] = resource.MustParse(q)
	return n
}

var uid int

// Pod returns a pod in namespace "default" with one container requesting
// cpu and memory (empty strings request nothing).
func Pod(name, cpu, mem string) *v1.Pod {
	uid++
	req := v1.ResourceList{}
	if cpu != "" {
		req[v1.ResourceCPU] = resource.MustParse(cpu)
	}
	if mem != "" {
		req[v1.ResourceMemory] = resource.MustParse(mem)
	}
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(fmt.Sprintf("uid-%d", uid))},
		Spec: v1.PodSpec{
			SchedulerName: v1.DefaultSchedulerName,
			Containers:    []v1.Container{{Name: "c", Image: "busybox", Resources: v1.ResourceRequirements{Requests: req}}},
		},
	}
}

// OnNode binds a pod to a node.
func OnNode(p *v1.Pod, node string) *v1.Pod {
	p.Spec.NodeName = node
	return p
}

// WithLabels sets labels on a pod.
func WithLabels(p *v1.Pod, labels map[string]string) *v1.Pod {
	p.Labels = labels
	return p
}

// Snapshot is the scheduler's view of nodes and the pods bound to them,
// built through a Cache as the scheduler builds it.
func Snapshot(nodes []*v1.Node, pods ...*v1.Pod) *framework.Snapshot {
	c := framework.NewCache()
	for _, n := range nodes {
		c.AddNode(n)
	}
	for _, p := range pods {
		c.AddPod(p)
	}
	var s *framework.Snapshot
	c.WithSnapshot(func(snap *framework.Snapshot) { s = snap })
	return s
}
