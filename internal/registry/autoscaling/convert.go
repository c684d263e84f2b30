package autoscaling

import (
	"encoding/json"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

// The annotations in which an autoscaling/v1 HPA carries what its version
// has no fields for, as upstream names them.
const (
	metricSpecsAnnotation   = "autoscaling.alpha.kubernetes.io/metrics"
	metricStatusAnnotation  = "autoscaling.alpha.kubernetes.io/current-metrics"
	conditionsAnnotation    = "autoscaling.alpha.kubernetes.io/conditions"
	behaviorSpecsAnnotation = "autoscaling.alpha.kubernetes.io/behavior"
	// The tolerances, which autoscaling/v2beta2 kept in annotations, are
	// dropped as upstream drops them.
	scaleDownToleranceAnnotation = "autoscaling.alpha.kubernetes.io/scale-down-tolerance"
	scaleUpToleranceAnnotation   = "autoscaling.alpha.kubernetes.io/scale-up-tolerance"
)

// isRoundTripAnnotation reports the annotations conversion owns.
func isRoundTripAnnotation(k string) bool {
	switch k {
	case metricSpecsAnnotation, metricStatusAnnotation, conditionsAnnotation, behaviorSpecsAnnotation,
		scaleDownToleranceAnnotation, scaleUpToleranceAnnotation:
		return true
	}
	return false
}

// dropRoundTrip returns annotations without the ones conversion owns,
// copying only when there is something to drop.
func dropRoundTrip(in map[string]string) map[string]string {
	found := false
	for k := range in {
		if isRoundTripAnnotation(k) {
			found = true
		}
	}
	if !found {
		return in
	}
	out := make(map[string]string, len(in))
	for k, v := range in {
		if !isRoundTripAnnotation(k) {
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// isCPUUtilization is the one metric autoscaling/v1 has a field for.
func isCPUUtilization(m autoscalingv2.MetricSpec) bool {
	return m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil && m.Resource.Name == corev1.ResourceCPU && m.Resource.Target.AverageUtilization != nil
}

// toV1 is upstream's conversion to autoscaling/v1: the cpu utilization
// target becomes targetCPUUtilizationPercentage; other metrics, the
// current metrics, the conditions and the behavior go to annotations.
func toV1(in *autoscalingv2.HorizontalPodAutoscaler) *autoscalingv1.HorizontalPodAutoscaler {
	in = in.DeepCopy()
	out := &autoscalingv1.HorizontalPodAutoscaler{
		ObjectMeta: in.ObjectMeta,
		Spec: autoscalingv1.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv1.CrossVersionObjectReference(in.Spec.ScaleTargetRef),
			MinReplicas:    in.Spec.MinReplicas,
			MaxReplicas:    in.Spec.MaxReplicas,
		},
		Status: autoscalingv1.HorizontalPodAutoscalerStatus{
			ObservedGeneration: in.Status.ObservedGeneration,
			LastScaleTime:      in.Status.LastScaleTime,
			CurrentReplicas:    in.Status.CurrentReplicas,
			DesiredReplicas:    in.Status.DesiredReplicas,
		},
	}
	out.SetGroupVersionKind(autoscalingv1.SchemeGroupVersion.WithKind("HorizontalPodAutoscaler"))
	out.Annotations = dropRoundTrip(out.Annotations)
	annotate := func(key string, v any) {
		enc, err := json.Marshal(v)
		if err != nil {
			return
		}
		if out.Annotations == nil {
			out.Annotations = map[string]string{}
		}
		out.Annotations[key] = string(enc)
	}

	var other []autoscalingv1.MetricSpec
	for _, m := range in.Spec.Metrics {
		if isCPUUtilization(m) {
			if out.Spec.TargetCPUUtilizationPercentage == nil {
				out.Spec.TargetCPUUtilizationPercentage = ptr.To(*m.Resource.Target.AverageUtilization)
			}
			continue
		}
		other = append(other, metricSpecToV1(m))
	}
	if len(other) > 0 {
		annotate(metricSpecsAnnotation, other)
	}
	if len(in.Status.CurrentMetrics) > 0 {
		current := make([]autoscalingv1.MetricStatus, len(in.Status.CurrentMetrics))
		for i, m := range in.Status.CurrentMetrics {
			current[i] = metricStatusToV1(m)
			if m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil && m.Resource.Name == corev1.ResourceCPU && m.Resource.Current.AverageUtilization != nil {
				out.Status.CurrentCPUUtilizationPercentage = ptr.To(*m.Resource.Current.AverageUtilization)
			}
		}
		annotate(metricStatusAnnotation, current)
	}
	if in.Spec.Behavior != nil {
		annotate(behaviorSpecsAnnotation, behaviorToAnnotation(in.Spec.Behavior))
	}
	if len(in.Status.Conditions) > 0 {
		conds := make([]autoscalingv1.HorizontalPodAutoscalerCondition, len(in.Status.Conditions))
		for i, c := range in.Status.Conditions {
			conds[i] = autoscalingv1.HorizontalPodAutoscalerCondition{
				Type: autoscalingv1.HorizontalPodAutoscalerConditionType(c.Type), Status: c.Status,
				LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message,
				ObservedGeneration: c.ObservedGeneration,
			}
		}
		annotate(conditionsAnnotation, conds)
	}
	return out
}

// toV2 is the reverse of toV1. An HPA with no metrics at all gets the
// default cpu target here, where the annotations are at hand, as
// upstream applies it.
func toV2(in *autoscalingv1.HorizontalPodAutoscaler) *autoscalingv2.HorizontalPodAutoscaler {
	in = in.DeepCopy()
	out := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: in.ObjectMeta,
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference(in.Spec.ScaleTargetRef),
			MinReplicas:    in.Spec.MinReplicas,
			MaxReplicas:    in.Spec.MaxReplicas,
		},
		Status: autoscalingv2.HorizontalPodAutoscalerStatus{
			ObservedGeneration: in.Status.ObservedGeneration,
			LastScaleTime:      in.Status.LastScaleTime,
			CurrentReplicas:    in.Status.CurrentReplicas,
			DesiredReplicas:    in.Status.DesiredReplicas,
		},
	}
	out.SetGroupVersionKind(autoscalingv2.SchemeGroupVersion.WithKind("HorizontalPodAutoscaler"))
	var cpu []autoscalingv2.MetricSpec
	if t := in.Spec.TargetCPUUtilizationPercentage; t != nil {
		cpu = []autoscalingv2.MetricSpec{cpuUtilization(*t)}
	}
	out.Spec.Metrics = cpu
	if enc, ok := in.Annotations[metricSpecsAnnotation]; ok {
		var other []autoscalingv1.MetricSpec
		if json.Unmarshal([]byte(enc), &other) == nil {
			metrics := make([]autoscalingv2.MetricSpec, 0, len(other)+len(cpu))
			for _, m := range other {
				metrics = append(metrics, metricSpecToV2(m))
			}
			out.Spec.Metrics = append(metrics, cpu...)
		}
	}
	if enc, ok := in.Annotations[behaviorSpecsAnnotation]; ok {
		var b behaviorAnnotation
		if json.Unmarshal([]byte(enc), &b) == nil && (b.ScaleUp != nil || b.ScaleDown != nil) {
			out.Spec.Behavior = b.toV2()
		}
	}
	if u := in.Status.CurrentCPUUtilizationPercentage; u != nil {
		out.Status.CurrentMetrics = []autoscalingv2.MetricStatus{{
			Type:     autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricStatus{Name: corev1.ResourceCPU, Current: autoscalingv2.MetricValueStatus{AverageUtilization: ptr.To(*u)}},
		}}
	}
	if enc, ok := in.Annotations[metricStatusAnnotation]; ok {
		var current []autoscalingv1.MetricStatus
		if json.Unmarshal([]byte(enc), &current) == nil {
			out.Status.CurrentMetrics = make([]autoscalingv2.MetricStatus, len(current))
			for i, m := range current {
				out.Status.CurrentMetrics[i] = metricStatusToV2(m)
			}
		}
	}
	if len(out.Spec.Metrics) == 0 {
		out.Spec.Metrics = []autoscalingv2.MetricSpec{cpuUtilization(DefaultCPUUtilization)}
	}
	if enc, ok := in.Annotations[conditionsAnnotation]; ok {
		var conds []autoscalingv1.HorizontalPodAutoscalerCondition
		if json.Unmarshal([]byte(enc), &conds) == nil {
			out.Status.Conditions = make([]autoscalingv2.HorizontalPodAutoscalerCondition, len(conds))
			for i, c := range conds {
				out.Status.Conditions[i] = autoscalingv2.HorizontalPodAutoscalerCondition{
					Type: autoscalingv2.HorizontalPodAutoscalerConditionType(c.Type), Status: c.Status,
					LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message,
					ObservedGeneration: c.ObservedGeneration,
				}
			}
		}
	}
	out.Annotations = dropRoundTrip(out.Annotations)
	return out
}

func cpuUtilization(percent int32) autoscalingv2.MetricSpec {
	m := defaultCPUMetric()
	m.Resource.Target.AverageUtilization = ptr.To(percent)
	return m
}

func metricSpecToV1(in autoscalingv2.MetricSpec) autoscalingv1.MetricSpec {
	out := autoscalingv1.MetricSpec{Type: autoscalingv1.MetricSourceType(in.Type)}
	if s := in.Object; s != nil {
		o := &autoscalingv1.ObjectMetricSource{
			Target:       autoscalingv1.CrossVersionObjectReference(s.DescribedObject),
			MetricName:   s.Metric.Name,
			Selector:     s.Metric.Selector,
			AverageValue: s.Target.AverageValue,
		}
		if s.Target.Value != nil {
			o.TargetValue = *s.Target.Value
		}
		out.Object = o
	}
	if s := in.Pods; s != nil {
		p := &autoscalingv1.PodsMetricSource{MetricName: s.Metric.Name, Selector: s.Metric.Selector}
		if s.Target.AverageValue != nil {
			p.TargetAverageValue = *s.Target.AverageValue
		}
		out.Pods = p
	}
	if s := in.Resource; s != nil {
		out.Resource = &autoscalingv1.ResourceMetricSource{Name: s.Name, TargetAverageUtilization: s.Target.AverageUtilization, TargetAverageValue: s.Target.AverageValue}
	}
	if s := in.ContainerResource; s != nil {
		out.ContainerResource = &autoscalingv1.ContainerResourceMetricSource{Name: s.Name, Container: s.Container, TargetAverageUtilization: s.Target.AverageUtilization, TargetAverageValue: s.Target.AverageValue}
	}
	if s := in.External; s != nil {
		out.External = &autoscalingv1.ExternalMetricSource{MetricName: s.Metric.Name, MetricSelector: s.Metric.Selector, TargetValue: s.Target.Value, TargetAverageValue: s.Target.AverageValue}
	}
	return out
}

// resourceTarget is a v1 resource target in v2 form: a utilization when
// one is given, else an average value.
func resourceTarget(utilization *int32, value *resource.Quantity) autoscalingv2.MetricTarget {
	t := autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageUtilization: utilization, AverageValue: value}
	if utilization != nil {
		t.Type = autoscalingv2.UtilizationMetricType
	}
	return t
}

