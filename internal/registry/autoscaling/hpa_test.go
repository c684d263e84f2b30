package autoscaling

import (
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/orca-project/orca/internal/registry/registrytest"
)

type wantErr = registrytest.WantErr

func newHPA() *autoscalingv2.HorizontalPodAutoscaler {
	return &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MaxReplicas:    5,
		},
	}
}

func TestDefaultHPA(t *testing.T) {
	hpa := newHPA()
	hpa.Spec.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{
		ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](10)},
	}
	DefaultHPA(hpa)
	if *hpa.Spec.MinReplicas != 1 {
		t.Errorf("minReplicas = %d", *hpa.Spec.MinReplicas)
	}
	if len(hpa.Spec.Metrics) != 1 || !isCPUUtilization(hpa.Spec.Metrics[0]) || *hpa.Spec.Metrics[0].Resource.Target.AverageUtilization != 80 {
		t.Errorf("metrics = %+v", hpa.Spec.Metrics)
	}
	up, down := hpa.Spec.Behavior.ScaleUp, hpa.Spec.Behavior.ScaleDown
	if !equality.Semantic.DeepEqual(up, DefaultScaleUpRules()) {
		t.Errorf("scaleUp = %+v", up)
	}
	wantDown := DefaultScaleDownRules()
	wantDown.StabilizationWindowSeconds = ptr.To[int32](10)
	if !equality.Semantic.DeepEqual(down, wantDown) {
		t.Errorf("scaleDown = %+v", down)
	}
}

func TestValidateHPA(t *testing.T) {
	q := resource.MustParse
	tests := []struct {
		name   string
		mutate func(*autoscalingv2.HorizontalPodAutoscaler)
		want   []wantErr
	}{
		{"valid", func(*autoscalingv2.HorizontalPodAutoscaler) {}, nil},
		{"no max", func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.MaxReplicas = 0 }, []wantErr{
			{Type: field.ErrorTypeRequired, Field: "spec.maxReplicas", Detail: "must be set and greater than 0"},
			{Type: field.ErrorTypeInvalid, Field: "spec.maxReplicas", Detail: "must be greater than or equal to `minReplicas`"},
		}},
		{"min above max", func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.MinReplicas = ptr.To[int32](7) }, []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.maxReplicas", Detail: "must be greater than or equal to `minReplicas`"},
		}},
		{"zero min without object metric", func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.MinReplicas = ptr.To[int32](0) }, []wantErr{
			{Type: field.ErrorTypeForbidden, Field: "spec.metrics", Detail: "must specify at least one Object or External metric to support scaling to zero replicas"},
		}},
		{"core group target", func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.ScaleTargetRef.APIVersion = "v1" }, []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.scaleTargetRef.apiVersion", Detail: "apiVersion must specify API group"},
		}},
		{"rc in core group", func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.ScaleTargetRef = autoscalingv2.CrossVersionObjectReference{APIVersion: "v1", Kind: "ReplicationController", Name: "rc"}
		}, nil},
		{"target without kind and name", func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.ScaleTargetRef.Kind, h.Spec.ScaleTargetRef.Name = "", "a/b"
		}, []wantErr{
			{Type: field.ErrorTypeRequired, Field: "spec.scaleTargetRef.kind"},
			{Type: field.ErrorTypeInvalid, Field: "spec.scaleTargetRef.name", Detail: "may not contain '/'"},
		}},
		{"utilization and value", func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Metrics = []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
				Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](0), AverageValue: ptr.To(q("100m"))}}}}
		}, []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.metrics[0].resource.target.averageUtilization", Detail: "must be greater than 0"},
			{Type: field.ErrorTypeForbidden, Field: "spec.metrics[0].resource.target.averageValue", Detail: "may not set both a target raw value and a target utilization"},
		}},
		{"two sources", func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Metrics = []autoscalingv2.MetricSpec{{Type: autoscalingv2.PodsMetricSourceType,
				Pods:     &autoscalingv2.PodsMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: "qps"}, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(q("1"))}},
				External: &autoscalingv2.ExternalMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: "queue"}, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: ptr.To(q("1"))}},
			}}
		}, []wantErr{
			{Type: field.ErrorTypeForbidden, Field: "spec.metrics[0].external", Detail: "must populate the given metric source only"},
		}},
		{"missing source and bad type", func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Metrics = []autoscalingv2.MetricSpec{{Type: autoscalingv2.ObjectMetricSourceType}, {Type: "Bogus"}}
		}, []wantErr{
			{Type: field.ErrorTypeRequired, Field: "spec.metrics[0].object", Detail: "must populate information for the given metric source"},
			{Type: field.ErrorTypeNotSupported, Field: "spec.metrics[1].type"},
			{Type: field.ErrorTypeNotSupported, Field: "spec.metrics[1].type"},
		}},
		{"object without target", func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Metrics = []autoscalingv2.MetricSpec{{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricSource{
				DescribedObject: autoscalingv2.CrossVersionObjectReference{Kind: "Service", Name: "s", APIVersion: "v1"},
				Metric:          autoscalingv2.MetricIdentifier{Name: "rps"}, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType}}}}
		}, []wantErr{
			{Type: field.ErrorTypeRequired, Field: "spec.metrics[0].object.target.averageValue", Detail: "must set either a target value or averageValue"},
		}},
		{"bad behavior", func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: &autoscalingv2.HPAScalingRules{
				StabilizationWindowSeconds: ptr.To[int32](3601), SelectPolicy: ptr.To[autoscalingv2.ScalingPolicySelect]("Any"),
				Policies: []autoscalingv2.HPAScalingPolicy{{Type: "Pods", Value: 0, PeriodSeconds: 1801}},
			}, ScaleDown: &autoscalingv2.HPAScalingRules{}}
		}, []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.behavior.scaleUp.stabilizationWindowSeconds", Detail: "must be less than or equal to 3600"},
			{Type: field.ErrorTypeNotSupported, Field: "spec.behavior.scaleUp.selectPolicy"},
			{Type: field.ErrorTypeInvalid, Field: "spec.behavior.scaleUp.policies[0].value", Detail: "must be greater than zero"},
			{Type: field.ErrorTypeInvalid, Field: "spec.behavior.scaleUp.policies[0].periodSeconds", Detail: "must be less than or equal to 1800"},
			{Type: field.ErrorTypeRequired, Field: "spec.behavior.scaleDown.policies", Detail: "must specify at least one Policy"},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hpa := newHPA()
			DefaultHPA(hpa)
			tc.mutate(hpa)
			registrytest.CheckErrs(t, validateHPA(hpa), tc.want)
		})
	}
}

