package disruption

import (
	"errors"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilptr "k8s.io/utils/ptr"
)

var now = time.Date(2026, 11, 28, 23, 0, 0, 0, time.UTC)

type podOpt func(*v1.Pod)

func ready(p *v1.Pod) {
	p.Status.Conditions = append(p.Status.Conditions, v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionTrue})
}
func deleting(p *v1.Pod) { p.DeletionTimestamp = &metav1.Time{Time: now} }
func ownedBy(uid string) podOpt {
	return func(p *v1.Pod) {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs-" + uid, UID: types.UID(uid), Controller: utilptr.To(true)}}
	}
}

func pod(name string, opts ...podOpt) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}}
	for _, o := range opts {
		o(p)
	}
	return p
}

func TestDesired(t *testing.T) {
	i, s := intstr.FromInt32, intstr.FromString
	tests := []struct {
		name                    string
		spec                    policyv1.PodDisruptionBudgetSpec
		pods, scale             int32
		wantExpected, wantDesir int32
		wantScale               bool
	}{
		{"minAvailable integer counts pods", policyv1.PodDisruptionBudgetSpec{MinAvailable: utilptr.To(i(2))}, 3, 0, 3, 2, false},
		{"minAvailable above pods", policyv1.PodDisruptionBudgetSpec{MinAvailable: utilptr.To(i(5))}, 3, 0, 3, 5, false},
		{"minAvailable 50% of 3 rounds up", policyv1.PodDisruptionBudgetSpec{MinAvailable: utilptr.To(s("50%"))}, 2, 3, 3, 2, true},
		{"minAvailable 100%", policyv1.PodDisruptionBudgetSpec{MinAvailable: utilptr.To(s("100%"))}, 4, 4, 4, 4, true},
		{"maxUnavailable integer", policyv1.PodDisruptionBudgetSpec{MaxUnavailable: utilptr.To(i(1))}, 3, 3, 3, 2, true},
		{"maxUnavailable 50% of 3 lets 2 go", policyv1.PodDisruptionBudgetSpec{MaxUnavailable: utilptr.To(s("50%"))}, 3, 3, 3, 1, true},
		{"maxUnavailable above scale", policyv1.PodDisruptionBudgetSpec{MaxUnavailable: utilptr.To(i(5))}, 3, 3, 3, 0, true},
		{"maxUnavailable 0", policyv1.PodDisruptionBudgetSpec{MaxUnavailable: utilptr.To(i(0))}, 3, 3, 3, 3, true},
		{"neither", policyv1.PodDisruptionBudgetSpec{}, 3, 0, 0, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := needsScale(tc.spec); got != tc.wantScale {
				t.Errorf("needsScale = %v, want %v", got, tc.wantScale)
			}
			exp, des, err := Desired(tc.spec, tc.pods, tc.scale)
			if err != nil || exp != tc.wantExpected || des != tc.wantDesir {
				t.Errorf("Desired = %d, %d, %v; want %d, %d", exp, des, err, tc.wantExpected, tc.wantDesir)
			}
		})
	}
	if _, _, err := Desired(policyv1.PodDisruptionBudgetSpec{MinAvailable: utilptr.To(s("x%"))}, 1, 1); err == nil {
		t.Error("a malformed percentage is not an error")
	}
}

