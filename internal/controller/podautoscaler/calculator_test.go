package podautoscaler

import (
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var testNow = time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)

// testPod is a running pod started long ago, ready, requesting cpu.
type testPod struct {
	phase     v1.PodPhase
	ready     v1.ConditionStatus
	started   time.Duration // before now
	readyAt   time.Duration // before now
	deleted   bool
	requestMi int64
}

func (p testPod) build(i int) *v1.Pod {
	if p.phase == "" {
		p.phase = v1.PodRunning
	}
	if p.ready == "" {
		p.ready = v1.ConditionTrue
	}
	if p.started == 0 {
		p.started = time.Hour
	}
	if p.readyAt == 0 {
		p.readyAt = p.started - time.Minute
	}
	if p.requestMi == 0 {
		p.requestMi = 1000
	}
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%d", i)},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{
			Requests: v1.ResourceList{v1.ResourceCPU: *resource.NewMilliQuantity(p.requestMi, resource.DecimalSI)}}}}},
		Status: v1.PodStatus{
			Phase:      p.phase,
			StartTime:  &metav1.Time{Time: testNow.Add(-p.started)},
			Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: p.ready, LastTransitionTime: metav1.NewTime(testNow.Add(-p.readyAt))}},
		},
	}
	if p.deleted {
		pod.DeletionTimestamp = &metav1.Time{Time: testNow}
	}
	return pod
}

func buildPods(specs []testPod) []*v1.Pod {
	out := make([]*v1.Pod, len(specs))
	for i, s := range specs {
		out[i] = s.build(i)
	}
	return out
}

// samples gives pod i the value values[i] (milli), sampled now; a
// negative value means no sample.
func samples(values ...int64) podMetrics {
	m := podMetrics{}
	for i, v := range values {
		if v >= 0 {
			m[fmt.Sprintf("p%d", i)] = podMetric{Value: v, Timestamp: testNow, Window: time.Minute}
		}
	}
	return m
}

var defaultTol = tolerances{defaultTolerance, defaultTolerance}

