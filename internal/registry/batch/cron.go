package batch

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	// Time zone checks must not depend on whether the host has a zoneinfo
	// database; upstream's apiserver embeds one for the same reason.
	_ "time/tzdata"
)

// cronBounds is the range of one schedule field and, for months and days
// of the week, the names it accepts.
type cronBounds struct {
	min, max uint
	names    map[string]uint
}

var (
	cronMinutes = cronBounds{0, 59, nil}
	cronHours   = cronBounds{0, 23, nil}
	cronDom     = cronBounds{1, 31, nil}
	cronMonths  = cronBounds{1, 12, map[string]uint{
		"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6,
		"jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12,
	}}
	cronDow = cronBounds{0, 6, map[string]uint{
		"sun": 0, "mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6,
	}}
)

// parseCronSchedule checks a schedule the way the CronJob controller's
// parser (robfig/cron's standard parser) reads it: five fields, or a
// descriptor such as @hourly or "@every 1h", optionally preceded by
// TZ=<zone> or CRON_TZ=<zone>. Error texts are that parser's, since
// upstream reports them verbatim.
func parseCronSchedule(spec string) error {
	if len(spec) == 0 {
		return fmt.Errorf("empty spec string")
	}
	if strings.HasPrefix(spec, "TZ=") || strings.HasPrefix(spec, "CRON_TZ=") {
		eq := strings.Index(spec, "=")
		sp := strings.Index(spec, " ")
		if sp < 0 {
			// robfig/cron would index out of range here; report it as the
			// bad location it is instead.
			sp = len(spec)
		}
		zone := spec[eq+1 : sp]
		if _, err := time.LoadLocation(zone); err != nil {
			return fmt.Errorf("provided bad location %s: %v", zone, err)
		}
		spec = strings.TrimSpace(spec[sp:])
	}
	if strings.HasPrefix(spec, "@") {
		return parseCronDescriptor(spec)
	}
	fields := strings.Fields(spec)
	if len(fields) != 5 {
		return fmt.Errorf("expected exactly 5 fields, found %d: %s", len(fields), fields)
	}
	for i, b := range []cronBounds{cronMinutes, cronHours, cronDom, cronMonths, cronDow} {
		for _, expr := range strings.FieldsFunc(fields[i], func(r rune) bool { return r == ',' }) {
			if err := parseCronRange(expr, b); err != nil {
				return err
			}
		}
	}
	return nil
}

func parseCronDescriptor(spec string) error {
	switch spec {
	case "@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly":
		return nil
	}
	const every = "@every "
	if strings.HasPrefix(spec, every) {
		if _, err := time.ParseDuration(spec[len(every):]); err != nil {
			return fmt.Errorf("failed to parse duration %s: %s", spec, err)
		}
		return nil
	}
	return fmt.Errorf("unrecognized descriptor: %s", spec)
}

// parseCronRange checks one list element: "*", "?", a number or name,
// or a range "a-b", each optionally followed by "/step".
func parseCronRange(expr string, b cronBounds) error {
	rangeAndStep := strings.Split(expr, "/")
	lowAndHigh := strings.Split(rangeAndStep[0], "-")
	var start, end uint
	var err error
	if lowAndHigh[0] == "*" || lowAndHigh[0] == "?" {
		start, end = b.min, b.max
	} else {
		if start, err = parseCronValue(lowAndHigh[0], b.names); err != nil {
			return err
		}
		switch len(lowAndHigh) {
		case 1:
			end = start
		case 2:
			if end, err = parseCronValue(lowAndHigh[1], b.names); err != nil {
				return err
			}
		default:
			return fmt.Errorf("too many hyphens: %s", expr)
		}
	}

	step := uint(1)
	switch len(rangeAndStep) {
	case 1:
	case 2:
		if step, err = parseCronInt(rangeAndStep[1]); err != nil {
			return err
		}
		// "N/step" means from N to the end of the field.
		if len(lowAndHigh) == 1 {
			end = b.max
		}
	default:
		return fmt.Errorf("too many slashes: %s", expr)
	}

	switch {
	case start < b.min:
		return fmt.Errorf("beginning of range (%d) below minimum (%d): %s", start, b.min, expr)
	case end > b.max:
		return fmt.Errorf("end of range (%d) above maximum (%d): %s", end, b.max, expr)
	case start > end:
		return fmt.Errorf("beginning of range (%d) beyond end of range (%d): %s", start, end, expr)
	case step == 0:
		return fmt.Errorf("step of range should be a positive number: %s", expr)
	}
	return nil
}

func parseCronValue(expr string, names map[string]uint) (uint, error) {
	if n, ok := names[strings.ToLower(expr)]; ok {
		return n, nil
	}
	return parseCronInt(expr)
}

func parseCronInt(expr string) (uint, error) {
	n, err := strconv.Atoi(expr)
	if err != nil {
		return 0, fmt.Errorf("failed to parse int from %s: %s", expr, err)
	}
	if n < 0 {
		return 0, fmt.Errorf("negative number (%d) not allowed: %s", n, expr)
	}
	return uint(n), nil
}
