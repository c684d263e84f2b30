package autoscaling

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry/core"
)

func validateMetrics(metrics []autoscalingv2.MetricSpec, p *field.Path, minReplicas *int32, opts refOptions) field.ErrorList {
	var errs field.ErrorList
	scalesFromZero := false
	for i, m := range metrics {
		errs = append(errs, validateMetricSpec(m, p.Index(i), opts)...)
		if m.Type == autoscalingv2.ObjectMetricSourceType || m.Type == autoscalingv2.ExternalMetricSourceType {
			scalesFromZero = true
		}
	}
	// With no pods left there is nothing to measure but objects and
	// external metrics.
	if minReplicas != nil && *minReplicas == 0 && !scalesFromZero {
		errs = append(errs, field.Forbidden(p, "must specify at least one Object or External metric to support scaling to zero replicas"))
	}
	return errs
}

// validateMetricSpec checks one metric: its type names the one source it
// populates. The sources are checked in upstream's order, the first
// present one only.
func validateMetricSpec(m autoscalingv2.MetricSpec, p *field.Path, opts refOptions) field.ErrorList {
	var errs field.ErrorList
	if m.Type == "" {
		errs = append(errs, field.Required(p.Child("type"), "must specify a metric source type"))
	}
	if !contains(metricTypes, string(m.Type)) {
		errs = append(errs, field.NotSupported(p.Child("type"), m.Type, metricTypes))
	}
	var present []string
	check := func(set bool, name string, validate func() field.ErrorList) {
		if !set {
			return
		}
		present = append(present, name)
		if len(present) == 1 {
			errs = append(errs, validate()...)
		}
	}
	check(m.Object != nil, "object", func() field.ErrorList { return validateObjectSource(m.Object, p.Child("object"), opts) })
	check(m.External != nil, "external", func() field.ErrorList { return validateExternalSource(m.External, p.Child("external")) })
	check(m.Pods != nil, "pods", func() field.ErrorList { return validatePodsSource(m.Pods, p.Child("pods")) })
	check(m.Resource != nil, "resource", func() field.ErrorList { return validateResourceSource(m.Resource, p.Child("resource")) })
	check(m.ContainerResource != nil, "containerResource", func() field.ErrorList {
		return validateContainerResourceSource(m.ContainerResource, p.Child("containerResource"))
	})

	expected := map[autoscalingv2.MetricSourceType]struct {
		name string
		set  bool
	}{
		autoscalingv2.ObjectMetricSourceType:            {"object", m.Object != nil},
		autoscalingv2.PodsMetricSourceType:              {"pods", m.Pods != nil},
		autoscalingv2.ResourceMetricSourceType:          {"resource", m.Resource != nil},
		autoscalingv2.ExternalMetricSourceType:          {"external", m.External != nil},
		autoscalingv2.ContainerResourceMetricSourceType: {"containerResource", m.ContainerResource != nil},
	}
	want, known := expected[m.Type]
	switch {
	case !known:
		errs = append(errs, field.NotSupported(p.Child("type"), m.Type, metricTypes))
	case !want.set:
		errs = append(errs, field.Required(p.Child(want.name), "must populate information for the given metric source"))
	}
	if len(present) != 1 {
		for _, name := range present {
			if name != want.name {
				errs = append(errs, field.Forbidden(p.Child(name), "must populate the given metric source only"))
			}
		}
	}
	return errs
}

func validateObjectSource(src *autoscalingv2.ObjectMetricSource, p *field.Path, opts refOptions) field.ErrorList {
	errs := validateReference(src.DescribedObject, p.Child("describedObject"), opts)
	errs = append(errs, validateMetricIdentifier(src.Metric, p.Child("metric"))...)
	errs = append(errs, validateMetricTarget(src.Target, p.Child("target"))...)
	if src.Target.Value == nil && src.Target.AverageValue == nil {
		errs = append(errs, field.Required(p.Child("target", "averageValue"), "must set either a target value or averageValue"))
	}
	return errs
}

