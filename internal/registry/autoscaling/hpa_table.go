package autoscaling

import (
	"fmt"
	"strings"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/printers"
)

// hpaTable prints HPAs as upstream's `kubectl get` does; autoscaling/v1
// prints the same rows, from the object converted back to v2.
var hpaTable = &registry.Table{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Reference", Type: "string", Description: autoscalingv2.HorizontalPodAutoscalerSpec{}.SwaggerDoc()["scaleTargetRef"]},
		{Name: "Targets", Type: "string", Description: autoscalingv2.HorizontalPodAutoscalerSpec{}.SwaggerDoc()["metrics"]},
		{Name: "MinPods", Type: "string", Description: autoscalingv2.HorizontalPodAutoscalerSpec{}.SwaggerDoc()["minReplicas"]},
		{Name: "MaxPods", Type: "string", Description: autoscalingv2.HorizontalPodAutoscalerSpec{}.SwaggerDoc()["maxReplicas"]},
		{Name: "Replicas", Type: "string", Description: autoscalingv2.HorizontalPodAutoscalerStatus{}.SwaggerDoc()["currentReplicas"]},
		printers.AgeColumn(),
	},
	Row: registry.TypedRow(hpaRow),
}

func hpaRow(hpa *autoscalingv2.HorizontalPodAutoscaler, now time.Time) []any {
	minPods := "<unset>"
	if hpa.Spec.MinReplicas != nil {
		minPods = fmt.Sprintf("%d", *hpa.Spec.MinReplicas)
	}
	return []any{
		hpa.Spec.ScaleTargetRef.Kind + "/" + hpa.Spec.ScaleTargetRef.Name,
		formatMetrics(hpa.Spec.Metrics, hpa.Status.CurrentMetrics),
		minPods,
		int64(hpa.Spec.MaxReplicas),
		int64(hpa.Status.CurrentReplicas),
		printers.TranslateTimestampSince(hpa.CreationTimestamp, now),
	}
}

// formatMetrics is upstream's TARGETS cell: "current/target" per metric,
// matched to the status by position, the first two shown.
func formatMetrics(specs []autoscalingv2.MetricSpec, statuses []autoscalingv2.MetricStatus) string {
	if len(specs) == 0 {
		return "<none>"
	}
	const unknown = "<unknown>"
	var list []string
	for i, spec := range specs {
		var st *autoscalingv2.MetricStatus
		if i < len(statuses) {
			st = &statuses[i]
		}
		switch spec.Type {
		case autoscalingv2.ExternalMetricSourceType:
			var cur *autoscalingv2.MetricValueStatus
			if st != nil && st.External != nil {
				cur = &st.External.Current
			}
			list = append(list, formatValue(spec.External.Target, cur))
		case autoscalingv2.PodsMetricSourceType:
			current := unknown
			if st != nil && st.Pods != nil {
				current = st.Pods.Current.AverageValue.String()
			}
			list = append(list, fmt.Sprintf("%s/%s", current, spec.Pods.Target.AverageValue.String()))
		case autoscalingv2.ObjectMetricSourceType:
			var cur *autoscalingv2.MetricValueStatus
			if st != nil && st.Object != nil {
				cur = &st.Object.Current
			}
			list = append(list, formatValue(spec.Object.Target, cur))
		case autoscalingv2.ResourceMetricSourceType:
			var cur *autoscalingv2.MetricValueStatus
			if st != nil && st.Resource != nil {
				cur = &st.Resource.Current
			}
			list = append(list, string(spec.Resource.Name)+": "+formatResource(spec.Resource.Target, cur))
		case autoscalingv2.ContainerResourceMetricSourceType:
			var cur *autoscalingv2.MetricValueStatus
			if st != nil && st.ContainerResource != nil {
				cur = &st.ContainerResource.Current
			}
			list = append(list, string(spec.ContainerResource.Name)+": "+formatResource(spec.ContainerResource.Target, cur))
		default:
			list = append(list, "<unknown type>")
		}
	}
	const max = 2
	if len(list) > max {
		return fmt.Sprintf("%s + %d more...", strings.Join(list[:max], ", "), len(list)-max)
	}
	return strings.Join(list, ", ")
}

// formatValue prints an object or external metric: a total value, or an
// average per pod marked "(avg)".
func formatValue(target autoscalingv2.MetricTarget, cur *autoscalingv2.MetricValueStatus) string {
	current := "<unknown>"
	if target.AverageValue != nil {
		if cur != nil && cur.AverageValue != nil {
			current = cur.AverageValue.String()
		}
		return fmt.Sprintf("%s/%s (avg)", current, target.AverageValue.String())
	}
	if cur != nil {
		current = cur.Value.String()
	}
	return fmt.Sprintf("%s/%s", current, target.Value.String())
}

// formatResource prints a resource metric as a raw value or, lacking a
// target value, as a utilization.
func formatResource(target autoscalingv2.MetricTarget, cur *autoscalingv2.MetricValueStatus) string {
	if target.AverageValue != nil {
		current := "<unknown>"
		if cur != nil {
			current = cur.AverageValue.String()
		}
		return fmt.Sprintf("%s/%s", current, target.AverageValue.String())
	}
	current := "<unknown>"
	if cur != nil && cur.AverageUtilization != nil {
		current = fmt.Sprintf("%d%%", *cur.AverageUtilization)
	}
	t := "<auto>"
	if target.AverageUtilization != nil {
		t = fmt.Sprintf("%d%%", *target.AverageUtilization)
	}
	return fmt.Sprintf("%s/%s", current, t)
}
