package podautoscaler

import (
	"context"
	"errors"
	"fmt"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// metricResult is one metric's proposal, or why there is none: reason is
// the event and ScalingActive reason upstream gives the failure.
type metricResult struct {
	replicas int32
	name     string // "cpu resource utilization (percentage of request)"
	status   autoscalingv2.MetricStatus
	reason   string
	// detail is the failure as events and the ScalingActive condition
	// report it; err adds which metric failed.
	detail string
	err    error
}

// computer proposes replica counts for an HPA's metrics, from the pods
// its target selects, at now.
type computer struct {
	metrics  metricsSource
	pods     []*v1.Pod
	selector labels.Selector
	tol      tolerances
	now      time.Time
}

func failed(reason string, err error) metricResult { return metricResult{reason: reason, err: err} }

// compute is upstream's computeReplicasForMetric.
func (c computer) compute(ctx context.Context, hpa *autoscalingv2.HorizontalPodAutoscaler, spec autoscalingv2.MetricSpec, specReplicas, statusReplicas int32) metricResult {
	switch spec.Type {
	case autoscalingv2.ObjectMetricSourceType:
		r := c.object(ctx, hpa.Namespace, spec.Object, specReplicas, statusReplicas)
		return wrap(r, "failed to get object metric value: %w")
	case autoscalingv2.PodsMetricSourceType:
		r := c.podsMetric(ctx, hpa.Namespace, spec.Pods, specReplicas)
		return wrap(r, "failed to get pods metric value: %w")
	case autoscalingv2.ResourceMetricSourceType:
		r := c.resource(ctx, hpa.Namespace, spec.Resource.Name, "", spec.Resource.Target, specReplicas)
		if r.err != nil {
			r.reason = "FailedGetResourceMetric"
		} else {
			r.status = autoscalingv2.MetricStatus{Type: spec.Type, Resource: &autoscalingv2.ResourceMetricStatus{Name: spec.Resource.Name, Current: *r.status.Resource.Current.DeepCopy()}}
		}
		return wrap(r, "failed to get "+string(spec.Resource.Name)+" resource metric value: %w")
	case autoscalingv2.ContainerResourceMetricSourceType:
		cr := spec.ContainerResource
		r := c.resource(ctx, hpa.Namespace, cr.Name, cr.Container, cr.Target, specReplicas)
		if r.err != nil {
			r.reason = "FailedGetContainerResourceMetric"
		} else {
			r.status = autoscalingv2.MetricStatus{Type: spec.Type, ContainerResource: &autoscalingv2.ContainerResourceMetricStatus{Name: cr.Name, Container: cr.Container, Current: r.status.Resource.Current}}
		}
		return wrap(r, "failed to get "+cr.Container+" container metric value: %w")
	case autoscalingv2.ExternalMetricSourceType:
		r := c.external(ctx, hpa.Namespace, spec.External, specReplicas, statusReplicas)
		return wrap(r, "failed to get "+spec.External.Metric.Name+" external metric value: %w")
	}
	err := fmt.Errorf("unknown metric source type %q", string(spec.Type))
	return metricResult{reason: "InvalidMetricSourceType", detail: err.Error(), err: err}
}

func wrap(r metricResult, format string) metricResult {
	if r.err != nil {
		r.detail = r.err.Error()
		r.err = fmt.Errorf(format, r.err)
	}
	return r
}

// resource proposes from metrics.k8s.io usage: a raw average value, or a
// utilization of the pods' requests. The status comes back in a Resource
// status for the caller to place.
func (c computer) resource(ctx context.Context, namespace string, name v1.ResourceName, container string, target autoscalingv2.MetricTarget, current int32) metricResult {
	if target.AverageValue == nil && target.AverageUtilization == nil {
		return metricResult{err: errors.New("invalid resource metric source: neither an average utilization target nor an average value (usage) target was set")}
	}
	samples, _, err := c.metrics.resourceMetric(ctx, name, namespace, c.selector, container)
	if err != nil {
		what := "utilization"
		if target.AverageValue != nil {
			what = "usage"
		}
		return metricResult{err: fmt.Errorf("failed to get %s %s: %w", name, what, fmt.Errorf("unable to get metrics for resource %s: %w", name, err))}
	}
	if target.AverageValue != nil {
		replicas, usage, err := averageValueReplicas(current, target.AverageValue.MilliValue(), name, c.pods, samples, c.tol, c.now)
		if err != nil {
			return metricResult{err: fmt.Errorf("failed to get %s usage: %w", name, err)}
		}
		q := quantity(name, usage)
		return metricResult{replicas: replicas, name: string(name) + " resource",
			status: autoscalingv2.MetricStatus{Resource: &autoscalingv2.ResourceMetricStatus{Current: autoscalingv2.MetricValueStatus{AverageValue: &q}}}}
	}
	res, err := resourceUtilizationReplicas(current, *target.AverageUtilization, name, container, c.pods, samples, c.tol, c.now)
	if err != nil {
		return metricResult{err: fmt.Errorf("failed to get %s utilization: %w", name, err)}
	}
	metricName := fmt.Sprintf("%s resource utilization (percentage of request)", name)
	if container != "" {
		metricName = fmt.Sprintf("%s container resource utilization (percentage of request)", name)
	}
	q := quantity(name, res.rawAverage)
	util := res.utilization
	return metricResult{replicas: res.replicas, name: metricName,
		status: autoscalingv2.MetricStatus{Resource: &autoscalingv2.ResourceMetricStatus{Current: autoscalingv2.MetricValueStatus{AverageValue: &q, AverageUtilization: &util}}}}
}

// quantity prints memory in binary units, everything else in decimal.
func quantity(name v1.ResourceName, milli int64) resource.Quantity {
	format := resource.DecimalSI
	if name == v1.ResourceMemory {
		format = resource.BinarySI
	}
	return *resource.NewMilliQuantity(milli, format)
}

func (c computer) podsMetric(ctx context.Context, namespace string, src *autoscalingv2.PodsMetricSource, current int32) metricResult {
	metricSelector, err := metav1.LabelSelectorAsSelector(src.Metric.Selector)
	if err != nil {
		return failed("FailedGetPodsMetric", err)
	}
	samples, _, err := c.metrics.podsMetric(ctx, src.Metric.Name, namespace, c.selector, metricSelector)
	if err != nil {
		return failed("FailedGetPodsMetric", fmt.Errorf("unable to get metric %s: %w", src.Metric.Name, err))
	}
	replicas, usage, err := averageValueReplicas(current, src.Target.AverageValue.MilliValue(), "", c.pods, samples, c.tol, c.now)
	if err != nil {
		return failed("FailedGetPodsMetric", err)
	}
	return metricResult{replicas: replicas, name: "pods metric " + src.Metric.Name, status: autoscalingv2.MetricStatus{
		Type: autoscalingv2.PodsMetricSourceType,
		Pods: &autoscalingv2.PodsMetricStatus{
			Metric:  autoscalingv2.MetricIdentifier{Name: src.Metric.Name, Selector: src.Metric.Selector},
			Current: autoscalingv2.MetricValueStatus{AverageValue: resource.NewMilliQuantity(usage, resource.DecimalSI)},
		},
	}}
}

func (c computer) object(ctx context.Context, namespace string, src *autoscalingv2.ObjectMetricSource, specReplicas, statusReplicas int32) metricResult {
	metricSelector, err := metav1.LabelSelectorAsSelector(src.Metric.Selector)
	if err != nil {
		return failed("FailedGetObjectMetric", err)
	}
	status := autoscalingv2.MetricStatus{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricStatus{
		DescribedObject: src.DescribedObject,
		Metric:          autoscalingv2.MetricIdentifier{Name: src.Metric.Name, Selector: src.Metric.Selector},
	}}
	byValue := src.Target.Type == autoscalingv2.ValueMetricType && src.Target.Value != nil
	byAverage := src.Target.Type == autoscalingv2.AverageValueMetricType && src.Target.AverageValue != nil
	if !byValue && !byAverage {
		return failed("FailedGetObjectMetric", errors.New("invalid object metric source: neither a value target nor an average value target was set"))
	}
	usage, _, err := c.metrics.objectMetric(ctx, src.Metric.Name, namespace, src.DescribedObject, metricSelector)
	if err != nil {
		err = fmt.Errorf("unable to get metric %s on %s %s/%s: %w", src.Metric.Name, src.DescribedObject.Kind, namespace, src.DescribedObject.Name, err)
		if byAverage {
			err = fmt.Errorf("failed to get %s object metric: %w", src.Metric.Name, err)
		}
		return failed("FailedGetObjectMetric", err)
	}
	if byValue {
		replicas, err := ratioReplicas(specReplicas, float64(usage)/float64(src.Target.Value.MilliValue()), c.pods, c.tol)
		if err != nil {
			return failed("FailedGetObjectMetric", err)
		}
		status.Object.Current.Value = resource.NewMilliQuantity(usage, resource.DecimalSI)
		return metricResult{replicas: replicas, name: fmt.Sprintf("%s metric %s", src.DescribedObject.Kind, src.Metric.Name), status: status}
	}
	replicas, average := perPodReplicas(statusReplicas, usage, src.Target.AverageValue.MilliValue(), c.tol)
	status.Object.Current.AverageValue = resource.NewMilliQuantity(average, resource.DecimalSI)
	// Upstream names an object metric with an average target this way.
	return metricResult{replicas: replicas, name: fmt.Sprintf("external metric %s(%+v)", src.Metric.Name, src.Metric.Selector), status: status}
}

func (c computer) external(ctx context.Context, namespace string, src *autoscalingv2.ExternalMetricSource, specReplicas, statusReplicas int32) metricResult {
	if src.Target.AverageValue == nil && src.Target.Value == nil {
		return failed("FailedGetExternalMetric", errors.New("invalid external metric source: neither a value target nor an average value target was set"))
	}
	metricSelector, err := metav1.LabelSelectorAsSelector(src.Metric.Selector)
	if err != nil {
		return failed("FailedGetExternalMetric", err)
	}
	values, _, err := c.metrics.externalMetric(ctx, src.Metric.Name, namespace, metricSelector)
	if err != nil {
		return failed("FailedGetExternalMetric", fmt.Errorf("unable to get external metric %s/%s/%+v: %s", namespace, src.Metric.Name, src.Metric.Selector, err))
	}
	total := sumSaturating(values)
	status := autoscalingv2.MetricStatus{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricStatus{
		Metric: autoscalingv2.MetricIdentifier{Name: src.Metric.Name, Selector: src.Metric.Selector},
	}}
	name := fmt.Sprintf("external metric %s(%+v)", src.Metric.Name, src.Metric.Selector)
	if src.Target.AverageValue != nil {
		replicas, average := perPodReplicas(statusReplicas, total, src.Target.AverageValue.MilliValue(), c.tol)
		status.External.Current.AverageValue = resource.NewMilliQuantity(average, resource.DecimalSI)
		return metricResult{replicas: replicas, name: name, status: status}
	}
	replicas, err := ratioReplicas(specReplicas, float64(total)/float64(src.Target.Value.MilliValue()), c.pods, c.tol)
	if err != nil {
		return failed("FailedGetExternalMetric", err)
	}
	status.External.Current.Value = resource.NewMilliQuantity(total, resource.DecimalSI)
	return metricResult{replicas: replicas, name: name, status: status}
}

// combined is the outcome over all metrics.
type combined struct {
	replicas int32
	metric   string
	statuses []autoscalingv2.MetricStatus
	// invalid is the first failure, set when it makes the whole
	// computation fail, and err says why.
	invalid *metricResult
	err     error
}

// combine is upstream's computeReplicasForMetrics after each metric is
// computed: the largest proposal wins; failures abort when every metric
// failed, or when the working ones would scale down (a failed metric
// might have asked for more).
func combine(results []metricResult, specReplicas int32) combined {
	out := combined{statuses: make([]autoscalingv2.MetricStatus, len(results))}
	var first *metricResult
	invalid := 0
	for i := range results {
		r := &results[i]
		if r.err != nil {
			if first == nil {
				first = r
			}
			invalid++
			continue
		}
		out.statuses[i] = r.status
		if out.replicas == 0 || r.replicas > out.replicas {
			out.replicas, out.metric = r.replicas, r.name
		}
	}
	if first != nil {
		out.err = fmt.Errorf("invalid metrics (%v invalid out of %v), first error is: %w", invalid, len(results), first.err)
	}
	if invalid >= len(results) || (invalid > 0 && out.replicas < specReplicas) {
		out.invalid = first
		out.replicas = -1
	}
	return out
}
