package integration

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

func jobOf(name string, completions, parallelism int32, mutate ...func(*batchv1.Job)) *batchv1.Job {
	j := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: batchv1.JobSpec{
			Completions: ptr.To(completions), Parallelism: ptr.To(parallelism),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				NodeName: "fake-node", RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "work", Image: "busybox"}},
			}},
		},
	}
	for _, m := range mutate {
		m(j)
	}
	return j
}

func createJob(t *testing.T, ns string, j *batchv1.Job) *batchv1.Job {
	t.Helper()
	out, err := client.BatchV1().Jobs(ns).Create(context.Background(), j, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create job: %v", err)
	}
	return out
}

func getJob(t *testing.T, ns, name string) *batchv1.Job {
	t.Helper()
	j, err := client.BatchV1().Jobs(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get job: %v", err)
	}
	return j
}

func jobCondition(j *batchv1.Job, t batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range j.Status.Conditions {
		if j.Status.Conditions[i].Type == t {
			return &j.Status.Conditions[i]
		}
	}
	return nil
}

// jobEvent finds an event about the Job with reason and message.
func jobEvent(ns, name, reason, message string) error {
	evs, err := client.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, e := range evs.Items {
		if e.InvolvedObject.Kind == "Job" && e.InvolvedObject.Name == name && e.Reason == reason && strings.HasPrefix(e.Message, message) {
			return nil
		}
	}
	return fmt.Errorf("no %s event %q about job %s", reason, message, name)
}

func jobPods(t *testing.T, ns, name string) []corev1.Pod {
	t.Helper()
	pods, err := client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: batchv1.JobNameLabel + "=" + name})
	if err != nil {
		t.Fatal(err)
	}
	return pods.Items
}

func isActive(p *corev1.Pod) bool {
	return p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
}

func slowly(phase corev1.PodPhase) func(*corev1.Pod) corev1.PodPhase {
	return func(*corev1.Pod) corev1.PodPhase {
		time.Sleep(150 * time.Millisecond)
		return phase
	}
}

func TestJobParallelismAndCompletions(t *testing.T) {
	ns := newNamespace(t, client, "job-par")
	fakeKubelet(t, ns, slowly(corev1.PodSucceeded))
	createJob(t, ns, jobOf("count", 10, 3))

	var maxActive atomic.Int32
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(30 * time.Millisecond):
			}
			pods, err := client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
			if err != nil {
				continue
			}
			var n int32
			for i := range pods.Items {
				if isActive(&pods.Items[i]) {
					n++
				}
			}
			if n > maxActive.Load() {
				maxActive.Store(n)
			}
		}
	}()
	mustKubectl(t, "", "wait", "-n", ns, "--for=condition=complete", "job/count", "--timeout=90s")
	close(stop)
	<-done
	if m := maxActive.Load(); m > 3 || m == 0 {
		t.Errorf("at most %d pods were active at once, want 1..3", m)
	}
	j := getJob(t, ns, "count")
	if j.Status.Succeeded != 10 || j.Status.Failed != 0 || j.Status.Active != 0 || j.Status.CompletionTime == nil || j.Status.StartTime == nil {
		t.Errorf("status = %+v", j.Status)
	}
	for _, ct := range []batchv1.JobConditionType{batchv1.JobSuccessCriteriaMet, batchv1.JobComplete} {
		c := jobCondition(j, ct)
		if c == nil || c.Status != corev1.ConditionTrue || c.Reason != "CompletionsReached" || c.Message != "Reached expected number of succeeded pods" {
			t.Errorf("condition %s = %+v", ct, c)
		}
	}
	pods := jobPods(t, ns, "count")
	if len(pods) != 10 {
		t.Errorf("%d pods, want exactly 10", len(pods))
	}
	for _, p := range pods {
		if slices.Contains(p.Finalizers, batchv1.JobTrackingFinalizer) {
			t.Errorf("pod %s still has the tracking finalizer", p.Name)
		}
		if p.Labels[batchv1.ControllerUidLabel] != string(j.UID) || p.Labels["controller-uid"] != string(j.UID) || p.Labels["job-name"] != "count" {
			t.Errorf("pod %s labels = %v", p.Name, p.Labels)
		}
	}
	eventually(t, 10*time.Second, func() error { return jobEvent(ns, "count", "Completed", "Job completed") })
	eventually(t, 10*time.Second, func() error { return jobEvent(ns, "count", "SuccessfulCreate", "Created pod: count-") })
}

