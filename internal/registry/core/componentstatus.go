package core

import (
	"context"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/registry"
)

// Componentstatuses is upstream's deprecated view of the control plane's
// health: one object per component the server runs, computed when read.
var Componentstatuses = &registry.Resource{
	Group: "", Version: "v1", Name: "componentstatuses", Singular: "componentstatus", Kind: "ComponentStatus",
	ShortNames: []string{"cs"},
	Computed:   true,
	Deprecated: "v1 ComponentStatus is deprecated in v1.19+",
	New:        func() runtime.Object { return &corev1.ComponentStatus{} },
	NewList:    func() runtime.Object { return &corev1.ComponentStatusList{} },
	Table: &registry.Table{
		Columns: []metav1.TableColumnDefinition{
			{Name: "Status", Type: "string", Description: "Status of the component conditions"},
			{Name: "Message", Type: "string", Description: "Message of the component conditions"},
			{Name: "Error", Type: "string", Description: "Error of the component conditions"},
		},
		Row: func(obj runtime.Object, _ time.Time) []any {
			cs := obj.(*corev1.ComponentStatus)
			status, message, errText := "Unknown", "", ""
			for _, c := range cs.Conditions {
				if c.Type != corev1.ComponentHealthy {
					continue
				}
				status = "Unhealthy"
				if c.Status == corev1.ConditionTrue {
					status = "Healthy"
				}
				message, errText = c.Message, c.Error
				break
			}
			return []any{status, message, errText}
		},
	},
}

// ComponentProbe checks one component's health; nil is healthy.
type ComponentProbe struct {
	Name  string
	Check func(context.Context) error
}

// ComponentStatuses runs the probes and reports each as upstream does:
// Healthy with message "ok", or not, with the probe's error. The
// objects are ordered by name.
func ComponentStatuses(ctx context.Context, probes []ComponentProbe) []runtime.Object {
	sorted := append([]ComponentProbe(nil), probes...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	out := make([]runtime.Object, 0, len(sorted))
	for _, p := range sorted {
		cond := corev1.ComponentCondition{Type: corev1.ComponentHealthy, Status: corev1.ConditionTrue, Message: "ok"}
		if err := p.Check(ctx); err != nil {
			cond = corev1.ComponentCondition{Type: corev1.ComponentHealthy, Status: corev1.ConditionFalse, Error: err.Error()}
		}
		out = append(out, &corev1.ComponentStatus{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ComponentStatus"},
			ObjectMeta: metav1.ObjectMeta{Name: p.Name},
			Conditions: []corev1.ComponentCondition{cond},
		})
	}
	return out
}
