package cronjob

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

var created = time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)

type harness struct {
	t        *testing.T
	client   *fake.Clientset
	factory  informers.SharedInformerFactory
	clock    *clocktesting.FakeClock
	recorder *record.FakeRecorder
	c        *Controller
}

func newHarness(t *testing.T, now time.Time, objs ...runtime.Object) *harness {
	client := fake.NewSimpleClientset(objs...)
	// The fake API assigns no UIDs; the controller tells Jobs apart by them.
	client.PrependReactor("create", "jobs", func(a clienttesting.Action) (bool, runtime.Object, error) {
		j := a.(clienttesting.CreateAction).GetObject().(*batchv1.Job)
		j.UID = types.UID("uid-" + j.Name)
		return false, nil, nil
	})
	factory := informers.NewSharedInformerFactory(client, 0)
	h := &harness{t: t, client: client, factory: factory, clock: clocktesting.NewFakeClock(now), recorder: record.NewFakeRecorder(100)}
	c, err := newController(client, factory, nil, slog.New(slog.NewTextHandler(io.Discard, nil)), h.clock, nil, h.recorder)
	if err != nil {
		t.Fatal(err)
	}
	h.c = c
	return h
}

// syncAt refreshes the informer caches from the fake API and syncs.
func (h *harness) syncAt(now time.Time) *time.Duration {
	h.t.Helper()
	h.clock.SetTime(now)
	ctx := context.Background()
	cjs, _ := h.client.BatchV1().CronJobs("ns").List(ctx, metav1.ListOptions{})
	jobs, _ := h.client.BatchV1().Jobs("ns").List(ctx, metav1.ListOptions{})
	cjStore := h.factory.Batch().V1().CronJobs().Informer().GetStore()
	jobStore := h.factory.Batch().V1().Jobs().Informer().GetStore()
	var cjObjs, jobObjs []any
	for i := range cjs.Items {
		cjObjs = append(cjObjs, &cjs.Items[i])
	}
	for i := range jobs.Items {
		jobObjs = append(jobObjs, &jobs.Items[i])
	}
	_ = cjStore.Replace(cjObjs, "")
	_ = jobStore.Replace(jobObjs, "")
	requeue, err := h.c.sync(ctx, "ns/cj")
	if err != nil {
		h.t.Fatalf("sync at %v: %v", now, err)
	}
	return requeue
}

func (h *harness) cronJob() *batchv1.CronJob {
	cj, err := h.client.BatchV1().CronJobs("ns").Get(context.Background(), "cj", metav1.GetOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	return cj
}

func (h *harness) jobs() []batchv1.Job {
	l, _ := h.client.BatchV1().Jobs("ns").List(context.Background(), metav1.ListOptions{})
	return l.Items
}

// events drains the recorded events.
func (h *harness) events() []string {
	var out []string
	for {
		select {
		case e := <-h.recorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func hasEvent(events []string, prefix string) bool {
	for _, e := range events {
		if strings.HasPrefix(e, prefix) {
			return true
		}
	}
	return false
}

func cronJobOf(schedule string, mutate ...func(*batchv1.CronJob)) *batchv1.CronJob {
	cj := &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "cj", Namespace: "ns", UID: "cj-uid", CreationTimestamp: metav1.NewTime(created)},
		Spec: batchv1.CronJobSpec{
			Schedule: schedule, ConcurrencyPolicy: batchv1.AllowConcurrent,
			SuccessfulJobsHistoryLimit: ptr.To[int32](3), FailedJobsHistoryLimit: ptr.To[int32](1),
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: v1.PodTemplateSpec{
				Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "busybox"}}}}}},
		},
	}
	for _, m := range mutate {
		m(cj)
	}
	return cj
}

func at(h, m, s int) time.Time { return time.Date(2026, 1, 1, h, m, s, 0, time.UTC) }