func TestJobIndexedCompletesEveryIndexOnce(t *testing.T) {
	ns := newNamespace(t, client, "job-idx")
	fakeKubelet(t, ns, slowly(corev1.PodSucceeded))
	createJob(t, ns, jobOf("idx", 5, 2, func(j *batchv1.Job) { j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion) }))
	mustKubectl(t, "", "wait", "-n", ns, "--for=condition=complete", "job/idx", "--timeout=90s")
	j := getJob(t, ns, "idx")
	if j.Status.CompletedIndexes != "0-4" || j.Status.Succeeded != 5 {
		t.Errorf("completedIndexes %q succeeded %d, want 0-4 and 5", j.Status.CompletedIndexes, j.Status.Succeeded)
	}
	seen := map[string]int{}
	for _, p := range jobPods(t, ns, "idx") {
		ix := p.Annotations[batchv1.JobCompletionIndexAnnotation]
		seen[ix]++
		if p.Labels[batchv1.JobCompletionIndexAnnotation] != ix || p.Spec.Hostname != "idx-"+ix || !strings.HasPrefix(p.Name, "idx-"+ix+"-") {
			t.Errorf("pod %s: label %q hostname %q for index %s", p.Name, p.Labels[batchv1.JobCompletionIndexAnnotation], p.Spec.Hostname, ix)
		}
		env := p.Spec.Containers[0].Env
		if len(env) != 1 || env[0].Name != "JOB_COMPLETION_INDEX" || env[0].ValueFrom == nil || env[0].ValueFrom.FieldRef == nil {
			t.Errorf("pod %s env = %+v", p.Name, env)
		}
	}
	for _, ix := range []string{"0", "1", "2", "3", "4"} {
		if seen[ix] != 1 {
			t.Errorf("index %s has %d pods, want 1 (all: %v)", ix, seen[ix], seen)
		}
	}
}

func TestJobBackoffLimitExceeded(t *testing.T) {
	ns := newNamespace(t, client, "job-fail")
	fakeKubelet(t, ns, func(*corev1.Pod) corev1.PodPhase { return corev1.PodFailed })
	createJob(t, ns, jobOf("doomed", 1, 1, func(j *batchv1.Job) { j.Spec.BackoffLimit = ptr.To[int32](1) }))
	mustKubectl(t, "", "wait", "-n", ns, "--for=condition=failed", "job/doomed", "--timeout=60s")
	j := getJob(t, ns, "doomed")
	c := jobCondition(j, batchv1.JobFailed)
	if c == nil || c.Reason != "BackoffLimitExceeded" || c.Message != "Job has reached the specified backoff limit" {
		t.Errorf("Failed condition = %+v", c)
	}
	if ft := jobCondition(j, batchv1.JobFailureTarget); ft == nil || ft.Reason != "BackoffLimitExceeded" {
		t.Errorf("FailureTarget condition = %+v", ft)
	}
	if j.Status.Failed != 2 || j.Status.CompletionTime != nil {
		t.Errorf("failed %d completionTime %v, want 2 and none", j.Status.Failed, j.Status.CompletionTime)
	}
	// The replacement waited for the 10 s back-off.
	pods := jobPods(t, ns, "doomed")
	if len(pods) != 2 {
		t.Fatalf("%d pods, want 2", len(pods))
	}
	slices.SortFunc(pods, func(a, b corev1.Pod) int { return a.CreationTimestamp.Compare(b.CreationTimestamp.Time) })
	if gap := pods[1].CreationTimestamp.Sub(pods[0].CreationTimestamp.Time); gap < 9*time.Second {
		t.Errorf("replacement created %v after the first pod, want the 10s back-off", gap)
	}
	eventually(t, 10*time.Second, func() error {
		return jobEvent(ns, "doomed", "BackoffLimitExceeded", "Job has reached the specified backoff limit")
	})
}

