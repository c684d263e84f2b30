package podautoscaler

import (
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/utils/ptr"

	registry "github.com/orca-project/orca/internal/registry/autoscaling"
)

func rules(window int32, sel autoscalingv2.ScalingPolicySelect, policies ...autoscalingv2.HPAScalingPolicy) *autoscalingv2.HPAScalingRules {
	return &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To(window), SelectPolicy: &sel, Policies: policies}
}

func pods(n, period int32) autoscalingv2.HPAScalingPolicy {
	return autoscalingv2.HPAScalingPolicy{Type: autoscalingv2.PodsScalingPolicy, Value: n, PeriodSeconds: period}
}

func percent(n, period int32) autoscalingv2.HPAScalingPolicy {
	return autoscalingv2.HPAScalingPolicy{Type: autoscalingv2.PercentScalingPolicy, Value: n, PeriodSeconds: period}
}

// at is a time offset before testNow.
func at(ago time.Duration) time.Time { return testNow.Add(-ago) }

func TestNormalizeWithBehavior(t *testing.T) {
	defaults := &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: registry.DefaultScaleUpRules(), ScaleDown: registry.DefaultScaleDownRules()}
	tests := []struct {
		name       string
		behavior   *autoscalingv2.HorizontalPodAutoscalerBehavior
		history    history
		current    int32
		desired    int32
		min, max   int32
		want       int32
		ableReason string
		limReason  string
	}{
		{"default scale up: max of 4 pods and 100%", defaults, history{}, 3, 20, 1, 50, 7, "ReadyForNewScale", "ScaleUpLimit"},
		{"default scale up of many: 100%", defaults, history{}, 10, 50, 1, 50, 20, "ReadyForNewScale", "ScaleUpLimit"},
		{"max replicas", defaults, history{}, 10, 50, 1, 15, 15, "ReadyForNewScale", "TooManyReplicas"},
		{"within range", defaults, history{}, 3, 5, 1, 10, 5, "ReadyForNewScale", "DesiredWithinRange"},
		// The default scale-down window (5 minutes) holds the highest
		// recent recommendation.
		{"scale down stabilized", defaults, history{recommendations: []recommendation{{8, at(time.Minute)}}}, 8, 2, 1, 10, 8, "ScaleDownStabilized", "DesiredWithinRange"},
		{"old recommendations forgotten", defaults, history{recommendations: []recommendation{{8, at(6 * time.Minute)}}}, 8, 2, 1, 10, 2, "ReadyForNewScale", "DesiredWithinRange"},
		{"min replicas", &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: registry.DefaultScaleUpRules(), ScaleDown: rules(0, autoscalingv2.MaxChangePolicySelect, percent(100, 15))},
			history{}, 8, 1, 3, 10, 3, "ReadyForNewScale", "TooFewReplicas"},
		// A scale-up window holds the lowest recent recommendation.
		{"scale up stabilized", &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: rules(60, autoscalingv2.MaxChangePolicySelect, pods(10, 15)), ScaleDown: registry.DefaultScaleDownRules()},
			history{recommendations: []recommendation{{4, at(30 * time.Second)}}}, 3, 9, 1, 10, 4, "ScaleUpStabilized", "DesiredWithinRange"},
		{"scale up disabled", &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: rules(0, autoscalingv2.DisabledPolicySelect, pods(4, 15)), ScaleDown: registry.DefaultScaleDownRules()},
			history{}, 3, 9, 1, 10, 3, "ReadyForNewScale", "ScaleUpLimit"},
		// Min picks the smaller change: 2 pods rather than 100%.
		{"select min", &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: rules(0, autoscalingv2.MinChangePolicySelect, pods(2, 15), percent(100, 15)), ScaleDown: registry.DefaultScaleDownRules()},
			history{}, 4, 10, 1, 20, 6, "ReadyForNewScale", "ScaleUpLimit"},
		// A policy counts from the replicas at the start of its period: 3
		// pods were added 30 s ago, so 1 more may come within 60 s.
		{"policy period", &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: rules(0, autoscalingv2.MaxChangePolicySelect, pods(4, 60)), ScaleDown: registry.DefaultScaleDownRules()},
			history{scaleUps: []scaleEvent{{change: 3, at: at(30 * time.Second)}}}, 5, 10, 1, 20, 6, "ReadyForNewScale", "ScaleUpLimit"},
		{"scale down rate", &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: registry.DefaultScaleUpRules(), ScaleDown: rules(0, autoscalingv2.MaxChangePolicySelect, pods(1, 60))},
			history{}, 5, 1, 1, 20, 4, "ReadyForNewScale", "ScaleDownLimit"},
		{"scale down disabled", &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: registry.DefaultScaleUpRules(), ScaleDown: rules(0, autoscalingv2.DisabledPolicySelect, pods(1, 60))},
			history{}, 5, 1, 1, 20, 5, "ReadyForNewScale", "ScaleDownLimit"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := tc.history
			l := h.normalize(tc.behavior, tc.current, tc.desired, tc.min, tc.max, testNow)
			if l.replicas != tc.want || l.ableReason != tc.ableReason || l.limitReason != tc.limReason {
				t.Errorf("got %d %s %s, want %d %s %s", l.replicas, l.ableReason, l.limitReason, tc.want, tc.ableReason, tc.limReason)
			}
			if l.limited != (l.limitReason != "DesiredWithinRange") {
				t.Errorf("limited = %v with reason %s", l.limited, l.limitReason)
			}
			if n := len(h.recommendations); n == 0 || h.recommendations[n-1].replicas != tc.desired && !containsRec(h.recommendations, tc.desired) {
				t.Errorf("recommendation %d not recorded: %+v", tc.desired, h.recommendations)
			}
		})
	}
}

