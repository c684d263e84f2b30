package podautoscaler

import (
	"context"
	"fmt"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	resourceclient "k8s.io/metrics/pkg/client/clientset/versioned/typed/metrics/v1beta1"
	customclient "k8s.io/metrics/pkg/client/custom_metrics"
	externalclient "k8s.io/metrics/pkg/client/external_metrics"
)

// metricsSource is where the controller reads metrics: values in
// milli-units, with the time they were sampled.
type metricsSource interface {
	resourceMetric(ctx context.Context, resource v1.ResourceName, namespace string, selector labels.Selector, container string) (podMetrics, time.Time, error)
	podsMetric(ctx context.Context, name, namespace string, selector, metricSelector labels.Selector) (podMetrics, time.Time, error)
	objectMetric(ctx context.Context, name, namespace string, ref autoscalingv2.CrossVersionObjectReference, metricSelector labels.Selector) (int64, time.Time, error)
	externalMetric(ctx context.Context, name, namespace string, selector labels.Selector) ([]int64, time.Time, error)
}

// apiMetrics reads metrics.k8s.io, custom.metrics.k8s.io and
// external.metrics.k8s.io, as upstream's REST metrics client.
type apiMetrics struct {
	resource resourceclient.PodMetricsesGetter
	custom   customclient.CustomMetricsClient
	external externalclient.ExternalMetricsClient
}

var _ metricsSource = apiMetrics{}

func (m apiMetrics) resourceMetric(ctx context.Context, resource v1.ResourceName, namespace string, selector labels.Selector, container string) (podMetrics, time.Time, error) {
	list, err := m.resource.PodMetricses(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector.String()})
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("unable to fetch metrics from resource metrics API: %w", err)
	}
	if len(list.Items) == 0 {
		return nil, time.Time{}, fmt.Errorf("no metrics returned from resource metrics API")
	}
	return podResourceMetrics(list.Items, resource, container), list.Items[0].Timestamp.Time, nil
}

// podResourceMetrics sums a pod's containers' usage (or takes one
// container's); a pod missing the resource in any container has no sample.
func podResourceMetrics(items []metricsv1beta1.PodMetrics, resource v1.ResourceName, container string) podMetrics {
	out := make(podMetrics, len(items))
	for _, pm := range items {
		var sum int64
		missing := len(pm.Containers) == 0 && container == ""
		found := false
		for _, c := range pm.Containers {
			if container != "" && c.Name != container {
				continue
			}
			found = true
			v, ok := c.Usage[resource]
			if !ok {
				missing = true
				break
			}
			sum += v.MilliValue()
		}
		if missing || (container != "" && !found) {
			continue
		}
		out[pm.Name] = podMetric{Timestamp: pm.Timestamp.Time, Window: pm.Window.Duration, Value: sum}
	}
	return out
}

func (m apiMetrics) podsMetric(_ context.Context, name, namespace string, selector, metricSelector labels.Selector) (podMetrics, time.Time, error) {
	list, err := m.custom.NamespacedMetrics(namespace).GetForObjects(schema.GroupKind{Kind: "Pod"}, selector, name, metricSelector)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("unable to fetch metrics from custom metrics API: %w", err)
	}
	if len(list.Items) == 0 {
		return nil, time.Time{}, fmt.Errorf("no metrics returned from custom metrics API")
	}
	out := make(podMetrics, len(list.Items))
	for _, v := range list.Items {
		window := defaultMetricWindow
		if v.WindowSeconds != nil {
			window = time.Duration(*v.WindowSeconds) * time.Second
		}
		out[v.DescribedObject.Name] = podMetric{Timestamp: v.Timestamp.Time, Window: window, Value: v.Value.MilliValue()}
	}
	return out, list.Items[0].Timestamp.Time, nil
}

func (m apiMetrics) objectMetric(_ context.Context, name, namespace string, ref autoscalingv2.CrossVersionObjectReference, metricSelector labels.Selector) (int64, time.Time, error) {
	gvk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
	metrics := m.custom.NamespacedMetrics(namespace)
	objName := ref.Name
	// A namespace's metrics are asked of the root scope, by the HPA's own
	// namespace.
	if gvk.Kind == "Namespace" && gvk.Group == "" {
		metrics, objName = m.custom.RootScopedMetrics(), namespace
	}
	v, err := metrics.GetForObject(gvk.GroupKind(), objName, name, metricSelector)
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("unable to fetch metrics from custom metrics API: %w", err)
	}
	return v.Value.MilliValue(), v.Timestamp.Time, nil
}

func (m apiMetrics) externalMetric(_ context.Context, name, namespace string, selector labels.Selector) ([]int64, time.Time, error) {
	list, err := m.external.NamespacedMetrics(namespace).List(name, selector)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("unable to fetch metrics from external metrics API: %w", err)
	}
	if len(list.Items) == 0 {
		return nil, time.Time{}, fmt.Errorf("no metrics returned from external metrics API")
	}
	out := make([]int64, 0, len(list.Items))
	for _, v := range list.Items {
		out = append(out, v.Value.MilliValue())
	}
	return out, list.Items[0].Timestamp.Time, nil
}