func TestResourceUtilizationReplicas(t *testing.T) {
	ready := testPod{}
	tests := []struct {
		name      string
		current   int32
		target    int32
		pods      []testPod
		metrics   podMetrics
		tol       tolerances
		want      int32
		wantUtil  int32
		wantError string
	}{
		{"scale up", 3, 30, []testPod{ready, ready, ready}, samples(300, 500, 700), defaultTol, 5, 50, ""},
		{"scale down", 5, 50, []testPod{ready, ready, ready, ready, ready}, samples(100, 300, 500, 250, 250), defaultTol, 3, 28, ""},
		{"within tolerance", 3, 100, []testPod{ready, ready, ready}, samples(1050, 1050, 1050), defaultTol, 3, 105, ""},
		{"own tolerance", 3, 100, []testPod{ready, ready, ready}, samples(1050, 1050, 1050), tolerances{0.1, 0.01}, 4, 105, ""},
		// A pending pod counts as using nothing on a scale up, which then
		// needs fewer pods (9 without it).
		{"unready on scale up", 3, 30, []testPod{ready, ready, {phase: v1.PodPending}}, samples(900, 900, -1), defaultTol, 6, 90, ""},
		// ... and where counting it at zero reverses the direction, the
		// count stays.
		{"unready reverses", 3, 30, []testPod{ready, ready, {phase: v1.PodPending}}, samples(300, 500, -1), defaultTol, 3, 40, ""},
		// A young pod not yet ready is ignored for cpu; an old one that
		// flapped stays counted.
		{"cpu initializing", 3, 30, []testPod{ready, ready, {started: time.Minute, ready: v1.ConditionFalse, readyAt: 30 * time.Second}}, samples(900, 900, 5000), defaultTol, 6, 90, ""},
		// A missing sample on a scale down counts as the target (at least
		// 100%), so the scale down is smaller.
		{"missing on scale down", 4, 50, []testPod{ready, ready, ready, ready}, samples(100, 100, 100, -1), defaultTol, 3, 10, ""},
		// Counting the missing pod would reverse the direction: keep.
		{"missing reverses", 2, 50, []testPod{ready, ready}, samples(400, -1), defaultTol, 2, 40, ""},
		{"deleted pods ignored", 2, 50, []testPod{ready, {deleted: true}}, samples(1000, 5000), defaultTol, 2, 100, ""},
		{"no samples", 1, 50, []testPod{{phase: v1.PodPending}}, samples(-1), defaultTol, 0, 0, "did not receive metrics for targeted pods (pods might be unready)"},
		{"no pods", 1, 50, nil, samples(), defaultTol, 0, 0, "no pods returned by selector while calculating replica count"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := resourceUtilizationReplicas(tc.current, tc.target, v1.ResourceCPU, "", buildPods(tc.pods), tc.metrics, tc.tol, testNow)
			if tc.wantError != "" {
				if err == nil || err.Error() != tc.wantError {
					t.Fatalf("err = %v, want %q", err, tc.wantError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.replicas != tc.want || res.utilization != tc.wantUtil {
				t.Errorf("replicas %d utilization %d, want %d and %d", res.replicas, res.utilization, tc.want, tc.wantUtil)
			}
		})
	}
}

func TestPodRequestsMissing(t *testing.T) {
	pod := testPod{}.build(0)
	pod.Spec.Containers = append(pod.Spec.Containers, v1.Container{Name: "sidecar"})
	if _, err := podRequests([]*v1.Pod{pod}, "", v1.ResourceCPU); err == nil || err.Error() != "missing request for cpu in container sidecar of Pod p0" {
		t.Errorf("err = %v", err)
	}
	if r, err := podRequests([]*v1.Pod{pod}, "c", v1.ResourceCPU); err != nil || r["p0"] != 1000 {
		t.Errorf("container c: %v %v", r, err)
	}
	if _, err := podRequests([]*v1.Pod{pod}, "x", v1.ResourceCPU); err == nil || err.Error() != "container x not found in Pod p0" {
		t.Errorf("err = %v", err)
	}
}

func TestAverageValueReplicas(t *testing.T) {
	ready := testPod{}
	tests := []struct {
		name      string
		current   int32
		target    int64
		pods      []testPod
		metrics   podMetrics
		want      int32
		wantUsage int64
	}{
		{"scale up", 3, 10000, []testPod{ready, ready, ready}, samples(20000, 10000, 30000), 6, 20000},
		{"scale down", 4, 10000, []testPod{ready, ready, ready, ready}, samples(5000, 5000, 5000, 5000), 2, 5000},
		{"tolerated", 2, 10000, []testPod{ready, ready}, samples(10500, 10500), 2, 10500},
		// A pods metric ignores cpu's readiness rules: a young unready
		// pod counts.
		{"young pod counts", 2, 10000, []testPod{ready, {started: time.Minute, ready: v1.ConditionFalse, readyAt: 30 * time.Second}}, samples(20000, 20000), 4, 20000},
		{"missing on scale down filled at target", 3, 10000, []testPod{ready, ready, ready}, samples(1000, 1000, -1), 2, 1000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, usage, err := averageValueReplicas(tc.current, tc.target, "", buildPods(tc.pods), tc.metrics, defaultTol, testNow)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want || usage != tc.wantUsage {
				t.Errorf("replicas %d usage %d, want %d and %d", got, usage, tc.want, tc.wantUsage)
			}
		})
	}
}

func TestObjectAndExternalReplicas(t *testing.T) {
	ready := buildPods([]testPod{{}, {}, {phase: v1.PodPending}})
	tests := []struct {
		name    string
		current int32
		ratio   float64
		want    int32
	}{
		{"scale by ready pods", 3, 2.0, 4},
		{"tolerated", 3, 1.05, 3},
		{"from zero", 0, 2.5, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ratioReplicas(tc.current, tc.ratio, ready, defaultTol)
			if err != nil || got != tc.want {
				t.Errorf("ratioReplicas = %d, %v; want %d", got, err, tc.want)
			}
		})
	}
	perPod := []struct {
		name          string
		status        int32
		total, target int64
		want          int32
		wantAverage   int64
	}{
		{"up", 2, 50000, 10000, 5, 25000},
		{"tolerated", 4, 41000, 10000, 4, 10250},
		{"down", 5, 8000, 4000, 2, 1600},
	}
	for _, tc := range perPod {
		t.Run("per pod "+tc.name, func(t *testing.T) {
			got, avg := perPodReplicas(tc.status, tc.total, tc.target, defaultTol)
			if got != tc.want || avg != tc.wantAverage {
				t.Errorf("perPodReplicas = %d, %d; want %d, %d", got, avg, tc.want, tc.wantAverage)
			}
		})
	}
}

func TestCombine(t *testing.T) {
	errFail := fmt.Errorf("boom")
	tests := []struct {
		name    string
		results []metricResult
		spec    int32
		want    int32
		metric  string
		wantErr string
	}{
		{"max wins", []metricResult{{replicas: 3, name: "a"}, {replicas: 7, name: "b"}, {replicas: 5, name: "c"}}, 4, 7, "b", ""},
		{"failure ignored on scale up", []metricResult{{replicas: 6, name: "a"}, {err: errFail, reason: "FailedGetPodsMetric"}}, 4, 6, "a", "invalid metrics (1 invalid out of 2), first error is: boom"},
		{"failure blocks scale down", []metricResult{{replicas: 2, name: "a"}, {err: errFail, reason: "FailedGetPodsMetric"}}, 4, -1, "", "invalid metrics (1 invalid out of 2), first error is: boom"},
		{"all failed", []metricResult{{err: errFail}}, 4, -1, "", "invalid metrics (1 invalid out of 1), first error is: boom"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := combine(tc.results, tc.spec)
			errText := ""
			if got.err != nil {
				errText = got.err.Error()
			}
			if got.replicas != tc.want || (tc.want != -1 && got.metric != tc.metric) || errText != tc.wantErr {
				t.Errorf("combine = %d %q %q; want %d %q %q", got.replicas, got.metric, errText, tc.want, tc.metric, tc.wantErr)
			}
		})
	}
}