func TestJobSuspendAndResume(t *testing.T) {
	ns := newNamespace(t, client, "job-susp")
	fakeKubelet(t, ns, nil)
	createJob(t, ns, jobOf("pausable", 4, 2))
	waitActive := func(n int32) *batchv1.Job {
		t.Helper()
		var j *batchv1.Job
		eventually(t, 30*time.Second, func() error {
			j = getJob(t, ns, "pausable")
			if j.Status.Active != n || j.Status.Ready == nil || *j.Status.Ready != n {
				return fmt.Errorf("active %d ready %v, want %d", j.Status.Active, j.Status.Ready, n)
			}
			return nil
		})
		return j
	}
	waitActive(2)
	patch := func(suspend bool) {
		_, err := client.BatchV1().Jobs(ns).Patch(context.Background(), "pausable", types.MergePatchType,
			[]byte(fmt.Sprintf(`{"spec":{"suspend":%v}}`, suspend)), metav1.PatchOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	patch(true)
	j := waitActive(0)
	eventually(t, 30*time.Second, func() error {
		j = getJob(t, ns, "pausable")
		if c := jobCondition(j, batchv1.JobSuspended); c == nil || c.Status != corev1.ConditionTrue || c.Reason != "JobSuspended" {
			return fmt.Errorf("Suspended condition = %+v", c)
		}
		for _, p := range jobPods(t, ns, "pausable") {
			if isActive(&p) {
				return fmt.Errorf("pod %s still active", p.Name)
			}
		}
		return nil
	})
	if j.Status.StartTime != nil || j.Status.Failed != 0 {
		t.Errorf("suspended job: startTime %v failed %d, want none and 0", j.Status.StartTime, j.Status.Failed)
	}
	eventually(t, 10*time.Second, func() error { return jobEvent(ns, "pausable", "Suspended", "Job suspended") })

	patch(false)
	waitActive(2)
	j = getJob(t, ns, "pausable")
	if c := jobCondition(j, batchv1.JobSuspended); c == nil || c.Status != corev1.ConditionFalse || c.Reason != "JobResumed" {
		t.Errorf("Suspended condition after resume = %+v", c)
	}
	if j.Status.StartTime == nil {
		t.Error("resumed job has no startTime")
	}
	eventually(t, 10*time.Second, func() error { return jobEvent(ns, "pausable", "Resumed", "Job resumed") })
}

func TestJobKubectlCreate(t *testing.T) {
	ns := newNamespace(t, client, "job-kubectl")
	mustKubectl(t, "", "create", "job", "hello", "-n", ns, "--image=busybox", "--", "echo", "hi")
	j := getJob(t, ns, "hello")
	if j.Spec.Selector == nil || j.Spec.Selector.MatchLabels[batchv1.ControllerUidLabel] != string(j.UID) {
		t.Errorf("selector = %v", j.Spec.Selector)
	}
	eventually(t, 30*time.Second, func() error {
		pods := jobPods(t, ns, "hello")
		if len(pods) != 1 {
			return fmt.Errorf("%d pods, want 1", len(pods))
		}
		if !slices.Contains(pods[0].Finalizers, batchv1.JobTrackingFinalizer) {
			return fmt.Errorf("pod finalizers = %v", pods[0].Finalizers)
		}
		return nil
	})
}

func TestJobTTLAfterFinished(t *testing.T) {
	ns := newNamespace(t, client, "job-ttl")
	fakeKubelet(t, ns, func(*corev1.Pod) corev1.PodPhase { return corev1.PodSucceeded })
	createJob(t, ns, jobOf("shortlived", 1, 1, func(j *batchv1.Job) { j.Spec.TTLSecondsAfterFinished = ptr.To[int32](2) }))
	mustKubectl(t, "", "wait", "-n", ns, "--for=condition=complete", "job/shortlived", "--timeout=60s")
	eventually(t, 30*time.Second, func() error {
		_, err := client.BatchV1().Jobs(ns).Get(context.Background(), "shortlived", metav1.GetOptions{})
		if err == nil {
			return fmt.Errorf("job still exists")
		}
		if !apierrors.IsNotFound(err) {
			return err
		}
		if pods := jobPods(t, ns, "shortlived"); len(pods) != 0 {
			return fmt.Errorf("%d pods left", len(pods))
		}
		return nil
	})
}

func TestJobPodFailurePolicyFailJob(t *testing.T) {
	ns := newNamespace(t, client, "job-pfp")
	fakeKubelet(t, ns, func(*corev1.Pod) corev1.PodPhase { return corev1.PodFailed })
	createJob(t, ns, jobOf("strict", 3, 1, func(j *batchv1.Job) {
		j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
			Action:      batchv1.PodFailurePolicyActionFailJob,
			OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{1}},
		}}}
	}))
	mustKubectl(t, "", "wait", "-n", ns, "--for=condition=failed", "job/strict", "--timeout=30s")
	j := getJob(t, ns, "strict")
	c := jobCondition(j, batchv1.JobFailed)
	if c == nil || c.Reason != "PodFailurePolicy" || !strings.HasPrefix(c.Message, "Container work for pod "+ns+"/strict-") ||
		!strings.HasSuffix(c.Message, "failed with exit code 1 matching FailJob rule at index 0") {
		t.Errorf("Failed condition = %+v", c)
	}
	if n := len(jobPods(t, ns, "strict")); n != 1 {
		t.Errorf("%d pods, want 1: the job fails at once, without retries", n)
	}
}