func metricSpecToV2(in autoscalingv1.MetricSpec) autoscalingv2.MetricSpec {
	out := autoscalingv2.MetricSpec{Type: autoscalingv2.MetricSourceType(in.Type)}
	if s := in.Object; s != nil {
		t := autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: ptr.To(s.TargetValue), AverageValue: s.AverageValue}
		if s.AverageValue != nil {
			t.Type = autoscalingv2.AverageValueMetricType
			// v1 always serializes targetValue; a zero one is not a target.
			if s.TargetValue.IsZero() {
				t.Value = nil
			}
		}
		out.Object = &autoscalingv2.ObjectMetricSource{
			DescribedObject: autoscalingv2.CrossVersionObjectReference(s.Target),
			Metric:          autoscalingv2.MetricIdentifier{Name: s.MetricName, Selector: s.Selector},
			Target:          t,
		}
	}
	if s := in.Pods; s != nil {
		out.Pods = &autoscalingv2.PodsMetricSource{
			Metric: autoscalingv2.MetricIdentifier{Name: s.MetricName, Selector: s.Selector},
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(s.TargetAverageValue)},
		}
	}
	if s := in.Resource; s != nil {
		out.Resource = &autoscalingv2.ResourceMetricSource{Name: s.Name, Target: resourceTarget(s.TargetAverageUtilization, s.TargetAverageValue)}
	}
	if s := in.ContainerResource; s != nil {
		out.ContainerResource = &autoscalingv2.ContainerResourceMetricSource{Name: s.Name, Container: s.Container, Target: resourceTarget(s.TargetAverageUtilization, s.TargetAverageValue)}
	}
	if s := in.External; s != nil {
		t := autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: s.TargetValue, AverageValue: s.TargetAverageValue}
		if s.TargetValue == nil {
			t.Type = autoscalingv2.AverageValueMetricType
		}
		out.External = &autoscalingv2.ExternalMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: s.MetricName, Selector: s.MetricSelector}, Target: t}
	}
	return out
}

