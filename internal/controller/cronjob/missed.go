package cronjob

import (
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"

	"github.com/orca-project/orca/internal/cron"
)

// missed says how many start times went by unserved.
type missed int

const (
	noneMissed missed = iota
	fewMissed
	// manyMissed is more than 100: a wedged controller or a skewed clock.
	// Listing them all could eat the controller, so only the most recent
	// one is considered, and a warning is recorded.
	manyMissed
)

// nextScheduleDelta pads requeues so a sync lands after, not just before,
// the scheduled time.
const nextScheduleDelta = 100 * time.Millisecond

// mostRecentScheduleTime is upstream's: from the last schedule time (or
// creation), optionally no earlier than startingDeadlineSeconds ago, it
// returns that earliest time, the most recent start time not after now
// (nil if none), and how many were missed. The count is an estimate from
// the interval between two consecutive times, as upstream's.
func mostRecentScheduleTime(cj *batchv1.CronJob, now time.Time, sched cron.Schedule, withDeadline bool) (time.Time, *time.Time, missed, int64, error) {
	earliest := cj.CreationTimestamp.Time
	if cj.Status.LastScheduleTime != nil {
		earliest = cj.Status.LastScheduleTime.Time
	}
	if withDeadline && cj.Spec.StartingDeadlineSeconds != nil {
		deadline := now.Add(-time.Duration(*cj.Spec.StartingDeadlineSeconds) * time.Second)
		if deadline.After(earliest) {
			earliest = deadline
		}
	}
	t1 := sched.Next(earliest)
	t2 := sched.Next(t1)
	if now.Before(t1) {
		return earliest, nil, noneMissed, 0, nil
	}
	if now.Before(t2) {
		return earliest, &t1, noneMissed, 1, nil
	}
	// An impossible date ("31 2") yields no time at all.
	between := int64(t2.Sub(t1).Round(time.Second).Seconds())
	if between < 1 {
		return earliest, nil, noneMissed, 0, fmt.Errorf("time difference between two schedules is less than 1 second")
	}
	n := int64(now.Sub(t1).Seconds())/between + 1
	var recent time.Time
	// Start two intervals before the estimate so irregular schedules
	// ("30 6-16/4 * * 1-5") still find their true most recent time.
	from := t1.Add(time.Duration((n-2)*between) * time.Second)
	for t := sched.Next(from); !t.After(now) && !t.IsZero(); t = sched.Next(t) {
		recent = t
	}
	m := fewMissed
	if n > 100 {
		m = manyMissed
	}
	if recent.IsZero() {
		return earliest, nil, m, n, nil
	}
	return earliest, &recent, m, n, nil
}

// nextRequeue is how long until the sync after the next start time.
func nextRequeue(cj *batchv1.CronJob, now time.Time, sched cron.Schedule) *time.Duration {
	earliest, recent, m, _, err := mostRecentScheduleTime(cj, now, sched, false)
	switch {
	case err != nil:
		// Still come back at some point: aim for the next slot from now.
		recent = &now
	case recent == nil && m == noneMissed:
		recent = &earliest
	case recent == nil:
		recent = &now
	}
	next := sched.Next(*recent)
	if next.IsZero() {
		return nil
	}
	d := next.Add(nextScheduleDelta).Sub(now)
	return &d
}
