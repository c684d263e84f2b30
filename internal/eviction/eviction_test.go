package eviction

import (
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilptr "k8s.io/utils/ptr"
)

var now = time.Date(2026, 11, 28, 23, 0, 0, 0, time.UTC)

func podIn(phase corev1.PodPhase, ready, deleting bool) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "ns", Labels: map[string]string{"app": "web"}}, Status: corev1.PodStatus{Phase: phase}}
	if ready {
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	}
	if deleting {
		p.DeletionTimestamp = &metav1.Time{Time: now}
	}
	return p
}

func TestCanIgnoreBudgets(t *testing.T) {
	tests := []struct {
		name          string
		pod           *corev1.Pod
		ignore, keyRV bool
	}{
		{"running and ready", podIn(corev1.PodRunning, true, false), false, true},
		{"running, not ready", podIn(corev1.PodRunning, false, false), false, true},
		{"pending", podIn(corev1.PodPending, false, false), true, true},
		{"succeeded", podIn(corev1.PodSucceeded, false, false), true, false},
		{"failed", podIn(corev1.PodFailed, false, false), true, false},
		{"terminating", podIn(corev1.PodRunning, true, true), true, false},
		{"unknown phase", podIn(corev1.PodUnknown, false, false), false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := CanIgnoreBudgets(tc.pod); got != tc.ignore {
				t.Errorf("CanIgnoreBudgets = %v, want %v", got, tc.ignore)
			}
			if got := EnforceResourceVersion(tc.pod); got != tc.keyRV {
				t.Errorf("EnforceResourceVersion = %v, want %v", got, tc.keyRV)
			}
		})
	}
}

func budget(name, ns string, sel *metav1.LabelSelector) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: policyv1.PodDisruptionBudgetSpec{Selector: sel}}
}

func TestCovering(t *testing.T) {
	web := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	pdbs := []*policyv1.PodDisruptionBudget{
		budget("web", "ns", web),
		budget("other-ns", "other", web),
		budget("db", "ns", &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}),
		budget("everything", "ns", &metav1.LabelSelector{}),
		budget("nothing", "ns", nil),
		budget("malformed", "ns", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Near"}}}),
	}
	var names []string
	for _, p := range Covering(pdbs, podIn(corev1.PodRunning, true, false)) {
		names = append(names, p.Name)
	}
	if len(names) != 2 || names[0] != "web" || names[1] != "everything" {
		t.Errorf("covering budgets = %v, want [web everything]", names)
	}
}

