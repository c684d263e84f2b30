// Package metrics describes metrics.k8s.io, the resource metrics API that
// upstream's metrics-server serves as an aggregated API and Orca serves
// in-process: NodeMetrics and PodMetrics, read-only views computed at
// each request from the last scrapes of the kubelets (see
// internal/metricsserver), with metrics-server's table columns.
package metrics

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"

	"github.com/orca-project/orca/internal/registry"
)

func init() {
	utilruntime.Must(metricsv1beta1.AddToScheme(scheme.Scheme))
}

// NodeMetrics are the nodes' usage.
var NodeMetrics = &registry.Resource{
	Group: metricsv1beta1.GroupName, Version: "v1beta1", Name: "nodes", Singular: "node", Kind: "NodeMetrics",
	Computed: true,
	New:      func() runtime.Object { return &metricsv1beta1.NodeMetrics{} },
	NewList:  func() runtime.Object { return &metricsv1beta1.NodeMetricsList{} },
	Table: usageTable(func(obj runtime.Object) (corev1.ResourceList, time.Duration) {
		m := obj.(*metricsv1beta1.NodeMetrics)
		return m.Usage, m.Window.Duration
	}),
}

// PodMetrics are the pods' usage, by container.
var PodMetrics = &registry.Resource{
	Group: metricsv1beta1.GroupName, Version: "v1beta1", Name: "pods", Singular: "pod", Kind: "PodMetrics",
	Namespaced: true, Computed: true,
	New:     func() runtime.Object { return &metricsv1beta1.PodMetrics{} },
	NewList: func() runtime.Object { return &metricsv1beta1.PodMetricsList{} },
	Table: usageTable(func(obj runtime.Object) (corev1.ResourceList, time.Duration) {
		m := obj.(*metricsv1beta1.PodMetrics)
		return PodUsage(m), m.Window.Duration
	}),
}

// usageTable is metrics-server's table: the name, then cpu and memory as
// quantities, then the window.
func usageTable(usage func(runtime.Object) (corev1.ResourceList, time.Duration)) *registry.Table {
	return &registry.Table{
		Columns: []metav1.TableColumnDefinition{
			{Name: "cpu", Type: "string", Format: "quantity"},
			{Name: "memory", Type: "string", Format: "quantity"},
			{Name: "Window", Type: "string", Format: "duration"},
		},
		Row: func(obj runtime.Object, _ time.Time) []any {
			u, window := usage(obj)
			cpu, mem := u[corev1.ResourceCPU], u[corev1.ResourceMemory]
			return []any{cpu.String(), mem.String(), window.String()}
		},
	}
}

// PodUsage sums a pod's containers' usage.
func PodUsage(m *metricsv1beta1.PodMetrics) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, c := range m.Containers {
		for k, v := range c.Usage {
			sum := out[k]
			sum.Add(v)
			out[k] = sum
		}
	}
	return out
}
