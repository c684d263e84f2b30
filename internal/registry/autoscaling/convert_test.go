package autoscaling

import (
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
)

// Everything a v2 HPA holds survives a trip through autoscaling/v1,
// whose fields and annotations carry it all.
func TestV1RoundTrip(t *testing.T) {
	q := resource.MustParse
	hpa := newHPA()
	hpa.Annotations = map[string]string{"team": "web"}
	hpa.Spec.Metrics = []autoscalingv2.MetricSpec{
		{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
			Metric: autoscalingv2.MetricIdentifier{Name: "qps"}, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(q("10"))}}},
		{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricSource{
			DescribedObject: autoscalingv2.CrossVersionObjectReference{APIVersion: "v1", Kind: "Service", Name: "front"},
			Metric:          autoscalingv2.MetricIdentifier{Name: "rps"}, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(q("2"))}}},
		{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{
			Metric: autoscalingv2.MetricIdentifier{Name: "queue", Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"q": "jobs"}}},
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: ptr.To(q("30"))}}},
		cpuUtilization(50),
	}
	hpa.Spec.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](30), Tolerance: ptr.To(q("50m"))}}
	DefaultHPA(hpa)
	hpa.Status = autoscalingv2.HorizontalPodAutoscalerStatus{
		CurrentReplicas: 2, DesiredReplicas: 3, ObservedGeneration: ptr.To[int64](4),
		CurrentMetrics: []autoscalingv2.MetricStatus{
			{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricStatus{Metric: autoscalingv2.MetricIdentifier{Name: "qps"}, Current: autoscalingv2.MetricValueStatus{AverageValue: ptr.To(q("12"))}}},
			{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricStatus{Name: corev1.ResourceCPU, Current: autoscalingv2.MetricValueStatus{AverageValue: ptr.To(q("120m")), AverageUtilization: ptr.To[int32](60)}}},
		},
		Conditions: []autoscalingv2.HorizontalPodAutoscalerCondition{{Type: autoscalingv2.AbleToScale, Status: corev1.ConditionTrue, Reason: "ReadyForNewScale", Message: "recommended size matches current size", LastTransitionTime: metav1.Unix(100, 0)}},
	}
	hpa.SetGroupVersionKind(autoscalingv2.SchemeGroupVersion.WithKind("HorizontalPodAutoscaler"))

	v1 := toV1(hpa)
	if p := v1.Spec.TargetCPUUtilizationPercentage; p == nil || *p != 50 {
		t.Errorf("targetCPUUtilizationPercentage = %v", p)
	}
	if u := v1.Status.CurrentCPUUtilizationPercentage; u == nil || *u != 60 {
		t.Errorf("currentCPUUtilizationPercentage = %v", u)
	}
	for _, k := range []string{metricSpecsAnnotation, metricStatusAnnotation, conditionsAnnotation, behaviorSpecsAnnotation, "team"} {
		if _, ok := v1.Annotations[k]; !ok {
			t.Errorf("v1 lacks annotation %s: %v", k, v1.Annotations)
		}
	}
	if _, ok := hpa.Annotations[metricSpecsAnnotation]; ok {
		t.Error("toV1 changed its input's annotations")
	}
	// Upstream writes the behavior with its internal type's Go names.
	if got := v1.Annotations[behaviorSpecsAnnotation]; got[:12] != `{"ScaleUp":{` {
		t.Errorf("behavior annotation = %s", got)
	}
	back := toV2(v1)
	// The cpu metric v1 has a field for comes back last, as upstream puts it.
	if !equality.Semantic.DeepEqual(back, hpa) {
		t.Errorf("round trip:\n got %+v\nwant %+v", back, hpa)
	}
}

func TestV1ToV2Defaults(t *testing.T) {
	tests := []struct {
		name string
		cpu  *int32
		want int32
	}{
		{"no target", nil, 80},
		{"target", ptr.To[int32](30), 30},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v1 := &autoscalingv1.HorizontalPodAutoscaler{Spec: autoscalingv1.HorizontalPodAutoscalerSpec{MaxReplicas: 3, TargetCPUUtilizationPercentage: tc.cpu}}
			defaultHPAV1(v1)
			v2 := storedV2(v1)
			if len(v2.Spec.Metrics) != 1 || !isCPUUtilization(v2.Spec.Metrics[0]) || *v2.Spec.Metrics[0].Resource.Target.AverageUtilization != tc.want {
				t.Errorf("metrics = %+v", v2.Spec.Metrics)
			}
			if *v2.Spec.MinReplicas != 1 || v2.Spec.Behavior != nil {
				t.Errorf("spec = %+v", v2.Spec)
			}
		})
	}
}

// The scheme the API server's field managers convert with knows both
// directions.
func TestSchemeConverts(t *testing.T) {
	hpa := newHPA()
	DefaultHPA(hpa)
	hpa.SetGroupVersionKind(autoscalingv2.SchemeGroupVersion.WithKind("HorizontalPodAutoscaler"))
	out, err := scheme.Scheme.ConvertToVersion(hpa, autoscalingv1.SchemeGroupVersion)
	if err != nil {
		t.Fatal(err)
	}
	v1 := out.(*autoscalingv1.HorizontalPodAutoscaler)
	if p := v1.Spec.TargetCPUUtilizationPercentage; p == nil || *p != 80 {
		t.Fatalf("to v1: %+v", v1.Spec)
	}
	back, err := scheme.Scheme.ConvertToVersion(v1, autoscalingv2.SchemeGroupVersion)
	if err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(back.(*autoscalingv2.HorizontalPodAutoscaler).Spec, hpa.Spec) {
		t.Errorf("back: %+v", back)
	}
}

// Writes through v1 keep the status in its annotations out of spec
// writes, and the spec in its annotations out of /status writes.
func TestV1AnnotationsFollowTheirFields(t *testing.T) {
	old := &autoscalingv1.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
		metricSpecsAnnotation: "old-spec", conditionsAnnotation: "old-conditions", "team": "web"}}}
	hpa := old.DeepCopy()
	hpa.Annotations[metricSpecsAnnotation], hpa.Annotations[conditionsAnnotation], hpa.Annotations[metricStatusAnnotation] = "new-spec", "new-conditions", "new-status"
	spec := hpa.DeepCopy()
	HorizontalPodAutoscalersV1.PrepareForUpdate(spec, old)
	if a := spec.Annotations; a[metricSpecsAnnotation] != "new-spec" || a[conditionsAnnotation] != "old-conditions" || a[metricStatusAnnotation] != "" || a["team"] != "web" {
		t.Errorf("spec write: %v", a)
	}
	status := hpa.DeepCopy()
	HorizontalPodAutoscalersV1.PrepareForStatusUpdate(status, old)
	if a := status.Annotations; a[metricSpecsAnnotation] != "old-spec" || a[conditionsAnnotation] != "new-conditions" || a[metricStatusAnnotation] != "new-status" {
		t.Errorf("status write: %v", a)
	}
	created := hpa.DeepCopy()
	HorizontalPodAutoscalersV1.PrepareForCreate(created)
	if _, ok := created.Annotations[conditionsAnnotation]; ok || created.Annotations[metricSpecsAnnotation] != "new-spec" {
		t.Errorf("create: %v", created.Annotations)
	}
}