func TestJobActiveDeadline(t *testing.T) {
	ns := newNamespace(t, client, "job-deadline")
	fakeKubelet(t, ns, nil)
	createJob(t, ns, jobOf("slow", 1, 1, func(j *batchv1.Job) { j.Spec.ActiveDeadlineSeconds = ptr.To[int64](2) }))
	eventually(t, 30*time.Second, func() error {
		j := getJob(t, ns, "slow")
		if c := jobCondition(j, batchv1.JobFailureTarget); c == nil || c.Reason != "DeadlineExceeded" || c.Message != "Job was active longer than specified deadline" {
			return fmt.Errorf("FailureTarget = %+v", c)
		}
		if j.Status.Active != 0 {
			return fmt.Errorf("active = %d", j.Status.Active)
		}
		return nil
	})
	for _, p := range jobPods(t, ns, "slow") {
		if isActive(&p) {
			t.Errorf("pod %s still active after the deadline", p.Name)
		}
		// The Job ends only once its pods are gone; no kubelet runs here
		// to finish their graceful deletion, so do what it would.
		_ = client.CoreV1().Pods(ns).Delete(context.Background(), p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
	}
	mustKubectl(t, "", "wait", "-n", ns, "--for=condition=failed", "job/slow", "--timeout=30s")
	if j := getJob(t, ns, "slow"); j.Status.Failed != 1 || j.Status.Terminating == nil || *j.Status.Terminating != 0 {
		t.Errorf("failed %d terminating %v, want the deleted pod counted as failed and none terminating", j.Status.Failed, j.Status.Terminating)
	}
	eventually(t, 10*time.Second, func() error {
		return jobEvent(ns, "slow", "DeadlineExceeded", "Job was active longer than specified deadline")
	})
}

func TestJobDeletedReleasesPodFinalizers(t *testing.T) {
	ns := newNamespace(t, client, "job-del")
	fakeKubelet(t, ns, nil)
	createJob(t, ns, jobOf("gone", 2, 2))
	eventually(t, 30*time.Second, func() error {
		if j := getJob(t, ns, "gone"); j.Status.Active != 2 {
			return fmt.Errorf("active = %d", j.Status.Active)
		}
		return nil
	})
	mustKubectl(t, "", "delete", "-n", ns, "job/gone", "--wait=false")
	eventually(t, 30*time.Second, func() error {
		for _, p := range jobPods(t, ns, "gone") {
			if slices.Contains(p.Finalizers, batchv1.JobTrackingFinalizer) {
				return fmt.Errorf("pod %s still has the tracking finalizer", p.Name)
			}
			if p.DeletionTimestamp == nil {
				return fmt.Errorf("pod %s not being deleted", p.Name)
			}
		}
		return nil
	})
}

// TestJobAdoptsAndReleasesPods is upstream's "should adopt matching
// orphans and release non-matching pods": a pod stripped of its owner
// reference is adopted again (tracking finalizer included), and a pod
// whose labels stop matching is released (finalizer included).
func TestJobAdoptsAndReleasesPods(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, client, "job-adopt")
	fakeKubelet(t, ns, nil)
	j := createJob(t, ns, jobOf("adopt-release", 4, 2))
	var pod corev1.Pod
	eventually(t, 30*time.Second, func() error {
		pods := jobPods(t, ns, j.Name)
		if len(pods) != 2 {
			return fmt.Errorf("%d pods, want 2", len(pods))
		}
		pod = pods[0]
		return nil
	})
	update := func(change func(*corev1.Pod)) {
		t.Helper()
		eventually(t, 10*time.Second, func() error {
			p, err := client.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			change(p)
			_, err = client.CoreV1().Pods(ns).Update(ctx, p, metav1.UpdateOptions{})
			return err
		})
	}

	update(func(p *corev1.Pod) { p.OwnerReferences = nil })
	eventually(t, 30*time.Second, func() error {
		p, err := client.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		ref := metav1.GetControllerOf(p)
		if ref == nil || ref.Kind != "Job" || ref.Name != j.Name || ref.UID != j.UID {
			return fmt.Errorf("pod not adopted: owners %+v", p.OwnerReferences)
		}
		if !slices.Contains(p.Finalizers, batchv1.JobTrackingFinalizer) {
			return fmt.Errorf("adopted pod has no tracking finalizer: %v", p.Finalizers)
		}
		return nil
	})

	update(func(p *corev1.Pod) { p.Labels = nil })
	eventually(t, 30*time.Second, func() error {
		p, err := client.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if ref := metav1.GetControllerOf(p); ref != nil {
			return fmt.Errorf("pod not released: owners %+v", p.OwnerReferences)
		}
		if slices.Contains(p.Finalizers, batchv1.JobTrackingFinalizer) {
			return fmt.Errorf("released pod kept the tracking finalizer")
		}
		return nil
	})
	// The released pod is no longer the Job's: another takes its place.
	eventually(t, 30*time.Second, func() error {
		if got := getJob(t, ns, j.Name); got.Status.Active != 2 || len(jobPods(t, ns, j.Name)) != 2 {
			return fmt.Errorf("active = %d, want 2 with the released pod replaced", got.Status.Active)
		}
		return nil
	})
}

