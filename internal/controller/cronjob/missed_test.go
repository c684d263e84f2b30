package cronjob

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/orca-project/orca/internal/cron"
)

func TestMostRecentScheduleTime(t *testing.T) {
	created := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	hourly, _ := cron.Parse("0 * * * *", nil)
	minutely, _ := cron.Parse("* * * * *", nil)
	impossible, _ := cron.Parse("0 0 31 2 *", nil)
	cj := func(last *time.Time, deadline *int64) *batchv1.CronJob {
		c := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(created)}}
		c.Spec.StartingDeadlineSeconds = deadline
		if last != nil {
			c.Status.LastScheduleTime = &metav1.Time{Time: *last}
		}
		return c
	}
	at := func(h, m int) time.Time { return time.Date(2026, 1, 1, h, m, 0, 0, time.UTC) }
	last := at(11, 0)
	for _, tc := range []struct {
		name   string
		cj     *batchv1.CronJob
		sched  cron.Schedule
		now    time.Time
		recent *time.Time
		missed missed
		err    bool
	}{
		{"before the first time", cj(nil, nil), hourly, at(10, 30), nil, noneMissed, false},
		{"first time due", cj(nil, nil), hourly, at(11, 5), ptr.To(at(11, 0)), noneMissed, false},
		{"already served", cj(&last, nil), hourly, at(11, 30), nil, noneMissed, false},
		{"three missed: the latest", cj(&last, nil), hourly, at(14, 10), ptr.To(at(14, 0)), fewMissed, false},
		{"deadline cuts them off", cj(&last, ptr.To[int64](300)), hourly, at(14, 10), nil, noneMissed, false},
		{"deadline still allows the latest", cj(&last, ptr.To[int64](900)), hourly, at(14, 10), ptr.To(at(14, 0)), noneMissed, false},
		{"over a hundred missed", cj(nil, nil), minutely, at(12, 0), ptr.To(at(12, 0)), manyMissed, false},
		{"impossible date", cj(nil, nil), impossible, at(12, 0), nil, noneMissed, true},
	} {
		_, recent, m, _, err := mostRecentScheduleTime(tc.cj, tc.now, tc.sched, true)
		if (err != nil) != tc.err {
			t.Errorf("%s: err = %v", tc.name, err)
			continue
		}
		if m != tc.missed || (recent == nil) != (tc.recent == nil) || recent != nil && !recent.Equal(*tc.recent) {
			t.Errorf("%s: recent %v missed %v, want %v %v", tc.name, recent, m, tc.recent, tc.missed)
		}
	}
}

func TestJobFromTemplate(t *testing.T) {
	cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "ns", UID: "cj1"},
		Spec: batchv1.CronJobSpec{TimeZone: ptr.To("Europe/Berlin"), JobTemplate: batchv1.JobTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}},
			Spec:       batchv1.JobSpec{BackoffLimit: ptr.To[int32](2)}}}}
	at := time.Date(2026, 1, 1, 23, 0, 0, 0, time.UTC)
	j, err := JobFromTemplate(cj, at)
	if err != nil {
		t.Fatal(err)
	}
	if j.Name != "nightly-29455140" {
		t.Errorf("name = %s", j.Name)
	}
	if got := j.Annotations[batchv1.CronJobScheduledTimestampAnnotation]; got != "2026-01-02T00:00:00+01:00" {
		t.Errorf("scheduled timestamp = %s", got)
	}
	if j.Labels["a"] != "b" || *j.Spec.BackoffLimit != 2 || !metav1.IsControlledBy(j, cj) {
		t.Errorf("job = %+v", j)
	}
}
