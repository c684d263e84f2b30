package podautoscaler

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	scalefake "k8s.io/client-go/scale/fake"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

// fakeMetrics answers resource metrics with fixed samples, or err.
type fakeMetrics struct {
	samples podMetrics
	err     error
}

func (f fakeMetrics) resourceMetric(context.Context, v1.ResourceName, string, labels.Selector, string) (podMetrics, time.Time, error) {
	m := podMetrics{}
	for k, v := range f.samples {
		m[k] = v
	}
	return m, testNow, f.err
}

func (f fakeMetrics) podsMetric(context.Context, string, string, labels.Selector, labels.Selector) (podMetrics, time.Time, error) {
	return nil, time.Time{}, errors.New("no pods metrics")
}

func (f fakeMetrics) objectMetric(context.Context, string, string, autoscalingv2.CrossVersionObjectReference, labels.Selector) (int64, time.Time, error) {
	return 0, time.Time{}, errors.New("no object metrics")
}

func (f fakeMetrics) externalMetric(context.Context, string, string, labels.Selector) ([]int64, time.Time, error) {
	return nil, time.Time{}, errors.New("no external metrics")
}

// resettable adds Reset to a static mapper.
type resettable struct{ meta.RESTMapper }

func (resettable) Reset() {}

// TestReconcile runs one sync of an HPA on a Deployment against fake
// clients and checks what a user would see: the scale written, the
// events, and the status.
func TestReconcile(t *testing.T) {
	tests := []struct {
		name       string
		replicas   int32 // the target's
		selector   string
		scaleErr   error
		metrics    fakeMetrics
		wantScale  int32 // 0: no write
		wantEvents []string
		wantStatus v1.ConditionStatus // of wantCond
		wantCond   autoscalingv2.HorizontalPodAutoscalerConditionType
		wantReason string
		wantMsg    string
	}{
		{
			name: "scale up, limited to double or 4", replicas: 2, selector: "app=web", metrics: fakeMetrics{samples: samples(200, 200)},
			wantScale:  4,
			wantEvents: []string{"Normal SuccessfulRescale New size: 4; reason: cpu resource utilization (percentage of request) above target"},
			wantCond:   autoscalingv2.ScalingLimited, wantStatus: v1.ConditionTrue, wantReason: "ScaleUpLimit",
			wantMsg: "the desired replica count is increasing faster than the maximum scale rate",
		},
		{
			name: "within tolerance", replicas: 2, selector: "app=web", metrics: fakeMetrics{samples: samples(52, 52)},
			wantCond: autoscalingv2.ScalingActive, wantStatus: v1.ConditionTrue, wantReason: "ValidMetricFound",
			wantMsg: "the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)",
		},
		{
			name: "metrics unavailable", replicas: 2, selector: "app=web", metrics: fakeMetrics{err: errors.New("unable to fetch metrics from resource metrics API: boom")},
			wantEvents: []string{
				"Warning FailedGetResourceMetric failed to get cpu utilization: unable to get metrics for resource cpu: unable to fetch metrics from resource metrics API: boom",
				"Warning FailedComputeMetricsReplicas invalid metrics (1 invalid out of 1), first error is: failed to get cpu resource metric value: failed to get cpu utilization: unable to get metrics for resource cpu: unable to fetch metrics from resource metrics API: boom",
			},
			wantCond: autoscalingv2.ScalingActive, wantStatus: v1.ConditionFalse, wantReason: "FailedGetResourceMetric",
			wantMsg: "the HPA was unable to compute the replica count: failed to get cpu utilization: unable to get metrics for resource cpu: unable to fetch metrics from resource metrics API: boom",
		},
		{
			name: "no scale", replicas: 2, scaleErr: errors.New(`deployments.apps "web" not found`),
			wantEvents: []string{`Warning FailedGetScale deployments.apps "web" not found`},
			wantCond:   autoscalingv2.AbleToScale, wantStatus: v1.ConditionFalse, wantReason: "FailedGetScale",
			wantMsg: `the HPA controller was unable to get the target's current scale: deployments.apps "web" not found`,
		},
		{
			name: "no selector", replicas: 2, selector: "",
			wantEvents: []string{"Warning SelectorRequired selector is required", "Warning FailedComputeMetricsReplicas selector is required"},
			wantCond:   autoscalingv2.ScalingActive, wantStatus: v1.ConditionFalse, wantReason: "InvalidSelector", wantMsg: "the HPA target's scale is missing a selector",
		},
		{
			name: "scaled to zero by hand", replicas: 0, selector: "app=web",
			wantCond: autoscalingv2.ScalingActive, wantStatus: v1.ConditionFalse, wantReason: "ScalingDisabled",
			wantMsg: "scaling is disabled since the replica count of the target is zero",
		},
		{
			name: "above max", replicas: 9, selector: "app=web", wantScale: 5,
			wantEvents: []string{"Normal SuccessfulRescale New size: 5; reason: Current number of replicas above Spec.MaxReplicas"},
			wantCond:   autoscalingv2.AbleToScale, wantStatus: v1.ConditionTrue, wantReason: "SucceededRescale",
			wantMsg: "the HPA controller was able to update the target scale to 5",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hpa := &autoscalingv2.HorizontalPodAutoscaler{
				ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", Generation: 1},
				Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
					ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
					MinReplicas:    ptr.To[int32](1), MaxReplicas: 5,
					Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
						Name: v1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](50)}}}},
				},
			}
			objs := []runtime.Object{hpa}
			client := fake.NewClientset(objs...)
			factory := informers.NewSharedInformerFactory(client, 0)
			c := newController(client, factory, nil, slog.New(slog.NewTextHandler(io.Discard, nil)), clocktesting.NewFakePassiveClock(testNow))
			for i := range int(min(tc.replicas, 2)) {
				p := testPod{requestMi: 100}.build(i)
				p.Namespace, p.Labels = "ns", map[string]string{"app": "web"}
				_ = factory.Core().V1().Pods().Informer().GetIndexer().Add(p)
			}
			recorder := record.NewFakeRecorder(10)
			c.recorder, c.metrics = recorder, tc.metrics
			mapper := meta.NewDefaultRESTMapper([]schema.GroupVersion{{Group: "apps", Version: "v1"}})
			mapper.Add(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, meta.RESTScopeNamespace)
			c.mapper = resettable{mapper}
			scales := &scalefake.FakeScaleClient{}
			var written int32
			scales.AddReactor("get", "deployments", func(core.Action) (bool, runtime.Object, error) {
				if tc.scaleErr != nil {
					return true, nil, tc.scaleErr
				}
				return true, &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"},
					Spec: autoscalingv1.ScaleSpec{Replicas: tc.replicas}, Status: autoscalingv1.ScaleStatus{Replicas: tc.replicas, Selector: tc.selector}}, nil
			})
			scales.AddReactor("update", "deployments", func(a core.Action) (bool, runtime.Object, error) {
				sc := a.(core.UpdateAction).GetObject().(*autoscalingv1.Scale)
				written = sc.Spec.Replicas
				return true, sc, nil
			})
			c.scales = scales

			_ = c.reconcile(context.Background(), hpa.DeepCopy(), "ns/web")

			if written != tc.wantScale {
				t.Errorf("scale written %d, want %d", written, tc.wantScale)
			}
			close(recorder.Events)
			var evs []string
			for e := range recorder.Events {
				evs = append(evs, e)
			}
			if !slices.Equal(evs, tc.wantEvents) {
				t.Errorf("events:\n got %q\nwant %q", evs, tc.wantEvents)
			}
			got, err := client.AutoscalingV2().HorizontalPodAutoscalers("ns").Get(context.Background(), "web", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, cond := range got.Status.Conditions {
				if cond.Type == tc.wantCond {
					found = true
					if cond.Status != tc.wantStatus || cond.Reason != tc.wantReason || cond.Message != tc.wantMsg {
						t.Errorf("%s = %s %s %q", cond.Type, cond.Status, cond.Reason, cond.Message)
					}
				}
			}
			if !found {
				t.Errorf("no %s condition in %+v", tc.wantCond, got.Status.Conditions)
			}
			if tc.wantScale != 0 && (got.Status.DesiredReplicas != tc.wantScale || got.Status.LastScaleTime == nil || !got.Status.LastScaleTime.Time.Equal(testNow)) {
				t.Errorf("status after a rescale: %+v", got.Status)
			}
		})
	}
}

func TestAmbiguous(t *testing.T) {
	web := labels.SelectorFromSet(labels.Set{"app": "web"})
	all := labels.Everything()
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}}}
	tests := []struct {
		name      string
		selectors map[string]labels.Selector
		want      []string
	}{
		{"alone", map[string]labels.Selector{"ns/a": web}, nil},
		{"another namespace", map[string]labels.Selector{"ns/a": web, "other/b": all}, nil},
		{"disjoint", map[string]labels.Selector{"ns/a": web, "ns/b": labels.SelectorFromSet(labels.Set{"app": "db"})}, nil},
		{"overlap", map[string]labels.Selector{"ns/a": web, "ns/c": all, "ns/b": web}, []string{"ns/a", "ns/b", "ns/c"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ambiguous("ns/a", "ns", tc.selectors, []*v1.Pod{pod}); !slices.Equal(got, tc.want) {
				t.Errorf("ambiguous = %v, want %v", got, tc.want)
			}
		})
	}
}