func containsRec(rs []recommendation, n int32) bool {
	for _, r := range rs {
		if r.replicas == n && r.at.Equal(testNow) {
			return true
		}
	}
	return false
}

func TestNormalizeLegacy(t *testing.T) {
	tests := []struct {
		name      string
		history   history
		current   int32
		desired   int32
		min, max  int32
		want      int32
		limReason string
	}{
		{"scale up limit doubles", history{}, 5, 30, 1, 50, 10, "ScaleUpLimit"},
		{"scale up limit at least 4", history{}, 1, 30, 1, 50, 4, "ScaleUpLimit"},
		{"max", history{}, 5, 30, 1, 8, 8, "TooManyReplicas"},
		{"min", history{}, 5, 0, 2, 8, 2, "TooFewReplicas"},
		{"stabilized", history{recommendations: []recommendation{{6, at(4 * time.Minute)}}}, 6, 2, 1, 8, 6, "DesiredWithinRange"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := tc.history
			l := h.normalizeLegacy(tc.current, tc.desired, tc.min, tc.max, testNow)
			if l.replicas != tc.want || l.limitReason != tc.limReason {
				t.Errorf("got %d %s, want %d %s", l.replicas, l.limitReason, tc.want, tc.limReason)
			}
		})
	}
}

// Scale events older than the longest policy period are reused, so the
// history stays as long as the policies need.
func TestRecordScale(t *testing.T) {
	b := &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: rules(0, autoscalingv2.MaxChangePolicySelect, pods(4, 60)), ScaleDown: registry.DefaultScaleDownRules()}
	h := history{scaleUps: []scaleEvent{{change: 2, at: at(2 * time.Minute)}, {change: 1, at: at(30 * time.Second)}}}
	h.recordScale(b, 3, 7, testNow)
	if len(h.scaleUps) != 2 || h.scaleUps[0].change != 4 || !h.scaleUps[0].at.Equal(testNow) {
		t.Errorf("scale ups = %+v", h.scaleUps)
	}
	h.recordScale(b, 7, 5, testNow)
	if len(h.scaleDowns) != 1 || h.scaleDowns[0].change != 2 {
		t.Errorf("scale downs = %+v", h.scaleDowns)
	}
	h.recordScale(nil, 5, 9, testNow)
	if len(h.scaleUps) != 2 {
		t.Errorf("an HPA without behavior keeps no events: %+v", h.scaleUps)
	}
}
