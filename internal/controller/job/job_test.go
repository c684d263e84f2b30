package job

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

func TestIndexSetRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		in          string
		completions int
		want        string
		n           int
	}{
		{"", 5, "", 0},
		{"0", 5, "0", 1},
		{"0,1", 5, "0,1", 2},
		{"0,1,2", 5, "0-2", 3},
		{"1,3-5,7", 10, "1,3-5,7", 5},
		{"3-5,1,7", 10, "1,3-5,7", 5},
		{"0-9", 4, "0-3", 4},
		{"x,2", 4, "2", 1},
	} {
		s := parseIndexes(tc.in, tc.completions)
		if got := s.String(); got != tc.want || len(s) != tc.n {
			t.Errorf("parseIndexes(%q, %d) = %q (%d), want %q (%d)", tc.in, tc.completions, got, len(s), tc.want, tc.n)
		}
	}
}

func TestPendingIndexes(t *testing.T) {
	done := indexSet{0: true, 2: true}
	active := indexSet{1: true}
	got := pendingIndexes(2, 6, done, active)
	if len(got) != 2 || got[0] != 3 || got[1] != 4 {
		t.Fatalf("pendingIndexes = %v, want [3 4]", got)
	}
	if got := pendingIndexes(5, 3, done, active); len(got) != 0 {
		t.Fatalf("pendingIndexes with all taken = %v", got)
	}
}

func TestBackoffDelay(t *testing.T) {
	for failures, want := range map[int]time.Duration{
		0: 0, 1: 10 * time.Second, 2: 20 * time.Second, 3: 40 * time.Second,
		6: 320 * time.Second, 7: 10 * time.Minute, 30: 10 * time.Minute,
	} {
		if got := backoffDelay(failures); got != want {
			t.Errorf("backoffDelay(%d) = %v, want %v", failures, got, want)
		}
	}
}

func finishedPod(phase v1.PodPhase, at time.Time) *v1.Pod {
	return &v1.Pod{Status: v1.PodStatus{Phase: phase, ContainerStatuses: []v1.ContainerStatus{{
		Name: "c", State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{FinishedAt: metav1.NewTime(at), ExitCode: map[bool]int32{true: 0, false: 1}[phase == v1.PodSucceeded]}},
	}}}}
}

func TestRemainingBackoff(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		pods []*v1.Pod
		want time.Duration
	}{
		{"no failures", []*v1.Pod{finishedPod(v1.PodSucceeded, now)}, 0},
		{"one fresh failure", []*v1.Pod{finishedPod(v1.PodFailed, now.Add(-3*time.Second))}, 7 * time.Second},
		{"two failures double", []*v1.Pod{finishedPod(v1.PodFailed, now.Add(-time.Minute)), finishedPod(v1.PodFailed, now.Add(-5*time.Second))}, 15 * time.Second},
		{"elapsed", []*v1.Pod{finishedPod(v1.PodFailed, now.Add(-time.Minute))}, 0},
		{"success resets", []*v1.Pod{finishedPod(v1.PodFailed, now.Add(-time.Minute)), finishedPod(v1.PodSucceeded, now.Add(-30*time.Second)), finishedPod(v1.PodFailed, now.Add(-2*time.Second))}, 8 * time.Second},
	} {
		if got := remainingBackoff(tc.pods, now); got != tc.want {
			t.Errorf("%s: remainingBackoff = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func failedWith(code int32, conds ...v1.PodConditionType) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}, Status: v1.PodStatus{Phase: v1.PodFailed,
		ContainerStatuses: []v1.ContainerStatus{{Name: "main", State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: code}}}}}}
	for _, c := range conds {
		p.Status.Conditions = append(p.Status.Conditions, v1.PodCondition{Type: c, Status: v1.ConditionTrue})
	}
	return p
}