func TestExpectedScale(t *testing.T) {
	owners := map[types.UID]*Owner{"a": {UID: "dep-a", Scale: 3}, "b": {UID: "b", Scale: 2}}
	find := func(ref *metav1.OwnerReference, _ string) (*Owner, error) {
		if ref.UID == "broken" {
			return nil, errors.New("the server is currently unable to handle the request")
		}
		return owners[ref.UID], nil
	}
	tests := []struct {
		name          string
		pods          []*v1.Pod
		want          int32
		wantUnmanaged []string
		wantErr       string
	}{
		{"one owner counted once", []*v1.Pod{pod("a1", ownedBy("a")), pod("a2", ownedBy("a"))}, 3, nil, ""},
		{"two owners add up", []*v1.Pod{pod("a1", ownedBy("a")), pod("b1", ownedBy("b"))}, 5, nil, ""},
		{"unmanaged pods are named", []*v1.Pod{pod("a1", ownedBy("a")), pod("bare")}, 3, []string{"bare"}, ""},
		{"owner gone", []*v1.Pod{pod("x1", ownedBy("x"))}, 0, nil, `found no controllers for pod "x1"`},
		{"owner unreadable", []*v1.Pod{pod("z1", ownedBy("broken"))}, 0, nil, "the server is currently unable to handle the request"},
		{"no pods", nil, 0, nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, unmanaged, err := ExpectedScale(tc.pods, find)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want || len(unmanaged) != len(tc.wantUnmanaged) {
				t.Fatalf("ExpectedScale = %d, %v, %v; want %d, %v", got, unmanaged, err, tc.want, tc.wantUnmanaged)
			}
		})
	}
}

func TestDisruptedPodsAndHealthy(t *testing.T) {
	at := func(ago time.Duration) metav1.Time { return metav1.NewTime(now.Add(-ago)) }
	pods := []*v1.Pod{
		pod("fresh", ready),           // evicted 10s ago, not yet marked: still disrupted
		pod("overdue", ready),         // evicted 3m ago and never deleted: counts again
		pod("going", ready, deleting), // evicted and being deleted: entry dropped
		pod("healthy", ready),         // never evicted
		pod("unready"),                // not ready
		pod("just-in-time", ready),    // evicted 1m ago: expires in 1m
		pod("terminating-unrecorded", ready, deleting),
	}
	recorded := map[string]metav1.Time{
		"fresh": at(10 * time.Second), "overdue": at(3 * time.Minute), "going": at(5 * time.Second),
		"vanished": at(5 * time.Second), "just-in-time": at(time.Minute),
	}
	kept, recheck, overdue := DisruptedPods(pods, recorded, now)
	if len(kept) != 2 || kept["fresh"] != recorded["fresh"] || kept["just-in-time"] != recorded["just-in-time"] {
		t.Errorf("kept = %v, want fresh and just-in-time", kept)
	}
	if recheck == nil || !recheck.Equal(now.Add(time.Minute)) {
		t.Errorf("recheck = %v, want in one minute (the earliest expiry)", recheck)
	}
	if len(overdue) != 1 || overdue[0].Name != "overdue" {
		t.Errorf("overdue = %v, want [overdue]", overdue)
	}
	if got := CountHealthy(pods, kept, now); got != 2 {
		t.Errorf("healthy = %d, want 2 (healthy, overdue)", got)
	}
	if kept, recheck, _ := DisruptedPods(pods, nil, now); len(kept) != 0 || recheck != nil {
		t.Errorf("no entries: kept %v recheck %v", kept, recheck)
	}
}

