package flowcontrol

import "testing"

func TestRetryAfter(t *testing.T) {
	r := newRetryAfter()
	if got := r.get("l"); got != 1 {
		t.Fatalf("unknown level: %d", got)
	}
	// drops[s] refusals in second s, then the value after that second's
	// first refusal is known.
	steps := []struct {
		second, drops int64
		want          int64
	}{
		{0, 5, 1},
		{1, 10, 2},  // second 0 refused 5 ≥ 3×1: doubled
		{2, 10, 2},  // raised a second ago: not yet again
		{3, 10, 4},  // 20 in the last two seconds ≥ 3×2
		{4, 30, 4},  // raised a second ago
		{7, 1, 8},   // 40 in the last four seconds ≥ 3×4
		{20, 1, 7},  // quiet for a while: one step down
		{21, 1, 6},  // and another
		{22, 30, 5}, // one refusal a second is calm
	}
	for _, s := range steps {
		for range s.drops {
			r.record("l", s.second)
		}
		if got := r.get("l"); got != s.want {
			t.Fatalf("after second %d: Retry-After %d, want %d", s.second, got, s.want)
		}
	}
	if r.get("other") != 1 {
		t.Error("levels share their history")
	}
}