func metricStatusToV1(in autoscalingv2.MetricStatus) autoscalingv1.MetricStatus {
	out := autoscalingv1.MetricStatus{Type: autoscalingv1.MetricSourceType(in.Type)}
	deref := func(q *resource.Quantity) resource.Quantity {
		if q == nil {
			return resource.Quantity{}
		}
		return *q
	}
	if s := in.Object; s != nil {
		out.Object = &autoscalingv1.ObjectMetricStatus{
			Target:     autoscalingv1.CrossVersionObjectReference(s.DescribedObject),
			MetricName: s.Metric.Name, Selector: s.Metric.Selector,
			CurrentValue: deref(s.Current.Value), AverageValue: s.Current.AverageValue,
		}
	}
	if s := in.Pods; s != nil {
		out.Pods = &autoscalingv1.PodsMetricStatus{MetricName: s.Metric.Name, Selector: s.Metric.Selector, CurrentAverageValue: deref(s.Current.AverageValue)}
	}
	if s := in.Resource; s != nil {
		out.Resource = &autoscalingv1.ResourceMetricStatus{Name: s.Name, CurrentAverageUtilization: s.Current.AverageUtilization, CurrentAverageValue: deref(s.Current.AverageValue)}
	}
	if s := in.ContainerResource; s != nil {
		out.ContainerResource = &autoscalingv1.ContainerResourceMetricStatus{Name: s.Name, Container: s.Container, CurrentAverageUtilization: s.Current.AverageUtilization, CurrentAverageValue: deref(s.Current.AverageValue)}
	}
	if s := in.External; s != nil {
		out.External = &autoscalingv1.ExternalMetricStatus{MetricName: s.Metric.Name, MetricSelector: s.Metric.Selector, CurrentValue: deref(s.Current.Value), CurrentAverageValue: s.Current.AverageValue}
	}
	return out
}

