package podautoscaler

import (
	"fmt"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// setCondition sets a condition of hpa's status, moving its transition
// time only when its status changes.
func setCondition(hpa *autoscalingv2.HorizontalPodAutoscaler, t autoscalingv2.HorizontalPodAutoscalerConditionType, status v1.ConditionStatus, reason, message string, now time.Time, args ...any) {
	conds := hpa.Status.Conditions
	i := 0
	for ; i < len(conds) && conds[i].Type != t; i++ {
	}
	if i == len(conds) {
		conds = append(conds, autoscalingv2.HorizontalPodAutoscalerCondition{Type: t})
	}
	c := &conds[i]
	if c.Status != status {
		c.LastTransitionTime = metav1.NewTime(now)
	}
	c.Status, c.Reason = status, reason
	c.Message = fmt.Sprintf(message, args...)
	hpa.Status.Conditions = conds
}

func conditionTrue(hpa *autoscalingv2.HorizontalPodAutoscaler, t autoscalingv2.HorizontalPodAutoscalerConditionType) bool {
	for _, c := range hpa.Status.Conditions {
		if c.Type == t {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

func hasObjectOrExternalMetrics(hpa *autoscalingv2.HorizontalPodAutoscaler) bool {
	for _, m := range hpa.Spec.Metrics {
		if m.Type == autoscalingv2.ObjectMetricSourceType || m.Type == autoscalingv2.ExternalMetricSourceType {
			return true
		}
	}
	return false
}

// tolerancesFor are the controller's tolerance unless the behavior sets
// its own per direction (HPAConfigurableTolerance, GA in 1.37).
func tolerancesFor(hpa *autoscalingv2.HorizontalPodAutoscaler) tolerances {
	t := tolerances{defaultTolerance, defaultTolerance}
	if b := hpa.Spec.Behavior; b != nil {
		if b.ScaleDown != nil && b.ScaleDown.Tolerance != nil {
			t.down = b.ScaleDown.Tolerance.AsApproximateFloat64()
		}
		if b.ScaleUp != nil && b.ScaleUp.Tolerance != nil {
			t.up = b.ScaleUp.Tolerance.AsApproximateFloat64()
		}
	}
	return t
}