// An update that keeps the target's kind and apiVersion is not judged on
// them again, so objects stored under older rules stay writable.
func TestValidateHPAUpdateKeepsTarget(t *testing.T) {
	old := newHPA()
	old.Spec.ScaleTargetRef.APIVersion = "v1"
	DefaultHPA(old)
	hpa := old.DeepCopy()
	hpa.Spec.MaxReplicas = 9
	registrytest.CheckErrs(t, validateHPAUpdate(hpa, old), nil)
}

func TestHPARow(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	q := resource.MustParse
	tests := []struct {
		name   string
		mutate func(*autoscalingv2.HorizontalPodAutoscaler)
		want   string
	}{
		{"unknown", func(*autoscalingv2.HorizontalPodAutoscaler) {}, "cpu: <unknown>/80%"},
		{"current", func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Status.CurrentMetrics = []autoscalingv2.MetricStatus{{Type: autoscalingv2.ResourceMetricSourceType,
				Resource: &autoscalingv2.ResourceMetricStatus{Name: corev1.ResourceCPU, Current: autoscalingv2.MetricValueStatus{AverageUtilization: ptr.To[int32](12)}}}}
		}, "cpu: 12%/80%"},
		{"three metrics", func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Metrics = append(h.Spec.Metrics,
				autoscalingv2.MetricSpec{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{Target: autoscalingv2.MetricTarget{AverageValue: ptr.To(q("10"))}}},
				autoscalingv2.MetricSpec{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{Target: autoscalingv2.MetricTarget{AverageValue: ptr.To(q("2"))}}})
			h.Status.CurrentMetrics = []autoscalingv2.MetricStatus{{}, {Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricStatus{Current: autoscalingv2.MetricValueStatus{AverageValue: ptr.To(q("15"))}}}}
		}, "cpu: <unknown>/80%, 15/10 + 1 more..."},
		{"external value and object average", func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Metrics = []autoscalingv2.MetricSpec{
				{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{Target: autoscalingv2.MetricTarget{Value: ptr.To(q("3"))}}},
				{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricSource{Target: autoscalingv2.MetricTarget{AverageValue: ptr.To(q("500m"))}}},
			}
		}, "<unknown>/3, <unknown>/500m (avg)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hpa := newHPA()
			hpa.CreationTimestamp = metav1.NewTime(now.Add(-90 * time.Second))
			hpa.Status.CurrentReplicas = 2
			DefaultHPA(hpa)
			tc.mutate(hpa)
			row := hpaRow(hpa, now)
			want := []any{"Deployment/web", tc.want, "1", int64(5), int64(2), "90s"}
			if !equality.Semantic.DeepEqual(row, want) {
				t.Errorf("row = %#v, want %#v", row, want)
			}
		})
	}
}
