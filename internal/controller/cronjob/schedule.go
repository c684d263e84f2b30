package cronjob

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Schedule is a parsed cron schedule with the semantics of the parser
// upstream's controller uses (robfig/cron v3, standard five fields):
// bit sets per field, starBit marking a field written as "*" or "?" so
// that day-of-month and day-of-week combine with AND when either is a
// star and with OR otherwise, as in classic cron.
type Schedule interface {
	// Next returns the first activation strictly after t, or the zero
	// time if there is none within five years.
	Next(t time.Time) time.Time
}

type specSchedule struct {
	second, minute, hour, dom, month, dow uint64
	// loc is the zone the fields are read in; nil means t's own zone.
	loc *time.Location
}

// everySchedule is "@every <duration>": fixed intervals from any start.
type everySchedule struct{ delay time.Duration }

const starBit = 1 << 63

type bounds struct {
	min, max uint
	names    map[string]uint
}

var (
	minutes = bounds{0, 59, nil}
	hours   = bounds{0, 23, nil}
	dom     = bounds{1, 31, nil}
	months  = bounds{1, 12, map[string]uint{
		"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6,
		"jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12,
	}}
	dow = bounds{0, 6, map[string]uint{
		"sun": 0, "mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6,
	}}
)

// ParseSchedule reads a standard cron spec: five fields (minute, hour,
// day of month, month, day of week), a descriptor (@yearly, @annually,
// @monthly, @weekly, @daily, @midnight, @hourly, @every <duration>),
// optionally prefixed by TZ=<zone> or CRON_TZ=<zone>. loc (nil for the
// clock's zone) is used when the spec names no zone.
func ParseSchedule(spec string, loc *time.Location) (Schedule, error) {
	if spec == "" {
		return nil, fmt.Errorf("empty spec string")
	}
	if strings.HasPrefix(spec, "TZ=") || strings.HasPrefix(spec, "CRON_TZ=") {
		eq := strings.Index(spec, "=")
		sp := strings.Index(spec, " ")
		if sp < 0 {
			return nil, fmt.Errorf("provided bad location %s: missing schedule", spec[eq+1:])
		}
		var err error
		if loc, err = time.LoadLocation(spec[eq+1 : sp]); err != nil {
			return nil, fmt.Errorf("provided bad location %s: %v", spec[eq+1:sp], err)
		}
		spec = strings.TrimSpace(spec[sp:])
	}
	if strings.HasPrefix(spec, "@") {
		return parseDescriptor(spec, loc)
	}
	fields := strings.Fields(spec)
	if len(fields) != 5 {
		return nil, fmt.Errorf("expected exactly 5 fields, found %d: %s", len(fields), fields)
	}
	s := &specSchedule{second: 1, loc: loc}
	for i, f := range []struct {
		b   bounds
		out *uint64
	}{{minutes, &s.minute}, {hours, &s.hour}, {dom, &s.dom}, {months, &s.month}, {dow, &s.dow}} {
		bits, err := parseField(fields[i], f.b)
		if err != nil {
			return nil, err
		}
		*f.out = bits
	}
	return s, nil
}

func parseDescriptor(spec string, loc *time.Location) (Schedule, error) {
	all := func(b bounds) uint64 { return bitRange(b.min, b.max, 1) | starBit }
	s := &specSchedule{second: 1, minute: 1, hour: 1, dom: all(dom), month: all(months), dow: all(dow), loc: loc}
	switch spec {
	case "@yearly", "@annually":
		s.dom, s.month = 1<<1, 1<<1
	case "@monthly":
		s.dom = 1 << 1
	case "@weekly":
		s.dow = 1 << 0
	case "@daily", "@midnight":
	case "@hourly":
		s.hour = all(hours)
	default:
		const every = "@every "
		if !strings.HasPrefix(spec, every) {
			return nil, fmt.Errorf("unrecognized descriptor: %s", spec)
		}
		d, err := time.ParseDuration(spec[len(every):])
		if err != nil {
			return nil, fmt.Errorf("failed to parse duration %s: %s", spec, err)
		}
		// Intervals run on whole seconds, at least one.
		if d < time.Second {
			d = time.Second
		}
		return everySchedule{d - time.Duration(d.Nanoseconds())%time.Second}, nil
	}
	return s, nil
}

func parseField(field string, b bounds) (uint64, error) {
	var bits uint64
	for _, expr := range strings.FieldsFunc(field, func(r rune) bool { return r == ',' }) {
		r, err := parseRange(expr, b)
		if err != nil {
			return 0, err
		}
		bits |= r
	}
	return bits, nil
}

// parseRange reads "*", "?", a number or name, or "a-b", each optionally
// followed by "/step".
func parseRange(expr string, b bounds) (uint64, error) {
	rangeAndStep := strings.Split(expr, "/")
	lowAndHigh := strings.Split(rangeAndStep[0], "-")
	single := len(lowAndHigh) == 1
	var start, end uint
	var extra uint64
	var err error
	if lowAndHigh[0] == "*" || lowAndHigh[0] == "?" {
		start, end, extra = b.min, b.max, starBit
	} else {
		if start, err = parseValue(lowAndHigh[0], b.names); err != nil {
			return 0, err
		}
		switch len(lowAndHigh) {
		case 1:
			end = start
		case 2:
			if end, err = parseValue(lowAndHigh[1], b.names); err != nil {
				return 0, err
			}
		default:
			return 0, fmt.Errorf("too many hyphens: %s", expr)
		}
	}
	step := uint(1)
	switch len(rangeAndStep) {
	case 1:
	case 2:
		if step, err = parseInt(rangeAndStep[1]); err != nil {
			return 0, err
		}
		if single {
			end = b.max
		}
		if step > 1 {
			extra = 0
		}
	default:
		return 0, fmt.Errorf("too many slashes: %s", expr)
	}
	switch {
	case start < b.min:
		return 0, fmt.Errorf("beginning of range (%d) below minimum (%d): %s", start, b.min, expr)
	case end > b.max:
		return 0, fmt.Errorf("end of range (%d) above maximum (%d): %s", end, b.max, expr)
	case start > end:
		return 0, fmt.Errorf("beginning of range (%d) beyond end of range (%d): %s", start, end, expr)
	case step == 0:
		return 0, fmt.Errorf("step of range should be a positive number: %s", expr)
	}
	return bitRange(start, end, step) | extra, nil
}

func bitRange(min, max, step uint) uint64 {
	var bits uint64
	if step == 1 {
		return ^(math.MaxUint64 << (max + 1)) & (math.MaxUint64 << min)
	}
	for i := min; i <= max; i += step {
		bits |= 1 << i
	}
	return bits
}

func parseValue(expr string, names map[string]uint) (uint, error) {
	if n, ok := names[strings.ToLower(expr)]; ok {
		return n, nil
	}
	return parseInt(expr)
}

func parseInt(expr string) (uint, error) {
	n, err := strconv.Atoi(expr)
	if err != nil {
		return 0, fmt.Errorf("failed to parse int from %s: %s", expr, err)
	}
	if n < 0 {
		return 0, fmt.Errorf("negative number (%d) not allowed: %s", n, expr)
	}
	return uint(n), nil
}

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
