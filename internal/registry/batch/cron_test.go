package batch

import "testing"

func TestParseCronSchedule(t *testing.T) {
	tests := []struct {
		spec string
		err  string
	}{
		{"* * * * *", ""},
		{"*/15 0-6,18 1 jan-mar MON-fri", ""},
		{"0 0 ? * sun", ""},
		{"5/10 * * * *", ""},
		{"@hourly", ""},
		{"@annually", ""},
		{"@every 1h30m", ""},
		{"TZ=UTC 0 * * * *", ""},
		{"", "empty spec string"},
		{"* * * *", "expected exactly 5 fields, found 4: [* * * *]"},
		{"* * * * * *", "expected exactly 5 fields, found 6: [* * * * * *]"},
		{"61 * * * *", "end of range (61) above maximum (59): 61"},
		{"* 5-2 * * *", "beginning of range (5) beyond end of range (2): 5-2"},
		{"* * 0 * *", "beginning of range (0) below minimum (1): 0"},
		{"* * * * 7", "end of range (7) above maximum (6): 7"},
		{"*/0 * * * *", "step of range should be a positive number: */0"},
		{"1-2-3 * * * *", "too many hyphens: 1-2-3"},
		{"*/2/3 * * * *", "too many slashes: */2/3"},
		{"x * * * *", `failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax`},
		{"* * * foo *", `failed to parse int from foo: strconv.Atoi: parsing "foo": invalid syntax`},
		{"@fortnightly", "unrecognized descriptor: @fortnightly"},
		{"@every never", `failed to parse duration @every never: time: invalid duration "never"`},
		{"CRON_TZ=Nowhere/Town * * * * *", "provided bad location Nowhere/Town: unknown time zone Nowhere/Town"},
	}
	for _, tc := range tests {
		err := parseCronSchedule(tc.spec)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%q: unexpected error %v", tc.spec, err)
		case tc.err != "" && (err == nil || err.Error() != tc.err):
			t.Errorf("%q: got %v, want %q", tc.spec, err, tc.err)
		}
	}
}