func TestMatchPodFailurePolicy(t *testing.T) {
	policy := &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
		{Action: batchv1.PodFailurePolicyActionIgnore, OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: v1.DisruptionTarget}}},
		{Action: batchv1.PodFailurePolicyActionFailJob, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
			ContainerName: ptr.To("main"), Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{42}}},
		{Action: batchv1.PodFailurePolicyActionCount, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
			Operator: batchv1.PodFailurePolicyOnExitCodesOpNotIn, Values: []int32{1, 2}}},
		{Action: batchv1.PodFailurePolicyActionIgnore, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
			Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{2}}},
	}}
	for _, tc := range []struct {
		name    string
		policy  *batchv1.PodFailurePolicy
		pod     *v1.Pod
		count   bool
		failJob string
	}{
		{"no policy counts", nil, failedWith(42), true, ""},
		{"disruption ignored", policy, failedWith(42, v1.DisruptionTarget), false, ""},
		{"exit 42 fails the job", policy, failedWith(42), true, "Container main for pod ns/p failed with exit code 42 matching FailJob rule at index 1"},
		{"NotIn matches 7", policy, failedWith(7), true, ""},
		{"exit 2 ignored", policy, failedWith(2), false, ""},
		{"no rule matches exit 1", policy, failedWith(1), true, ""},
		{"exit 0 never matches", &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{Action: batchv1.PodFailurePolicyActionIgnore,
			OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpNotIn, Values: []int32{5}}}}}, failedWith(0), true, ""},
	} {
		v := matchPodFailurePolicy(tc.policy, tc.pod)
		if v.count != tc.count || v.message != tc.failJob || v.failJob != (tc.failJob != "") {
			t.Errorf("%s: got %+v, want count=%v failJob=%q", tc.name, v, tc.count, tc.failJob)
		}
	}
}

func TestTakeCensusCountsOnce(t *testing.T) {
	j := &batchv1.Job{Spec: batchv1.JobSpec{}, Status: batchv1.JobStatus{
		UncountedTerminatedPods: &batchv1.UncountedTerminatedPods{Failed: []types.UID{"f1"}}}}
	tracked := []string{batchv1.JobTrackingFinalizer}
	now := metav1.Now()
	pods := []*v1.Pod{
		{ObjectMeta: metav1.ObjectMeta{UID: "s1", Finalizers: tracked}, Status: v1.PodStatus{Phase: v1.PodSucceeded}},
		{ObjectMeta: metav1.ObjectMeta{UID: "f1", Finalizers: tracked}, Status: v1.PodStatus{Phase: v1.PodFailed}},
		{ObjectMeta: metav1.ObjectMeta{UID: "d1", Finalizers: tracked, DeletionTimestamp: &now}, Status: v1.PodStatus{Phase: v1.PodRunning}},
		{ObjectMeta: metav1.ObjectMeta{UID: "old"}, Status: v1.PodStatus{Phase: v1.PodFailed}},
		{ObjectMeta: metav1.ObjectMeta{UID: "a1", Finalizers: tracked}, Status: v1.PodStatus{Phase: v1.PodRunning}},
	}
	c := takeCensus(j, pods)
	if len(c.newSucceeded) != 1 || len(c.newFailed) != 1 || c.newFailed[0] != "d1" {
		t.Errorf("new succeeded %v failed %v, want [s1] [d1]", c.newSucceeded, c.newFailed)
	}
	if len(c.release) != 3 || len(c.active) != 1 || c.terminating != 1 {
		t.Errorf("release %d active %d terminating %d, want 3 1 1", len(c.release), len(c.active), c.terminating)
	}
	// With podReplacementPolicy Failed a terminating pod is not failed yet.
	j.Spec.PodReplacementPolicy = ptr.To(batchv1.Failed)
	if c := takeCensus(j, pods); len(c.newFailed) != 0 || c.terminating != 1 {
		t.Errorf("policy Failed: new failed %v terminating %d", c.newFailed, c.terminating)
	}
}

