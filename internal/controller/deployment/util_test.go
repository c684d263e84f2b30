package deployment

import (
	"strconv"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func rolling(replicas int32, surge, unavail intstr.IntOrString) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "d-uid", Generation: 1},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "img:1"}}},
			},
			Strategy: appsv1.DeploymentStrategy{
				Type:          appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &surge, MaxUnavailable: &unavail},
			},
			ProgressDeadlineSeconds: ptr.To[int32](600),
			RevisionHistoryLimit:    ptr.To[int32](10),
		},
	}
}

// rs builds a ReplicaSet of spec size, available pods, created age
// seconds after t0, with the replicas annotations of a Deployment of
// desired (max) replicas.
func rs(name string, spec, avail int32, age int, desired, maxR int32) *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, UID: types.UID(name), CreationTimestamp: metav1.NewTime(t0.Add(time.Duration(age) * time.Second)),
			Annotations: map[string]string{
				DesiredReplicasAnnotation: strconv.Itoa(int(desired)),
				MaxReplicasAnnotation:     strconv.Itoa(int(maxR)),
			},
		},
		Spec:   appsv1.ReplicaSetSpec{Replicas: ptr.To(spec)},
		Status: appsv1.ReplicaSetStatus{Replicas: spec, AvailableReplicas: avail, ReadyReplicas: avail},
	}
}

func TestComputeHash(t *testing.T) {
	d := rolling(3, intstr.FromInt32(1), intstr.FromInt32(0))
	h1 := ComputeHash(&d.Spec.Template, nil)
	if h1 != ComputeHash(d.Spec.Template.DeepCopy(), nil) {
		t.Fatal("hash of an equal template differs")
	}
	for _, r := range h1 {
		if !('a' <= r && r <= 'z' || '0' <= r && r <= '9') || r == 'a' || r == 'e' || r == 'i' || r == 'o' || r == 'u' {
			t.Fatalf("hash %q has a character outside SafeEncodeString's alphabet", h1)
		}
	}
	if ComputeHash(&d.Spec.Template, ptr.To[int32](1)) == h1 {
		t.Error("collisionCount does not change the hash")
	}
	other := d.Spec.Template.DeepCopy()
	other.Spec.Containers[0].Image = "img:2"
	if ComputeHash(other, nil) == h1 {
		t.Error("a different template hashes the same")
	}
}

func TestResolveFenceposts(t *testing.T) {
	for _, tc := range []struct {
		surge, unavail intstr.IntOrString
		desired        int32
		wantS, wantU   int32
	}{
		{intstr.FromString("25%"), intstr.FromString("25%"), 10, 3, 2}, // surge rounds up, unavailable down
		{intstr.FromInt32(2), intstr.FromInt32(1), 10, 2, 1},
		{intstr.FromString("0%"), intstr.FromString("10%"), 5, 0, 1},  // both resolve to zero: unavailable 1
		{intstr.FromString("1%"), intstr.FromString("0%"), 100, 1, 0}, // 1% of 100 rounds up to 1
		{intstr.FromString("30%"), intstr.FromInt32(0), 1, 1, 0},
	} {
		s, u, err := ResolveFenceposts(&tc.surge, &tc.unavail, tc.desired)
		if err != nil || s != tc.wantS || u != tc.wantU {
			t.Errorf("ResolveFenceposts(%s, %s, %d) = %d, %d, %v; want %d, %d", tc.surge.String(), tc.unavail.String(), tc.desired, s, u, err, tc.wantS, tc.wantU)
		}
	}
	d := rolling(2, intstr.FromInt32(0), intstr.FromInt32(5))
	if got := MaxUnavailable(d); got != 2 {
		t.Errorf("MaxUnavailable beyond replicas = %d, want 2", got)
	}
}

