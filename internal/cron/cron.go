// Package cron reads cron schedules and says when they next fire. It is
// the one parser behind both the CronJob API's validation and the CronJob
// controller (and the server's etcd snapshot schedule), so the API accepts
// exactly what the controller will run.
//
// The grammar and the error texts are those of robfig/cron v3's standard
// parser, which upstream Kubernetes uses and whose messages it reports
// verbatim in validation errors: five fields (minute, hour, day of month,
// month, day of week) with names for months and days, "*", "?", ranges,
// steps and lists; the descriptors @yearly, @annually, @monthly, @weekly,
// @daily, @midnight, @hourly and "@every <duration>"; and an optional
// TZ=<zone> or CRON_TZ=<zone> prefix.
package cron

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	// Zone names must not depend on whether the host has a zoneinfo
	// database; upstream's apiserver embeds one for the same reason.
	_ "time/tzdata"
)

// Schedule is a parsed cron schedule.
type Schedule interface {
	// Next returns the first activation strictly after t, in t's zone,
	// or the zero time if there is none within five years.
	Next(t time.Time) time.Time
}

// bounds is the range of one field and, for months and days of the
// week, the names it accepts.
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

// starBit marks a field written as "*" or "?" (without a step above 1),
// so that day of month and day of week combine with AND when either is a
// star and with OR otherwise, as in classic cron.
const starBit = 1 << 63

// Parse reads a schedule. loc is the zone its fields are read in when
// the spec names none (nil: the zone of the time given to Next).
func Parse(spec string, loc *time.Location) (Schedule, error) {
	if spec == "" {
		return nil, fmt.Errorf("empty spec string")
	}
	if strings.HasPrefix(spec, "TZ=") || strings.HasPrefix(spec, "CRON_TZ=") {
		eq := strings.Index(spec, "=")
		sp := strings.Index(spec, " ")
		if sp < 0 {
			// robfig/cron would index out of range here; everything after
			// the '=' is the location, and no fields follow it.
			sp = len(spec)
		}
		zone := spec[eq+1 : sp]
		var err error
		if loc, err = time.LoadLocation(zone); err != nil {
			return nil, fmt.Errorf("provided bad location %s: %v", zone, err)
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

// parseRange reads one list element: "*", "?", a number or name, or
// "a-b", each optionally followed by "/step".
func parseRange(expr string, b bounds) (uint64, error) {
	rangeAndStep := strings.Split(expr, "/")
	lowAndHigh := strings.Split(rangeAndStep[0], "-")
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
		// "N/step" runs from N to the end of the field.
		if len(lowAndHigh) == 1 {
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
	if step == 1 {
		return ^(math.MaxUint64 << (max + 1)) & (math.MaxUint64 << min)
	}
	var bits uint64
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