func (h *harness) finish(name string, cond batchv1.JobConditionType, when time.Time) {
	h.t.Helper()
	j, err := h.client.BatchV1().Jobs("ns").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	j.Status.StartTime = &metav1.Time{Time: when.Add(-time.Second)}
	j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{Type: cond, Status: v1.ConditionTrue})
	if cond == batchv1.JobComplete {
		j.Status.CompletionTime = &metav1.Time{Time: when}
	}
	if _, err := h.client.BatchV1().Jobs("ns").UpdateStatus(context.Background(), j, metav1.UpdateOptions{}); err != nil {
		h.t.Fatal(err)
	}
}

func TestCronJobCreatesJobAtScheduledTime(t *testing.T) {
	h := newHarness(t, at(10, 0, 30), cronJobOf("*/5 * * * *", func(cj *batchv1.CronJob) { cj.Spec.TimeZone = ptr.To("Asia/Tokyo") }))
	requeue := h.syncAt(at(10, 0, 30))
	if len(h.jobs()) != 0 {
		t.Fatal("created a job before the first scheduled time")
	}
	if requeue == nil || *requeue != 4*time.Minute+30*time.Second+nextScheduleDelta {
		t.Fatalf("requeue = %v, want 4m30.1s", requeue)
	}
	h.syncAt(at(10, 5, 1))
	jobs := h.jobs()
	if len(jobs) != 1 {
		t.Fatalf("%d jobs, want 1", len(jobs))
	}
	j := jobs[0]
	if j.Name != JobName("cj", at(10, 5, 0)) || j.Annotations[batchv1.CronJobScheduledTimestampAnnotation] != "2026-01-01T19:05:00+09:00" {
		t.Errorf("job %s annotations %v", j.Name, j.Annotations)
	}
	cj := h.cronJob()
	if len(cj.Status.Active) != 1 || cj.Status.Active[0].Name != j.Name || cj.Status.Active[0].Kind != "Job" ||
		cj.Status.LastScheduleTime == nil || !cj.Status.LastScheduleTime.Time.Equal(at(10, 5, 0)) {
		t.Errorf("status = %+v", cj.Status)
	}
	if ev := h.events(); !hasEvent(ev, "Normal SuccessfulCreate Created job "+j.Name) {
		t.Errorf("events = %v", ev)
	}
	// A second sync in the same slot does nothing more.
	h.syncAt(at(10, 5, 2))
	if len(h.jobs()) != 1 {
		t.Fatal("created the same scheduled job twice")
	}

	h.finish(j.Name, batchv1.JobComplete, at(10, 6, 0))
	h.syncAt(at(10, 6, 1))
	cj = h.cronJob()
	if len(cj.Status.Active) != 0 || cj.Status.LastSuccessfulTime == nil || !cj.Status.LastSuccessfulTime.Time.Equal(at(10, 6, 0)) {
		t.Errorf("status after completion = %+v", cj.Status)
	}
	if ev := h.events(); !hasEvent(ev, "Normal SawCompletedJob Saw completed job: "+j.Name+", condition: Complete") {
		t.Errorf("events = %v", ev)
	}
}

func TestCronJobForbidSkipsWhileActive(t *testing.T) {
	h := newHarness(t, at(10, 0, 0), cronJobOf("* * * * *", func(cj *batchv1.CronJob) { cj.Spec.ConcurrencyPolicy = batchv1.ForbidConcurrent }))
	h.syncAt(at(10, 1, 0))
	h.syncAt(at(10, 2, 0))
	if n := len(h.jobs()); n != 1 {
		t.Fatalf("%d jobs while the first runs, want 1", n)
	}
	if ev := h.events(); !hasEvent(ev, "Normal JobAlreadyActive Not starting job because prior execution is running and concurrency policy is Forbid") {
		t.Errorf("events = %v", ev)
	}
	h.finish(JobName("cj", at(10, 1, 0)), batchv1.JobComplete, at(10, 2, 10))
	h.syncAt(at(10, 2, 30))
	// Completion noticed, the missed 10:02 slot is still within reach.
	h.syncAt(at(10, 2, 31))
	if n := len(h.jobs()); n != 2 {
		t.Fatalf("%d jobs after the first finished, want 2", n)
	}
}