func validateExternalSource(src *autoscalingv2.ExternalMetricSource, p *field.Path) field.ErrorList {
	errs := validateMetricIdentifier(src.Metric, p.Child("metric"))
	errs = append(errs, validateMetricTarget(src.Target, p.Child("target"))...)
	if src.Target.Value == nil && src.Target.AverageValue == nil {
		errs = append(errs, field.Required(p.Child("target", "averageValue"), "must set either a target value for metric or a per-pod target"))
	}
	if src.Target.Value != nil && src.Target.AverageValue != nil {
		errs = append(errs, field.Forbidden(p.Child("target", "value"), "may not set both a target value for metric and a per-pod target"))
	}
	return errs
}

func validatePodsSource(src *autoscalingv2.PodsMetricSource, p *field.Path) field.ErrorList {
	errs := validateMetricIdentifier(src.Metric, p.Child("metric"))
	errs = append(errs, validateMetricTarget(src.Target, p.Child("target"))...)
	if src.Target.AverageValue == nil {
		errs = append(errs, field.Required(p.Child("target", "averageValue"), "must specify a positive target averageValue"))
	}
	return errs
}

func validateResourceSource(src *autoscalingv2.ResourceMetricSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if src.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), "must specify a resource name"))
	}
	return append(errs, validateResourceTarget(src.Target, p.Child("target"))...)
}

func validateContainerResourceSource(src *autoscalingv2.ContainerResourceMetricSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if src.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), "must specify a resource name"))
	} else {
		errs = append(errs, core.ValidateContainerResourceName(src.Name, p.Child("name"))...)
	}
	if src.Container == "" {
		errs = append(errs, field.Required(p.Child("container"), "must specify a container"))
	} else {
		errs = append(errs, core.ValidateDNS1123Label(src.Container, p.Child("container"))...)
	}
	return append(errs, validateResourceTarget(src.Target, p.Child("target"))...)
}

// validateResourceTarget checks a resource metric's target: a utilization
// or an average value, not both.
func validateResourceTarget(t autoscalingv2.MetricTarget, p *field.Path) field.ErrorList {
	errs := validateMetricTarget(t, p)
	if t.AverageUtilization == nil && t.AverageValue == nil {
		errs = append(errs, field.Required(p.Child("averageUtilization"), "must set either a target raw value or a target utilization"))
	}
	if t.AverageUtilization != nil && t.AverageValue != nil {
		errs = append(errs, field.Forbidden(p.Child("averageValue"), "may not set both a target raw value and a target utilization"))
	}
	return errs
}

func validateMetricTarget(t autoscalingv2.MetricTarget, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if t.Type == "" {
		errs = append(errs, field.Required(p.Child("type"), "must specify a metric target type"))
	}
	if t.Type != autoscalingv2.UtilizationMetricType && t.Type != autoscalingv2.ValueMetricType && t.Type != autoscalingv2.AverageValueMetricType {
		errs = append(errs, field.Invalid(p.Child("type"), t.Type, "must be either Utilization, Value, or AverageValue"))
	}
	if t.Value != nil && t.Value.Sign() != 1 {
		errs = append(errs, field.Invalid(p.Child("value"), t.Value.String(), "must be positive"))
	}
	if t.AverageValue != nil && t.AverageValue.Sign() != 1 {
		errs = append(errs, field.Invalid(p.Child("averageValue"), t.AverageValue.String(), "must be positive"))
	}
	if t.AverageUtilization != nil && *t.AverageUtilization < 1 {
		errs = append(errs, field.Invalid(p.Child("averageUtilization"), *t.AverageUtilization, "must be greater than 0"))
	}
	return errs
}

func validateMetricIdentifier(id autoscalingv2.MetricIdentifier, p *field.Path) field.ErrorList {
	if id.Name == "" {
		return field.ErrorList{field.Required(p.Child("name"), "must specify a metric name")}
	}
	return requiredSegment(id.Name, p.Child("name"))
}
