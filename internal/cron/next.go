package cron

import "time"

// specSchedule is a five-field schedule as one bit set per field (bit i
// set: value i matches), plus seconds, which the standard parser fixes
// at zero.
type specSchedule struct {
	second, minute, hour, dom, month, dow uint64
	// loc is the zone the fields are read in; nil means t's own zone.
	loc *time.Location
}

// everySchedule is "@every <duration>": fixed intervals from any start.
type everySchedule struct{ delay time.Duration }

func (e everySchedule) Next(t time.Time) time.Time {
	return t.Add(e.delay - time.Duration(t.Nanosecond()))
}

// Next walks forward field by field, from months down to seconds, as
// robfig/cron does, so that DST gaps and repeats resolve the same way:
// a time that does not exist on a spring-forward day is skipped, and one
// that occurs twice in the autumn runs twice.
func (s *specSchedule) Next(t time.Time) time.Time {
	orig := t.Location()
	loc := s.loc
	if loc == nil {
		loc = t.Location()
	} else {
		t = t.In(loc)
	}
	t = t.Add(time.Second - time.Duration(t.Nanosecond()))
	added := false
	yearLimit := t.Year() + 5

wrap:
	if t.Year() > yearLimit {
		return time.Time{}
	}
	for 1<<uint(t.Month())&s.month == 0 {
		if !added {
			added = true
			t = time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, loc)
		}
		t = t.AddDate(0, 1, 0)
		if t.Month() == time.January {
			goto wrap
		}
	}
	for !s.dayMatches(t) {
		if !added {
			added = true
			t = time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, loc)
		}
		t = t.AddDate(0, 0, 1)
		// Midnight may not exist or may have moved across a DST change.
		if t.Hour() != 0 {
			if t.Hour() > 12 {
				t = t.Add(time.Duration(24-t.Hour()) * time.Hour)
			} else {
				t = t.Add(time.Duration(-t.Hour()) * time.Hour)
			}
		}
		if t.Day() == 1 {
			goto wrap
		}
	}
	for 1<<uint(t.Hour())&s.hour == 0 {
		if !added {
			added = true
			t = time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), 0, 0, 0, loc)
		}
		t = t.Add(time.Hour)
		if t.Hour() == 0 {
			goto wrap
		}
	}
	for 1<<uint(t.Minute())&s.minute == 0 {
		if !added {
			added = true
			t = t.Truncate(time.Minute)
		}
		t = t.Add(time.Minute)
		if t.Minute() == 0 {
			goto wrap
		}
	}
	for 1<<uint(t.Second())&s.second == 0 {
		if !added {
			added = true
			t = t.Truncate(time.Second)
		}
		t = t.Add(time.Second)
		if t.Second() == 0 {
			goto wrap
		}
	}
	return t.In(orig)
}

func (s *specSchedule) dayMatches(t time.Time) bool {
	domMatch := 1<<uint(t.Day())&s.dom > 0
	dowMatch := 1<<uint(t.Weekday())&s.dow > 0
	if s.dom&starBit > 0 || s.dow&starBit > 0 {
		return domMatch && dowMatch
	}
	return domMatch || dowMatch
}