func TestNewRSNewReplicas(t *testing.T) {
	for _, tc := range []struct {
		name   string
		d      *appsv1.Deployment
		newRS  *appsv1.ReplicaSet
		oldRSs []*appsv1.ReplicaSet
		want   int32
	}{
		{"first step up to surge", rolling(10, intstr.FromInt32(2), intstr.FromInt32(1)),
			rs("new", 0, 0, 10, 10, 12), []*appsv1.ReplicaSet{rs("old", 10, 10, 0, 10, 12)}, 2},
		{"at the surge limit", rolling(10, intstr.FromInt32(2), intstr.FromInt32(1)),
			rs("new", 2, 2, 10, 10, 12), []*appsv1.ReplicaSet{rs("old", 10, 10, 0, 10, 12)}, 2},
		{"never beyond replicas", rolling(10, intstr.FromInt32(5), intstr.FromInt32(1)),
			rs("new", 8, 8, 10, 10, 15), []*appsv1.ReplicaSet{rs("old", 1, 1, 0, 10, 15)}, 10},
		{"percent surge rounds up", rolling(10, intstr.FromString("25%"), intstr.FromInt32(0)),
			rs("new", 0, 0, 10, 10, 13), []*appsv1.ReplicaSet{rs("old", 10, 10, 0, 10, 13)}, 3},
	} {
		all := append(append([]*appsv1.ReplicaSet(nil), tc.oldRSs...), tc.newRS)
		got, err := NewRSNewReplicas(tc.d, all, tc.newRS)
		if err != nil || got != tc.want {
			t.Errorf("%s: got %d, %v; want %d", tc.name, got, err, tc.want)
		}
	}
	// A ReplicaSet just scaled down still has its pods: they count.
	d := rolling(10, intstr.FromInt32(2), intstr.FromInt32(1))
	old := rs("old", 9, 10, 0, 10, 12)
	old.Status.Replicas = 10
	newRS := rs("new", 2, 2, 10, 10, 12)
	if got, _ := NewRSNewReplicas(d, []*appsv1.ReplicaSet{old, newRS}, newRS); got != 2 {
		t.Errorf("with a scale-down in flight: got %d, want 2", got)
	}
	rec := rolling(4, intstr.FromInt32(1), intstr.FromInt32(1))
	rec.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
	if got, _ := NewRSNewReplicas(rec, nil, rs("new", 0, 0, 0, 4, 4)); got != 4 {
		t.Errorf("Recreate: got %d, want 4", got)
	}
}

func TestRollingScaleDown(t *testing.T) {
	d := rolling(10, intstr.FromInt32(2), intstr.FromInt32(1))
	// New ReplicaSet of 2 not yet available: nothing may go.
	newRS := rs("new", 2, 0, 10, 10, 12)
	old := rs("old", 10, 10, 0, 10, 12)
	all := []*appsv1.ReplicaSet{old, newRS}
	if got := MaxScaledDown(d, all, newRS); got != 1 {
		t.Errorf("MaxScaledDown = %d, want 12-9-2 = 1", got)
	}
	plan := PlanOldScaleDown(d, all, []*appsv1.ReplicaSet{old})
	if len(plan) != 1 || plan[0].Replicas != 9 {
		t.Errorf("PlanOldScaleDown = %+v, want old to 9", plan)
	}
	// New pods available: three old may go (13 available, 9 needed... of 12).
	newRS = rs("new", 2, 2, 10, 10, 12)
	all = []*appsv1.ReplicaSet{old, newRS}
	plan = PlanOldScaleDown(d, all, []*appsv1.ReplicaSet{old})
	if len(plan) != 1 || plan[0].Replicas != 7 {
		t.Errorf("PlanOldScaleDown = %+v, want old to 7", plan)
	}
	// A stale status (available 10 of a spec already 9) counts as 9.
	old = rs("old", 9, 10, 0, 10, 12)
	newRS = rs("new", 3, 0, 10, 10, 12)
	plan = PlanOldScaleDown(d, []*appsv1.ReplicaSet{old, newRS}, []*appsv1.ReplicaSet{old})
	if len(plan) != 0 {
		t.Errorf("PlanOldScaleDown with stale status = %+v, want nothing", plan)
	}
	// Oldest first, and never below zero.
	a, b := rs("a", 1, 1, 0, 10, 12), rs("b", 9, 9, 5, 10, 12)
	newRS = rs("new", 2, 2, 10, 10, 12)
	plan = PlanOldScaleDown(d, []*appsv1.ReplicaSet{b, a, newRS}, []*appsv1.ReplicaSet{b, a})
	if len(plan) != 2 || plan[0].RS.Name != "a" || plan[0].Replicas != 0 || plan[1].RS.Name != "b" || plan[1].Replicas != 7 {
		t.Errorf("PlanOldScaleDown = %+v, want a to 0 then b to 7", plan)
	}
}