func TestUnhealthyMayGo(t *testing.T) {
	status := func(cur, desired int32) policyv1.PodDisruptionBudgetStatus {
		return policyv1.PodDisruptionBudgetStatus{CurrentHealthy: cur, DesiredHealthy: desired}
	}
	tests := []struct {
		name   string
		ready  bool
		policy *policyv1.UnhealthyPodEvictionPolicyType
		status policyv1.PodDisruptionBudgetStatus
		want   bool
	}{
		{"ready pod always asks the budget", true, utilptr.To(policyv1.AlwaysAllow), status(3, 2), false},
		{"AlwaysAllow, budget broken", false, utilptr.To(policyv1.AlwaysAllow), status(1, 2), true},
		{"default, budget met", false, nil, status(2, 2), true},
		{"IfHealthyBudget, budget met", false, utilptr.To(policyv1.IfHealthyBudget), status(3, 2), true},
		{"default, budget broken", false, nil, status(1, 2), false},
		{"default, nothing desired", false, nil, status(0, 0), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pdb := budget("web", "ns", nil)
			pdb.Spec.UnhealthyPodEvictionPolicy = tc.policy
			pdb.Status = tc.status
			if got := UnhealthyMayGo(podIn(corev1.PodRunning, tc.ready, false), pdb); got != tc.want {
				t.Errorf("UnhealthyMayGo = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestTakeDisruption(t *testing.T) {
	syncFailed := []metav1.Condition{{Type: policyv1.DisruptionAllowedCondition, Status: metav1.ConditionFalse, Reason: policyv1.SyncFailedReason, Message: "found no controllers for pod \"x\""}}
	tests := []struct {
		name       string
		generation int64
		status     policyv1.PodDisruptionBudgetStatus
		dryRun     bool
		code       int32  // 0: allowed
		cause      string // the DisruptionBudget cause's message
		wantLeft   int32
		recorded   bool
	}{
		{name: "allowed", generation: 1, status: policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, DisruptionsAllowed: 2, CurrentHealthy: 3, DesiredHealthy: 1},
			wantLeft: 1, recorded: true},
		{name: "last one", generation: 1, status: policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, DisruptionsAllowed: 1, CurrentHealthy: 3, DesiredHealthy: 2},
			wantLeft: 0, recorded: true},
		{name: "dry run records nothing", generation: 1, status: policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, DisruptionsAllowed: 1}, dryRun: true,
			wantLeft: 0},
		{name: "status behind spec", generation: 2, status: policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, DisruptionsAllowed: 1},
			code: http.StatusTooManyRequests, cause: "The disruption budget web is still being processed by the server."},
		{name: "none allowed", generation: 1, status: policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, CurrentHealthy: 2, DesiredHealthy: 2},
			code: http.StatusTooManyRequests, cause: "The disruption budget web needs 2 healthy pods and has 2 currently"},
		{name: "none allowed, sync failed", generation: 1, status: policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, Conditions: syncFailed},
			code: http.StatusTooManyRequests, cause: "The disruption budget web does not allow evicting pods currently because it failed sync: found no controllers for pod \"x\""},
		{name: "none allowed, healthy beyond desired", generation: 1, status: policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, CurrentHealthy: 3, DesiredHealthy: 2},
			code: http.StatusTooManyRequests, cause: "The disruption budget web does not allow evicting pods currently"},
		{name: "negative", generation: 1, status: policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, DisruptionsAllowed: -1},
			code: http.StatusForbidden, cause: "The disruption budget web does not allow evicting pods currently: pdb disruptions allowed is negative"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pdb := budget("web", "ns", nil)
			pdb.Generation = tc.generation
			pdb.Status = tc.status
			err := TakeDisruption(pdb, "web-1", now, tc.dryRun)
			if tc.code != 0 {
				se, ok := err.(*apierrors.StatusError)
				if !ok || se.ErrStatus.Code != tc.code {
					t.Fatalf("err = %v, want a %d", err, tc.code)
				}
				if tc.code == http.StatusTooManyRequests && se.ErrStatus.Message != TooManyRequestsMessage {
					t.Errorf("message %q", se.ErrStatus.Message)
				}
				c := se.ErrStatus.Details.Causes
				if len(c) != 1 || c[0].Type != policyv1.DisruptionBudgetCause || c[0].Message != tc.cause {
					t.Errorf("causes = %+v, want the DisruptionBudget cause %q", c, tc.cause)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if pdb.Status.DisruptionsAllowed != tc.wantLeft {
				t.Errorf("disruptionsAllowed = %d, want %d", pdb.Status.DisruptionsAllowed, tc.wantLeft)
			}
			if at, ok := pdb.Status.DisruptedPods["web-1"]; ok != tc.recorded || (ok && !at.Time.Equal(now)) {
				t.Errorf("disruptedPods = %v, want web-1 recorded: %v", pdb.Status.DisruptedPods, tc.recorded)
			}
			c := apimeta.FindStatusCondition(pdb.Status.Conditions, policyv1.DisruptionAllowedCondition)
			if tc.wantLeft == 0 && (c == nil || c.Reason != policyv1.InsufficientPodsReason || c.Status != metav1.ConditionFalse) {
				t.Errorf("condition = %+v, want InsufficientPods once none are left", c)
			}
		})
	}
}

func TestSetCondition(t *testing.T) {
	earlier := metav1.NewTime(now.Add(-time.Minute))
	st := corev1.PodStatus{Conditions: []corev1.PodCondition{
		{Type: corev1.PodReady, Status: corev1.ConditionTrue},
		{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "PreemptionByScheduler", LastTransitionTime: earlier},
	}}
	SetCondition(&st, DisruptionTarget(now))
	c := st.Conditions[1]
	if len(st.Conditions) != 2 || c.Reason != "EvictionByEvictionAPI" || c.Message != "Eviction API: evicting" || !c.LastTransitionTime.Equal(&earlier) {
		t.Errorf("conditions = %+v, want the reason replaced and the transition time kept", st.Conditions)
	}
	st = corev1.PodStatus{}
	SetCondition(&st, DisruptionTarget(now))
	if len(st.Conditions) != 1 || st.Conditions[0].Status != corev1.ConditionTrue || !st.Conditions[0].LastTransitionTime.Time.Equal(now) {
		t.Errorf("conditions = %+v", st.Conditions)
	}
}
