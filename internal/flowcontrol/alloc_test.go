package flowcontrol

import (
	"math"
	"testing"
	"time"
)

func TestAllocate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		total  float64
		shares []share
		want   []float64
		err    bool
	}{
		{"in proportion to targets", 10, []share{{target: 1, upper: 100}, {target: 4, upper: 100}}, []float64{2, 8}, false},
		{"a lower bound holds", 4, []share{{target: 3, lower: 3, upper: 100}, {target: 9, upper: 100}}, []float64{3, 1}, false},
		{"an upper bound holds", 10, []share{{target: 5, upper: 2}, {target: 5, upper: 100}}, []float64{2, 8}, false},
		{"no demand at all", 10, []share{{upper: 100}, {upper: 100}}, []float64{5, 5}, false},
		{"bounds at their sum", 6, []share{{target: 1, lower: 1, upper: 2}, {target: 9, lower: 2, upper: 4}}, []float64{2, 4}, false},
		{"lower bounds too high", 2, []share{{target: 3, lower: 3, upper: 4}}, nil, true},
		{"upper bounds too low", 9, []share{{target: 3, lower: 3, upper: 4}}, nil, true},
	} {
		got, err := allocate(tc.total, tc.shares)
		if (err != nil) != tc.err {
			t.Errorf("%s: error %v", tc.name, err)
			continue
		}
		for i := range tc.want {
			if math.Abs(got[i]-tc.want[i]) > 1e-6 {
				t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
				break
			}
		}
	}
}

func TestAdjust(t *testing.T) {
	levels := func(busyHWM int, busySmoothed float64, exemptHWM int) []borrowingLevel {
		return []borrowingLevel{
			{exempt: true, maxCL: 100, highWatermark: exemptHWM},
			{nominalCL: 40, minCL: 20, maxCL: 140, highWatermark: busyHWM, smoothed: busySmoothed, currentCL: 30},
			{nominalCL: 60, minCL: 30, maxCL: 160, currentCL: 45},
		}
	}
	for _, tc := range []struct {
		name string
		in   []borrowingLevel
		want []int
	}{
		// Nobody uses anything: each is weighted by its minimum, so the
		// seats split 40/60 again.
		{"idle", levels(0, 0, 0), []int{0, 40, 60}},
		// The busy level borrows what the idle one may lend.
		{"one busy level", levels(40, 200, 0), []int{0, 70, 30}},
		// The exempt level used 80 of the 100 seats: the others fall to
		// their minimums.
		{"exempt takes the rest", levels(40, 200, 80), []int{80, 20, 30}},
		// Exempt used 40: the others get their minimums and half of what
		// their demand adds to them.
		{"exempt squeezes", levels(40, 200, 40), []int{40, 30, 30}},
	} {
		if got := adjust(100, tc.in); !equalInts(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestDemand(t *testing.T) {
	t0 := time.Unix(0, 0)
	d := newDemand(t0)
	d.set(t0, 10)
	d.set(t0.Add(time.Second), 0) // 10 seats for a second, then none for a second
	d.period(t0.Add(2 * time.Second))
	if d.highWatermark != 10 {
		t.Errorf("high watermark %d, want 10", d.highWatermark)
	}
	// Mean 5, deviation 5: the smoothed demand jumps to 10 at once.
	if math.Abs(d.smoothed-10) > 1e-9 {
		t.Errorf("smoothed %v, want 10", d.smoothed)
	}
	// A quiet period only lets it decay.
	d.period(t0.Add(12 * time.Second))
	if want := 0.977 * 10; math.Abs(d.smoothed-want) > 1e-9 || d.highWatermark != 0 {
		t.Errorf("after a quiet period: smoothed %v (want %v), high watermark %d", d.smoothed, want, d.highWatermark)
	}
}