func TestPlanUnhealthyCleanup(t *testing.T) {
	a, b, c := rs("a", 3, 1, 0, 10, 12), rs("b", 4, 4, 5, 10, 12), rs("c", 5, 2, 9, 10, 12)
	plan := PlanUnhealthyCleanup([]*appsv1.ReplicaSet{c, b, a}, 3)
	if len(plan) != 2 || plan[0].RS.Name != "a" || plan[0].Replicas != 1 || plan[1].RS.Name != "c" || plan[1].Replicas != 4 {
		t.Errorf("plan = %+v, want a 3→1, c 5→4", plan)
	}
	if plan := PlanUnhealthyCleanup([]*appsv1.ReplicaSet{b}, 5); len(plan) != 0 {
		t.Errorf("fully available: plan = %+v, want none", plan)
	}
}

func TestProportionalSizes(t *testing.T) {
	for _, tc := range []struct {
		name     string
		replicas int32
		surge    int32
		rss      []*appsv1.ReplicaSet
		want     map[string]int32
	}{
		// Upstream's documented example: 10 replicas, surge 3, mid-rollout
		// (8 old, 5 new), scaled to 15: 18 allowed, 5 to add, 3 and 2.
		{"scale up mid-rollout", 15, 3, []*appsv1.ReplicaSet{rs("old", 8, 8, 0, 10, 13), rs("new", 5, 0, 10, 10, 13)},
			map[string]int32{"old": 11, "new": 7}},
		{"scale down mid-rollout", 5, 3, []*appsv1.ReplicaSet{rs("old", 8, 8, 0, 10, 13), rs("new", 5, 0, 10, 10, 13)},
			map[string]int32{"old": 5, "new": 3}},
		{"scale to zero", 0, 3, []*appsv1.ReplicaSet{rs("old", 8, 8, 0, 10, 13), rs("new", 5, 0, 10, 10, 13)},
			map[string]int32{"old": 0, "new": 0}},
		{"equal sizes up: newer first", 11, 2, []*appsv1.ReplicaSet{rs("old", 5, 5, 0, 8, 10), rs("new", 5, 0, 10, 8, 10)},
			map[string]int32{"old": 6, "new": 7}},
	} {
		d := rolling(tc.replicas, intstr.FromInt32(tc.surge), intstr.FromInt32(1))
		got := map[string]int32{}
		for _, s := range ProportionalSizes(d, tc.rss) {
			got[s.RS.Name] = s.Replicas
		}
		for k, v := range tc.want {
			if got[k] != v {
				t.Errorf("%s: sizes %v, want %v", tc.name, got, tc.want)
				break
			}
		}
	}
}

func TestSetNewReplicaSetAnnotations(t *testing.T) {
	d := rolling(3, intstr.FromInt32(1), intstr.FromInt32(0))
	d.Annotations = map[string]string{"team": "a", corev1.LastAppliedConfigAnnotation: "{}", RevisionAnnotation: "7"}
	fresh := &appsv1.ReplicaSet{Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](0)}}
	if !SetNewReplicaSetAnnotations(d, fresh, "1", false, maxRevHistoryLengthInChars) {
		t.Fatal("no change reported for a new ReplicaSet")
	}
	want := map[string]string{"team": "a", RevisionAnnotation: "1", DesiredReplicasAnnotation: "3", MaxReplicasAnnotation: "4"}
	if len(fresh.Annotations) != len(want) {
		t.Errorf("annotations %v, want %v", fresh.Annotations, want)
	}
	for k, v := range want {
		if fresh.Annotations[k] != v {
			t.Errorf("annotation %s = %q, want %q", k, fresh.Annotations[k], v)
		}
	}
	// A rollback to a ReplicaSet of revision 1 makes it revision 4 and
	// remembers 1; a second one appends.
	SetNewReplicaSetAnnotations(d, fresh, "4", true, maxRevHistoryLengthInChars)
	SetNewReplicaSetAnnotations(d, fresh, "6", true, maxRevHistoryLengthInChars)
	if fresh.Annotations[RevisionAnnotation] != "6" || fresh.Annotations[RevisionHistoryAnnotation] != "1,4" {
		t.Errorf("after two rollbacks: revision %q history %q, want 6 and 1,4", fresh.Annotations[RevisionAnnotation], fresh.Annotations[RevisionHistoryAnnotation])
	}
	// A lower revision never lowers it.
	if SetNewReplicaSetAnnotations(d, fresh, "5", true, maxRevHistoryLengthInChars) {
		t.Error("a lower revision changed the ReplicaSet")
	}
	// History is cut from the front to its limit.
	SetNewReplicaSetAnnotations(d, fresh, "10", true, 4)
	if h := fresh.Annotations[RevisionHistoryAnnotation]; h != "4,6" {
		t.Errorf("bounded history %q, want 4,6", h)
	}
}

