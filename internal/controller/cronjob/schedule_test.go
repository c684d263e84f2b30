package cronjob

import (
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func mustLoc(t *testing.T, name string) *time.Location {
	t.Helper()
	l, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestParseScheduleErrors(t *testing.T) {
	for spec, want := range map[string]string{
		"":                         "empty spec string",
		"* * * *":                  "expected exactly 5 fields",
		"60 * * * *":               "end of range (60) above maximum (59)",
		"* * 0 * *":                "beginning of range (0) below minimum (1)",
		"5-2 * * * *":              "beginning of range (5) beyond end of range (2)",
		"*/0 * * * *":              "step of range should be a positive number",
		"1-2-3 * * * *":            "too many hyphens",
		"x * * * *":                "failed to parse int from x",
		"@fortnightly":             "unrecognized descriptor",
		"@every forever":           "failed to parse duration",
		"TZ=Nowhere/Xyz * * * * *": "provided bad location Nowhere/Xyz",
	} {
		_, err := ParseSchedule(spec, nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseSchedule(%q) = %v, want error containing %q", spec, err, want)
		}
	}
}

func TestNext(t *testing.T) {
	utc := time.UTC
	ny := mustLoc(t, "America/New_York")
	for _, tc := range []struct {
		spec string
		loc  *time.Location
		from time.Time
		want time.Time
	}{
		{"* * * * *", nil, time.Date(2026, 1, 1, 10, 0, 0, 0, utc), time.Date(2026, 1, 1, 10, 1, 0, 0, utc)},
		{"* * * * *", nil, time.Date(2026, 1, 1, 10, 0, 30, 5, utc), time.Date(2026, 1, 1, 10, 1, 0, 0, utc)},
		{"*/15 * * * *", nil, time.Date(2026, 1, 1, 10, 16, 0, 0, utc), time.Date(2026, 1, 1, 10, 30, 0, 0, utc)},
		{"0 9-17/4 * * mon-fri", nil, time.Date(2026, 1, 2, 18, 0, 0, 0, utc), time.Date(2026, 1, 5, 9, 0, 0, 0, utc)}, // Friday evening to Monday
		{"30 2 * * *", nil, time.Date(2026, 1, 1, 3, 0, 0, 0, utc), time.Date(2026, 1, 2, 2, 30, 0, 0, utc)},
		{"0 0 29 2 *", nil, time.Date(2026, 3, 1, 0, 0, 0, 0, utc), time.Date(2028, 2, 29, 0, 0, 0, 0, utc)},
		// Day of month OR day of week when both are restricted...
		{"0 0 13 * 5", nil, time.Date(2026, 1, 1, 0, 0, 0, 0, utc), time.Date(2026, 1, 2, 0, 0, 0, 0, utc)},
		// ...AND when one is a star.
		{"0 0 * * 5", nil, time.Date(2026, 1, 1, 0, 0, 0, 0, utc), time.Date(2026, 1, 2, 0, 0, 0, 0, utc)},
		{"0 0 31 2 *", nil, time.Date(2026, 1, 1, 0, 0, 0, 0, utc), time.Time{}},
		{"@hourly", nil, time.Date(2026, 1, 1, 10, 59, 59, 0, utc), time.Date(2026, 1, 1, 11, 0, 0, 0, utc)},
		{"@daily", nil, time.Date(2026, 1, 1, 10, 0, 0, 0, utc), time.Date(2026, 1, 2, 0, 0, 0, 0, utc)},
		{"@midnight", nil, time.Date(2026, 1, 1, 0, 0, 0, 0, utc), time.Date(2026, 1, 2, 0, 0, 0, 0, utc)},
		{"@weekly", nil, time.Date(2026, 1, 1, 0, 0, 0, 0, utc), time.Date(2026, 1, 4, 0, 0, 0, 0, utc)},
		{"@monthly", nil, time.Date(2026, 1, 15, 0, 0, 0, 0, utc), time.Date(2026, 2, 1, 0, 0, 0, 0, utc)},
		{"@yearly", nil, time.Date(2026, 1, 15, 0, 0, 0, 0, utc), time.Date(2027, 1, 1, 0, 0, 0, 0, utc)},
		{"@annually", nil, time.Date(2026, 1, 1, 0, 0, 0, 0, utc), time.Date(2027, 1, 1, 0, 0, 0, 0, utc)},
		{"@every 90m", nil, time.Date(2026, 1, 1, 10, 0, 0, 0, utc), time.Date(2026, 1, 1, 11, 30, 0, 0, utc)},
		// In a zone: 9:00 New York is 14:00 UTC in winter, 13:00 in summer.
		{"0 9 * * *", ny, time.Date(2026, 1, 1, 15, 0, 0, 0, utc), time.Date(2026, 1, 2, 14, 0, 0, 0, utc)},
		{"0 9 * * *", ny, time.Date(2026, 7, 1, 15, 0, 0, 0, utc), time.Date(2026, 7, 2, 13, 0, 0, 0, utc)},
		{"TZ=America/New_York 0 9 * * *", nil, time.Date(2026, 7, 1, 15, 0, 0, 0, utc), time.Date(2026, 7, 2, 13, 0, 0, 0, utc)},
		// Spring forward (8 March 2026): 2:30 does not exist that day and is skipped.
		{"30 2 * * *", ny, time.Date(2026, 3, 7, 12, 0, 0, 0, ny), time.Date(2026, 3, 9, 2, 30, 0, 0, ny)},
		// Fall back (1 November 2026): 1:30 happens twice and, as with
		// upstream's parser, runs at both.
		{"30 1 * * *", ny, time.Date(2026, 11, 1, 5, 30, 0, 0, utc), time.Date(2026, 11, 1, 6, 30, 0, 0, utc)},
		{"30 1 * * *", ny, time.Date(2026, 11, 1, 6, 30, 0, 0, utc), time.Date(2026, 11, 2, 6, 30, 0, 0, utc)},
	} {
		s, err := ParseSchedule(tc.spec, tc.loc)
		if err != nil {
			t.Errorf("ParseSchedule(%q): %v", tc.spec, err)
			continue
		}
		if got := s.Next(tc.from); !got.Equal(tc.want) {
			t.Errorf("%q after %v = %v, want %v", tc.spec, tc.from, got, tc.want)
		}
	}
}

func TestMostRecentScheduleTime(t *testing.T) {
	created := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	hourly, _ := ParseSchedule("0 * * * *", nil)
	minutely, _ := ParseSchedule("* * * * *", nil)
	impossible, _ := ParseSchedule("0 0 31 2 *", nil)
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
		sched  Schedule
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