func TestJobBackoffLimitPerIndex(t *testing.T) {
	ns := newNamespace(t, client, "job-perindex")
	fakeKubelet(t, ns, func(p *corev1.Pod) corev1.PodPhase {
		if p.Annotations[batchv1.JobCompletionIndexAnnotation] == "1" {
			return corev1.PodFailed
		}
		return corev1.PodSucceeded
	})
	createJob(t, ns, jobOf("perindex", 3, 3, func(j *batchv1.Job) {
		j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
		j.Spec.BackoffLimitPerIndex = ptr.To[int32](1)
	}))
	mustKubectl(t, "", "wait", "-n", ns, "--for=condition=failed", "job/perindex", "--timeout=60s")
	j := getJob(t, ns, "perindex")
	if c := jobCondition(j, batchv1.JobFailed); c == nil || c.Reason != "FailedIndexes" || c.Message != "Job has failed indexes" {
		t.Errorf("Failed condition = %+v", c)
	}
	if j.Status.CompletedIndexes != "0,2" || j.Status.FailedIndexes == nil || *j.Status.FailedIndexes != "1" || j.Status.Failed != 2 {
		t.Errorf("completed %q failed indexes %v failed %d", j.Status.CompletedIndexes, j.Status.FailedIndexes, j.Status.Failed)
	}
	counts := map[string]bool{}
	for _, p := range jobPods(t, ns, "perindex") {
		if p.Annotations[batchv1.JobCompletionIndexAnnotation] == "1" {
			counts[p.Annotations[batchv1.JobIndexFailureCountAnnotation]] = true
		}
	}
	if len(counts) != 2 || !counts["0"] || !counts["1"] {
		t.Errorf("index 1 pods carried failure counts %v, want 0 and 1", counts)
	}
}

func TestJobSuccessPolicy(t *testing.T) {
	ns := newNamespace(t, client, "job-succpol")
	fakeKubelet(t, ns, func(p *corev1.Pod) corev1.PodPhase {
		if p.Annotations[batchv1.JobCompletionIndexAnnotation] == "0" {
			return corev1.PodSucceeded
		}
		return corev1.PodRunning
	})
	createJob(t, ns, jobOf("leader", 3, 3, func(j *batchv1.Job) {
		j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
		j.Spec.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededIndexes: ptr.To("0")}}}
	}))
	eventually(t, 30*time.Second, func() error {
		j := getJob(t, ns, "leader")
		if c := jobCondition(j, batchv1.JobSuccessCriteriaMet); c == nil || c.Reason != "SuccessPolicy" || c.Message != "Matched rules at index 0" {
			return fmt.Errorf("SuccessCriteriaMet = %+v", c)
		}
		return nil
	})
	// The followers are stopped; finish their deletion as a kubelet would.
	eventually(t, 30*time.Second, func() error {
		for _, p := range jobPods(t, ns, "leader") {
			if isActive(&p) {
				return fmt.Errorf("pod %s still active", p.Name)
			}
			if p.DeletionTimestamp != nil {
				_ = client.CoreV1().Pods(ns).Delete(context.Background(), p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
			}
		}
		return nil
	})
	mustKubectl(t, "", "wait", "-n", ns, "--for=condition=complete", "job/leader", "--timeout=30s")
	if c := jobCondition(getJob(t, ns, "leader"), batchv1.JobComplete); c.Reason != "SuccessPolicy" {
		t.Errorf("Complete condition = %+v", c)
	}
}