func TestCleanupCandidates(t *testing.T) {
	d := rolling(3, intstr.FromInt32(1), intstr.FromInt32(0))
	d.Spec.RevisionHistoryLimit = ptr.To[int32](1)
	mk := func(name string, rev int, spec int32) *appsv1.ReplicaSet {
		r := rs(name, spec, spec, rev, 3, 4)
		r.Annotations[RevisionAnnotation] = strconv.Itoa(rev)
		return r
	}
	r1, r2, r3, r4 := mk("r1", 1, 0), mk("r2", 2, 1), mk("r3", 3, 0), mk("r4", 4, 0)
	got := CleanupCandidates(d, []*appsv1.ReplicaSet{r4, r3, r2, r1})
	if len(got) != 2 || got[0].Name != "r1" || got[1].Name != "r3" {
		names := []string{}
		for _, r := range got {
			names = append(names, r.Name)
		}
		t.Errorf("candidates %v, want r1 r3 (r2 still has a replica, r4 is kept)", names)
	}
	d.Spec.RevisionHistoryLimit = nil
	if got := CleanupCandidates(d, []*appsv1.ReplicaSet{r1, r3}); got != nil {
		t.Error("no limit still deletes")
	}
}

func TestIsScalingEventAndFindActiveOrLatest(t *testing.T) {
	d := rolling(5, intstr.FromInt32(1), intstr.FromInt32(0))
	a := rs("a", 3, 3, 0, 3, 4)
	if !IsScalingEvent(d, []*appsv1.ReplicaSet{a}) {
		t.Error("replicas 5 vs recorded 3: not a scaling event")
	}
	a.Annotations[DesiredReplicasAnnotation] = "5"
	if IsScalingEvent(d, []*appsv1.ReplicaSet{a, rs("idle", 0, 0, 1, 1, 1)}) {
		t.Error("an inactive ReplicaSet's old annotation made a scaling event")
	}
	n, o := rs("new", 0, 0, 10, 5, 6), rs("old", 0, 0, 0, 5, 6)
	if got := FindActiveOrLatest(n, []*appsv1.ReplicaSet{o}); got != n {
		t.Errorf("none active: got %v, want the new one", got.Name)
	}
	o.Spec.Replicas = ptr.To[int32](2)
	if got := FindActiveOrLatest(n, []*appsv1.ReplicaSet{o}); got != o {
		t.Errorf("one active: got %v, want old", got.Name)
	}
	n.Spec.Replicas = ptr.To[int32](1)
	if got := FindActiveOrLatest(n, []*appsv1.ReplicaSet{o}); got != nil {
		t.Errorf("two active: got %v, want none", got.Name)
	}
}

