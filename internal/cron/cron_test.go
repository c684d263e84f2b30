package cron

import (
	"testing"
	"time"
)

func TestParseAndNext(t *testing.T) {
	utc := time.UTC
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	at := func(mo time.Month, d, h, mi int) time.Time { return time.Date(2026, mo, d, h, mi, 0, 0, utc) }
	for _, tc := range []struct {
		spec string
		loc  *time.Location
		from time.Time
		// want is the next activation after from; the zero time when
		// there is none within five years.
		want time.Time
		// err, when set, is the exact error Parse returns.
		err string
	}{
		{spec: "* * * * *", from: at(1, 1, 10, 0), want: at(1, 1, 10, 1)},
		{spec: "* * * * *", from: time.Date(2026, 1, 1, 10, 0, 30, 5, utc), want: at(1, 1, 10, 1)},
		{spec: "*/15 * * * *", from: at(1, 1, 10, 16), want: at(1, 1, 10, 30)},
		{spec: "5/10 * * * *", from: at(1, 1, 10, 6), want: at(1, 1, 10, 15)},
		{spec: "0 9-17/4 * * mon-fri", from: at(1, 2, 18, 0), want: at(1, 5, 9, 0)}, // Friday evening to Monday
		{spec: "*/15 0-6,18 1 jan-mar MON-fri", from: at(1, 1, 7, 0), want: at(1, 1, 18, 0)},
		{spec: "30 2 * * *", from: at(1, 1, 3, 0), want: at(1, 2, 2, 30)},
		{spec: "0 0 29 2 *", from: at(3, 1, 0, 0), want: time.Date(2028, 2, 29, 0, 0, 0, 0, utc)},
		// Day of month OR day of week when both are restricted (a step
		// above 1 counts as restricted)...
		{spec: "0 0 13 * 5", from: at(1, 1, 0, 0), want: at(1, 2, 0, 0)},
		{spec: "0 0 */2 * 1", from: at(1, 1, 0, 0), want: at(1, 3, 0, 0)},
		// ...AND when one is a star or '?'.
		{spec: "0 0 * * 5", from: at(1, 1, 0, 0), want: at(1, 2, 0, 0)},
		{spec: "0 0 ? * sun", from: at(1, 1, 0, 0), want: at(1, 4, 0, 0)},
		{spec: "0 0 31 2 *", from: at(1, 1, 0, 0), want: time.Time{}},
		{spec: "@hourly", from: time.Date(2026, 1, 1, 10, 59, 59, 0, utc), want: at(1, 1, 11, 0)},
		{spec: "@daily", from: at(1, 1, 10, 0), want: at(1, 2, 0, 0)},
		{spec: "@midnight", from: at(1, 1, 0, 0), want: at(1, 2, 0, 0)},
		{spec: "@weekly", from: at(1, 1, 0, 0), want: at(1, 4, 0, 0)},
		{spec: "@monthly", from: at(1, 15, 0, 0), want: at(2, 1, 0, 0)},
		{spec: "@yearly", from: at(1, 15, 0, 0), want: time.Date(2027, 1, 1, 0, 0, 0, 0, utc)},
		{spec: "@annually", from: at(1, 1, 0, 0), want: time.Date(2027, 1, 1, 0, 0, 0, 0, utc)},
		{spec: "@every 90m", from: at(1, 1, 10, 0), want: at(1, 1, 11, 30)},
		{spec: "@every 1h30m", from: time.Date(2026, 1, 1, 10, 0, 0, 500, utc), want: at(1, 1, 11, 30)},
		// In a zone: 9:00 New York is 14:00 UTC in winter, 13:00 in summer.
		{spec: "0 9 * * *", loc: ny, from: at(1, 1, 15, 0), want: at(1, 2, 14, 0)},
		{spec: "0 9 * * *", loc: ny, from: at(7, 1, 15, 0), want: at(7, 2, 13, 0)},
		{spec: "TZ=America/New_York 0 9 * * *", from: at(7, 1, 15, 0), want: at(7, 2, 13, 0)},
		{spec: "CRON_TZ=America/New_York 0 9 * * *", loc: utc, from: at(7, 1, 15, 0), want: at(7, 2, 13, 0)},
		{spec: "TZ=UTC 0 * * * *", from: at(1, 1, 10, 30), want: at(1, 1, 11, 0)},
		// Spring forward (8 March 2026): 2:30 does not exist that day and is skipped.
		{spec: "30 2 * * *", loc: ny, from: time.Date(2026, 3, 7, 12, 0, 0, 0, ny), want: time.Date(2026, 3, 9, 2, 30, 0, 0, ny)},
		// Fall back (1 November 2026): 1:30 happens twice and, as with
		// upstream's parser, runs at both.
		{spec: "30 1 * * *", loc: ny, from: at(11, 1, 5, 30), want: at(11, 1, 6, 30)},
		{spec: "30 1 * * *", loc: ny, from: at(11, 1, 6, 30), want: at(11, 2, 6, 30)},

		{spec: "", err: "empty spec string"},
		{spec: "* * * *", err: "expected exactly 5 fields, found 4: [* * * *]"},
		{spec: "* * * * * *", err: "expected exactly 5 fields, found 6: [* * * * * *]"},
		{spec: "60 * * * *", err: "end of range (60) above maximum (59): 60"},
		{spec: "61 * * * *", err: "end of range (61) above maximum (59): 61"},
		{spec: "* 5-2 * * *", err: "beginning of range (5) beyond end of range (2): 5-2"},
		{spec: "5-2 * * * *", err: "beginning of range (5) beyond end of range (2): 5-2"},
		{spec: "* * 0 * *", err: "beginning of range (0) below minimum (1): 0"},
		{spec: "* * * * 7", err: "end of range (7) above maximum (6): 7"},
		{spec: "*/0 * * * *", err: "step of range should be a positive number: */0"},
		{spec: "*/-1 * * * *", err: "negative number (-1) not allowed: -1"},
		{spec: "1-2-3 * * * *", err: "too many hyphens: 1-2-3"},
		{spec: "*/2/3 * * * *", err: "too many slashes: */2/3"},
		{spec: "x * * * *", err: `failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax`},
		{spec: "* * * foo *", err: `failed to parse int from foo: strconv.Atoi: parsing "foo": invalid syntax`},
		{spec: "@fortnightly", err: "unrecognized descriptor: @fortnightly"},
		{spec: "@every never", err: `failed to parse duration @every never: time: invalid duration "never"`},
		{spec: "@every forever", err: `failed to parse duration @every forever: time: invalid duration "forever"`},
		{spec: "TZ=Nowhere/Xyz * * * * *", err: "provided bad location Nowhere/Xyz: unknown time zone Nowhere/Xyz"},
		{spec: "CRON_TZ=Nowhere/Town * * * * *", err: "provided bad location Nowhere/Town: unknown time zone Nowhere/Town"},
		// A zone and nothing after it.
		{spec: "TZ=UTC", err: "expected exactly 5 fields, found 0: []"},
	} {
		s, err := Parse(tc.spec, tc.loc)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("Parse(%q) = %v, want error %q", tc.spec, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.spec, err)
			continue
		}
		if got := s.Next(tc.from); !got.Equal(tc.want) {
			t.Errorf("%q after %v = %v, want %v", tc.spec, tc.from, got, tc.want)
		}
	}
}