func metricStatusToV2(in autoscalingv1.MetricStatus) autoscalingv2.MetricStatus {
	out := autoscalingv2.MetricStatus{Type: autoscalingv2.MetricSourceType(in.Type)}
	if s := in.Object; s != nil {
		out.Object = &autoscalingv2.ObjectMetricStatus{
			DescribedObject: autoscalingv2.CrossVersionObjectReference(s.Target),
			Metric:          autoscalingv2.MetricIdentifier{Name: s.MetricName, Selector: s.Selector},
			Current:         autoscalingv2.MetricValueStatus{Value: ptr.To(s.CurrentValue), AverageValue: s.AverageValue},
		}
	}
	if s := in.Pods; s != nil {
		out.Pods = &autoscalingv2.PodsMetricStatus{
			Metric:  autoscalingv2.MetricIdentifier{Name: s.MetricName, Selector: s.Selector},
			Current: autoscalingv2.MetricValueStatus{AverageValue: ptr.To(s.CurrentAverageValue)},
		}
	}
	if s := in.Resource; s != nil {
		out.Resource = &autoscalingv2.ResourceMetricStatus{Name: s.Name, Current: autoscalingv2.MetricValueStatus{AverageValue: ptr.To(s.CurrentAverageValue), AverageUtilization: s.CurrentAverageUtilization}}
	}
	if s := in.ContainerResource; s != nil {
		out.ContainerResource = &autoscalingv2.ContainerResourceMetricStatus{Name: s.Name, Container: s.Container, Current: autoscalingv2.MetricValueStatus{AverageValue: ptr.To(s.CurrentAverageValue), AverageUtilization: s.CurrentAverageUtilization}}
	}
	if s := in.External; s != nil {
		out.External = &autoscalingv2.ExternalMetricStatus{
			Metric:  autoscalingv2.MetricIdentifier{Name: s.MetricName, Selector: s.MetricSelector},
			Current: autoscalingv2.MetricValueStatus{Value: ptr.To(s.CurrentValue), AverageValue: s.CurrentAverageValue},
		}
	}
	return out
}