func TestPodForJobIndexed(t *testing.T) {
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "pi", Namespace: "ns"}, Spec: batchv1.JobSpec{
		Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}},
			Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c"}}}}}}
	p := podForJob(j, 3, nil)
	if p.GenerateName != "pi-3-" || p.Spec.Hostname != "pi-3" || p.Annotations[batchv1.JobCompletionIndexAnnotation] != "3" ||
		p.Labels[batchv1.JobCompletionIndexAnnotation] != "3" || len(p.Spec.Containers[0].Env) != 1 {
		t.Fatalf("indexed pod = %+v", p)
	}
	if p.Finalizers[0] != batchv1.JobTrackingFinalizer {
		t.Fatalf("finalizers = %v", p.Finalizers)
	}
	if j.Spec.Template.Spec.Containers[0].Env != nil {
		t.Fatal("template was modified")
	}
	if p := podForJob(j, noIndex, nil); p.GenerateName != "pi-" || p.Spec.Hostname != "" {
		t.Fatalf("non-indexed pod = %+v", p)
	}
}

func TestMatchSuccessPolicy(t *testing.T) {
	policy := &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{
		{SucceededIndexes: ptr.To("0")},
		{SucceededIndexes: ptr.To("2-5"), SucceededCount: ptr.To[int32](2)},
		{SucceededCount: ptr.To[int32](4)},
	}}
	for _, tc := range []struct {
		done string
		msg  string
	}{
		{"", ""},
		{"1", ""},
		{"0", "Matched rules at index 0"},
		{"3,5", "Matched rules at index 1"},
		{"1,3,6", ""},
		{"1,3,6,7", "Matched rules at index 2"},
	} {
		msg, ok := matchSuccessPolicy(policy, 8, parseIndexes(tc.done, 8))
		if msg != tc.msg || ok != (tc.msg != "") {
			t.Errorf("succeeded %q: %q %v, want %q", tc.done, msg, ok, tc.msg)
		}
	}
	if _, ok := matchSuccessPolicy(nil, 8, parseIndexes("0-7", 8)); ok {
		t.Error("no policy matched")
	}
}

func TestIndexHistoriesAndFailure(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	j := &batchv1.Job{Spec: batchv1.JobSpec{BackoffLimitPerIndex: ptr.To[int32](1), CompletionMode: ptr.To(batchv1.IndexedCompletion),
		PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{Action: batchv1.PodFailurePolicyActionIgnore,
			OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{3}}}}}}}
	pod := func(ix string, failures string, code int32, at time.Time) *v1.Pod {
		p := finishedPod(v1.PodFailed, at)
		p.Status.ContainerStatuses[0].State.Terminated.ExitCode = code
		p.Annotations = map[string]string{batchv1.JobCompletionIndexAnnotation: ix, batchv1.JobIndexFailureCountAnnotation: failures}
		return p
	}
	pods := []*v1.Pod{
		pod("0", "0", 1, now.Add(-time.Minute)),
		pod("0", "1", 1, now.Add(-5*time.Second)), // the last one of index 0
		pod("1", "0", 3, now.Add(-time.Second)),   // ignored by the policy
	}
	h := indexHistories(j, pods)
	if h[0].failures != 2 || h[0].ignored != 0 || h[1].failures != 0 || h[1].ignored != 1 {
		t.Fatalf("histories = %+v", h)
	}
	if got := indexBackoff(h[0], now); got != 15*time.Second {
		t.Errorf("index 0 back-off = %v, want 20s-5s", got)
	}
	if got := indexBackoff(h[1], now); got != 0 {
		t.Errorf("ignored failures back off %v", got)
	}
	if indexFailed(j, pods[0], policyVerdict{count: true}) {
		t.Error("first failure failed the index with backoffLimitPerIndex 1")
	}
	if !indexFailed(j, pods[1], policyVerdict{count: true}) {
		t.Error("second failure did not fail the index")
	}
	if indexFailed(j, pods[1], policyVerdict{}) || !indexFailed(j, pods[0], policyVerdict{count: true, failIndex: true}) {
		t.Error("policy verdicts not honoured")
	}
}