func TestStatusAndConditions(t *testing.T) {
	d := rolling(10, intstr.FromInt32(2), intstr.FromInt32(1))
	newRS, old := rs("web-new", 4, 2, 10, 10, 12), rs("web-old", 7, 7, 0, 10, 12)
	st := CalculateStatus([]*appsv1.ReplicaSet{old, newRS}, newRS, d, t0)
	if st.Replicas != 11 || st.UpdatedReplicas != 4 || st.AvailableReplicas != 9 || st.ReadyReplicas != 9 || st.UnavailableReplicas != 2 || st.ObservedGeneration != 1 {
		t.Errorf("status %+v", st)
	}
	if c := GetCondition(st, appsv1.DeploymentAvailable); c == nil || c.Status != corev1.ConditionTrue || c.Reason != MinimumReplicasAvailable {
		t.Errorf("Available = %+v, want True MinimumReplicasAvailable (9 of min 9)", c)
	}
	old.Status.AvailableReplicas = 6
	st = CalculateStatus([]*appsv1.ReplicaSet{old, newRS}, newRS, d, t0)
	if c := GetCondition(st, appsv1.DeploymentAvailable); c == nil || c.Status != corev1.ConditionFalse || c.Reason != MinimumReplicasUnavailable {
		t.Errorf("Available = %+v, want False MinimumReplicasUnavailable", c)
	}

	// Progress moves the Progressing condition's update time; no progress
	// past the deadline times out; completion says so.
	d.Spec.ProgressDeadlineSeconds = ptr.To[int32](60)
	d.Status = CalculateStatus([]*appsv1.ReplicaSet{old, newRS}, newRS, d, t0)
	SetCondition(&d.Status, NewCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, NewReplicaSetReason, "Created new replica set \"web-new\"", t0))
	newRS.Status.AvailableReplicas = 3
	newRS.Status.ReadyReplicas = 3
	later := t0.Add(30 * time.Second)
	st = CalculateStatus([]*appsv1.ReplicaSet{old, newRS}, newRS, d, later)
	RolloutConditions(d, &st, []*appsv1.ReplicaSet{old, newRS}, newRS, later)
	c := GetCondition(st, appsv1.DeploymentProgressing)
	if c.Reason != ReplicaSetUpdatedReason || !c.LastUpdateTime.Time.Equal(later) || !c.LastTransitionTime.Time.Equal(t0) || c.Message != `ReplicaSet "web-new" is progressing.` {
		t.Errorf("progressing: %+v", c)
	}
	d.Status = st
	if after := StuckRequeueAfter(d, &st, later); after != 60*time.Second {
		t.Errorf("requeue after %v, want 60s", after)
	}
	tooLate := later.Add(61 * time.Second)
	st = CalculateStatus([]*appsv1.ReplicaSet{old, newRS}, newRS, d, tooLate)
	RolloutConditions(d, &st, []*appsv1.ReplicaSet{old, newRS}, newRS, tooLate)
	c = GetCondition(st, appsv1.DeploymentProgressing)
	if c.Status != corev1.ConditionFalse || c.Reason != TimedOutReason || c.Message != `ReplicaSet "web-new" has timed out progressing.` {
		t.Errorf("timed out: %+v", c)
	}

	done := rs("web-new", 10, 10, 10, 10, 12)
	gone := rs("web-old", 0, 0, 0, 10, 12)
	st = CalculateStatus([]*appsv1.ReplicaSet{gone, done}, done, d, tooLate)
	RolloutConditions(d, &st, []*appsv1.ReplicaSet{gone, done}, done, tooLate)
	c = GetCondition(st, appsv1.DeploymentProgressing)
	if c.Status != corev1.ConditionTrue || c.Reason != NewRSAvailableReason || c.Message != `ReplicaSet "web-new" has successfully progressed.` {
		t.Errorf("complete: %+v", c)
	}
}

func TestClaimAction(t *testing.T) {
	d := rolling(1, intstr.FromInt32(1), intstr.FromInt32(0))
	sel := labels.SelectorFromSet(labels.Set{"app": "web"})
	owned := func(uid types.UID, lbl string) *appsv1.ReplicaSet {
		r := rs("x", 1, 1, 0, 1, 2)
		r.Labels = map[string]string{"app": lbl}
		if uid != "" {
			r.OwnerReferences = []metav1.OwnerReference{{Kind: "Deployment", Name: "web", UID: uid, Controller: ptr.To(true)}}
		}
		return r
	}
	for _, tc := range []struct {
		name string
		rs   *appsv1.ReplicaSet
		want claim
	}{
		{"ours and matching", owned("d-uid", "web"), claimKeep},
		{"ours, labels changed", owned("d-uid", "other"), claimRelease},
		{"orphan matching", owned("", "web"), claimAdopt},
		{"orphan not matching", owned("", "other"), claimIgnore},
		{"someone else's", owned("x-uid", "web"), claimIgnore},
	} {
		if got := claimAction(d, sel, tc.rs); got != tc.want {
			t.Errorf("%s: got %d, want %d", tc.name, got, tc.want)
		}
	}
	d.DeletionTimestamp = ptr.To(metav1.NewTime(t0))
	if got := claimAction(d, sel, owned("", "web")); got != claimIgnore {
		t.Error("a Deployment being deleted adopts")
	}
}

func TestOldPodsRunning(t *testing.T) {
	newRS, old := rs("new", 0, 0, 10, 1, 1), rs("old", 0, 0, 0, 1, 1)
	old.Status.Replicas = 0
	pod := func(phase corev1.PodPhase) *corev1.Pod { return &corev1.Pod{Status: corev1.PodStatus{Phase: phase}} }
	if oldPodsRunning(newRS, []*appsv1.ReplicaSet{old}, map[string][]*corev1.Pod{"old": {pod(corev1.PodSucceeded)}, "new": {pod(corev1.PodRunning)}}) {
		t.Error("finished old pods and running new ones count as old running")
	}
	if !oldPodsRunning(newRS, []*appsv1.ReplicaSet{old}, map[string][]*corev1.Pod{"old": {pod(corev1.PodPending)}}) {
		t.Error("a pending old pod does not count")
	}
	old.Status.Replicas = 1
	if !oldPodsRunning(newRS, []*appsv1.ReplicaSet{old}, nil) {
		t.Error("old ReplicaSet status with replicas does not count")
	}
}