func TestStatus(t *testing.T) {
	upToDate := func(allowed int32) *policyv1.PodDisruptionBudget {
		reason, st := policyv1.InsufficientPodsReason, metav1.ConditionFalse
		if allowed > 0 {
			reason, st = policyv1.SufficientPodsReason, metav1.ConditionTrue
		}
		return &policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Generation: 2},
			Status: policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 2, CurrentHealthy: 3, DesiredHealthy: 2, ExpectedPods: 3, DisruptionsAllowed: allowed,
				Conditions: []metav1.Condition{{Type: policyv1.DisruptionAllowedCondition, Status: st, Reason: reason, ObservedGeneration: 2}}},
		}
	}
	tests := []struct {
		name                       string
		pdb                        *policyv1.PodDisruptionBudget
		healthy, desired, expected int32
		wantAllowed                int32
		wantChanged                bool
		wantReason                 string
	}{
		{"unchanged", upToDate(1), 3, 2, 3, 1, false, policyv1.SufficientPodsReason},
		{"a pod became unready", upToDate(1), 2, 2, 3, 0, true, policyv1.InsufficientPodsReason},
		{"first sync", &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Generation: 1}}, 3, 2, 3, 1, true, policyv1.SufficientPodsReason},
		{"no pods expected allows nothing", &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Generation: 1}}, 3, 0, 0, 0, true, policyv1.InsufficientPodsReason},
		{"fewer healthy than desired", upToDate(1), 1, 2, 3, 0, true, policyv1.InsufficientPodsReason},
		{"spec changed", func() *policyv1.PodDisruptionBudget { p := upToDate(1); p.Generation = 3; return p }(), 3, 2, 3, 1, true, policyv1.SufficientPodsReason},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, changed := Status(tc.pdb, tc.healthy, tc.desired, tc.expected, nil)
			if changed != tc.wantChanged || st.DisruptionsAllowed != tc.wantAllowed {
				t.Fatalf("Status = allowed %d changed %v; want %d %v", st.DisruptionsAllowed, changed, tc.wantAllowed, tc.wantChanged)
			}
			if st.ObservedGeneration != tc.pdb.Generation || st.CurrentHealthy != tc.healthy || st.DesiredHealthy != tc.desired || st.ExpectedPods != tc.expected {
				t.Errorf("status %+v", st)
			}
			c := apimeta.FindStatusCondition(st.Conditions, policyv1.DisruptionAllowedCondition)
			if c == nil || c.Reason != tc.wantReason {
				t.Errorf("condition %+v, want reason %s", c, tc.wantReason)
			}
		})
	}
}

func TestFailSafe(t *testing.T) {
	pdb := &policyv1.PodDisruptionBudget{Status: policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, DisruptionsAllowed: 2, CurrentHealthy: 3}}
	st := FailSafe(pdb, errors.New(`found no controllers for pod "x"`))
	c := apimeta.FindStatusCondition(st.Conditions, policyv1.DisruptionAllowedCondition)
	if st.DisruptionsAllowed != 0 || st.CurrentHealthy != 3 || c == nil || c.Status != metav1.ConditionFalse || c.Reason != policyv1.SyncFailedReason || c.Message != `found no controllers for pod "x"` {
		t.Errorf("status %+v", st)
	}
	if pdb.Status.DisruptionsAllowed != 2 {
		t.Error("FailSafe changed its input")
	}
}

func TestStaleDisruptionTarget(t *testing.T) {
	cond := func(reason string, ago time.Duration, status v1.ConditionStatus) podOpt {
		return func(p *v1.Pod) {
			p.Status.Conditions = append(p.Status.Conditions, v1.PodCondition{Type: v1.DisruptionTarget, Status: status, Reason: reason, LastTransitionTime: metav1.NewTime(now.Add(-ago))})
		}
	}
	failed := func(p *v1.Pod) { p.Status.Phase = v1.PodFailed }
	tests := []struct {
		name      string
		pod       *v1.Pod
		stale     bool
		wantAfter time.Duration
	}{
		{"fresh eviction", pod("p", cond("EvictionByEvictionAPI", 30*time.Second, v1.ConditionTrue)), true, 90 * time.Second},
		{"old eviction", pod("p", cond("EvictionByEvictionAPI", 5*time.Minute, v1.ConditionTrue)), true, 0},
		{"being deleted", pod("p", deleting, cond("EvictionByEvictionAPI", 5*time.Minute, v1.ConditionTrue)), false, 0},
		{"kubelet's own", pod("p", cond(v1.PodReasonTerminationByKubelet, 5*time.Minute, v1.ConditionTrue)), false, 0},
		{"already reset", pod("p", cond("", 5*time.Minute, v1.ConditionFalse)), false, 0},
		{"finished pod", pod("p", failed, cond("PreemptionByScheduler", 5*time.Minute, v1.ConditionTrue)), false, 0},
		{"no condition", pod("p", ready), false, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stale, after := StaleDisruptionTarget(tc.pod, now)
			if stale != tc.stale || after != tc.wantAfter {
				t.Errorf("= %v, %v; want %v, %v", stale, after, tc.stale, tc.wantAfter)
			}
		})
	}
}