// behaviorAnnotation is the behavior as upstream writes it to the v1
// annotation: its internal type, which has no JSON tags, so the keys are
// Go field names.
type behaviorAnnotation struct {
	ScaleUp   *rulesAnnotation
	ScaleDown *rulesAnnotation
}

type rulesAnnotation struct {
	StabilizationWindowSeconds *int32
	SelectPolicy               *autoscalingv2.ScalingPolicySelect
	Policies                   []policyAnnotation
	Tolerance                  *resource.Quantity
}

type policyAnnotation struct {
	Type          autoscalingv2.HPAScalingPolicyType
	Value         int32
	PeriodSeconds int32
}

func behaviorToAnnotation(b *autoscalingv2.HorizontalPodAutoscalerBehavior) behaviorAnnotation {
	rules := func(r *autoscalingv2.HPAScalingRules) *rulesAnnotation {
		if r == nil {
			return nil
		}
		out := &rulesAnnotation{StabilizationWindowSeconds: r.StabilizationWindowSeconds, SelectPolicy: r.SelectPolicy, Tolerance: r.Tolerance}
		for _, p := range r.Policies {
			out.Policies = append(out.Policies, policyAnnotation(p))
		}
		return out
	}
	return behaviorAnnotation{ScaleUp: rules(b.ScaleUp), ScaleDown: rules(b.ScaleDown)}
}

func (b behaviorAnnotation) toV2() *autoscalingv2.HorizontalPodAutoscalerBehavior {
	rules := func(r *rulesAnnotation) *autoscalingv2.HPAScalingRules {
		if r == nil {
			return nil
		}
		out := &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: r.StabilizationWindowSeconds, SelectPolicy: r.SelectPolicy, Tolerance: r.Tolerance}
		for _, p := range r.Policies {
			out.Policies = append(out.Policies, autoscalingv2.HPAScalingPolicy(p))
		}
		return out
	}
	return &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: rules(b.ScaleUp), ScaleDown: rules(b.ScaleDown)}
}