func TestCronJobReplaceDeletesRunningJob(t *testing.T) {
	h := newHarness(t, at(10, 0, 0), cronJobOf("* * * * *", func(cj *batchv1.CronJob) { cj.Spec.ConcurrencyPolicy = batchv1.ReplaceConcurrent }))
	h.syncAt(at(10, 1, 0))
	h.syncAt(at(10, 2, 0))
	jobs := h.jobs()
	if len(jobs) != 1 || jobs[0].Name != JobName("cj", at(10, 2, 0)) {
		t.Fatalf("jobs = %v, want only the 10:02 one", jobs)
	}
	if ev := h.events(); !hasEvent(ev, "Normal SuccessfulDelete Deleted job "+JobName("cj", at(10, 1, 0))) {
		t.Errorf("events = %v", ev)
	}
}

func TestCronJobCatchesUpOnceAfterDowntime(t *testing.T) {
	h := newHarness(t, at(10, 0, 0), cronJobOf("0 * * * *"))
	h.syncAt(at(13, 30, 0)) // 11:00, 12:00 and 13:00 were missed
	jobs := h.jobs()
	if len(jobs) != 1 || jobs[0].Name != JobName("cj", at(13, 0, 0)) {
		t.Fatalf("jobs = %v, want one for 13:00", jobs)
	}
	if ev := h.events(); hasEvent(ev, "Warning TooManyMissedTimes") {
		t.Errorf("warned about 3 missed times: %v", ev)
	}

	h2 := newHarness(t, at(10, 0, 0), cronJobOf("* * * * *"))
	h2.syncAt(at(12, 0, 0)) // 120 missed
	if n := len(h2.jobs()); n != 1 {
		t.Fatalf("%d jobs after 120 missed, want 1", n)
	}
	if ev := h2.events(); !hasEvent(ev, "Warning TooManyMissedTimes too many missed start times") {
		t.Errorf("events = %v", ev)
	}
}

func TestCronJobStartingDeadline(t *testing.T) {
	h := newHarness(t, at(10, 0, 0), cronJobOf("0 * * * *", func(cj *batchv1.CronJob) { cj.Spec.StartingDeadlineSeconds = ptr.To[int64](60) }))
	h.syncAt(at(11, 5, 0))
	if n := len(h.jobs()); n != 0 {
		t.Fatalf("%d jobs five minutes past a one-minute deadline, want 0", n)
	}
	h.syncAt(at(12, 0, 30))
	if n := len(h.jobs()); n != 1 {
		t.Fatalf("%d jobs within the deadline, want 1", n)
	}
}

func TestCronJobSuspendAndHistoryLimits(t *testing.T) {
	h := newHarness(t, at(10, 0, 0), cronJobOf("* * * * *", func(cj *batchv1.CronJob) {
		cj.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](2)
		cj.Spec.FailedJobsHistoryLimit = ptr.To[int32](1)
	}))
	for m := 1; m <= 5; m++ {
		h.syncAt(at(10, m, 0))
		cond := batchv1.JobComplete
		if m >= 4 {
			cond = batchv1.JobFailed
		}
		h.finish(JobName("cj", at(10, m, 0)), cond, at(10, m, 30))
	}
	h.syncAt(at(10, 5, 40))
	var names []string
	for _, j := range h.jobs() {
		names = append(names, j.Name)
	}
	want := []string{JobName("cj", at(10, 2, 0)), JobName("cj", at(10, 3, 0)), JobName("cj", at(10, 5, 0))}
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Errorf("jobs kept = %v, want %v", names, want)
	}

	cj := h.cronJob()
	cj.Spec.Suspend = ptr.To(true)
	if _, err := h.client.BatchV1().CronJobs("ns").Update(context.Background(), cj, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	before := len(h.jobs())
	h.syncAt(at(10, 7, 0))
	if len(h.jobs()) != before {
		t.Error("a suspended CronJob started a job")
	}
}
