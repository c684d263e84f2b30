package observe

import "testing"

func TestParseLoadavgTasks(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"0.00 0.01 0.05 1/123 4567\n", 123},
		{"1.20 0.90 0.70 12/48213 99\n", 48213},
		{"garbage", 0},
	} {
		if got := ParseLoadavgTasks(tc.in); got != tc.want {
			t.Errorf("%q: %d, want %d", tc.in, got, tc.want)
		}
	}
}
