package imagegc

import (
	"reflect"
	"testing"
	"time"
)

func TestToFree(t *testing.T) {
	p := DefaultPolicy()
	for _, tc := range []struct {
		capacity, available, want int64
	}{
		{1000, 200, 0},   // 80% used: under the high threshold
		{1000, 161, 0},   // 83.9% (upstream rounds usage up: 84.9% is 85)
		{1000, 150, 50},  // 85%: down to 80% used, 200 available
		{1000, 100, 100}, // 90%
		{0, 0, 0},
	} {
		if got := p.ToFree(tc.capacity, tc.available); got != tc.want {
			t.Errorf("capacity %d available %d: free %d, want %d", tc.capacity, tc.available, got, tc.want)
		}
	}
}

func TestChoose(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	images := []Image{
		{ID: "recent-use", Size: 10, FirstDetected: ago(time.Hour), LastUsed: ago(time.Minute)},
		{ID: "old-use", Size: 20, FirstDetected: ago(time.Hour), LastUsed: ago(30 * time.Minute)},
		{ID: "never-used", Size: 40, FirstDetected: ago(time.Hour)},
		{ID: "young", Size: 80, FirstDetected: ago(time.Minute)},
		{ID: "pinned", Size: 160, FirstDetected: ago(time.Hour), Pinned: true},
		{ID: "pause", Size: 320, FirstDetected: ago(time.Hour)},
		{ID: "running", Size: 640, FirstDetected: ago(time.Hour)},
		{ID: "at-start", Size: 5},
	}
	inUse := map[string]bool{"running": true}
	for _, tc := range []struct {
		name  string
		want  int64
		ids   []string
		freed int64
	}{
		{"least recently used first, images from before the start first of all", 1, []string{"at-start"}, 5},
		{"stops once enough is freed", 50, []string{"at-start", "never-used", "old-use"}, 65},
		{"everything eligible", 1 << 62, []string{"at-start", "never-used", "old-use", "recent-use"}, 75},
		{"nothing wanted", 0, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			chosen, freed := Choose(images, inUse, "pause", 2*time.Minute, now, tc.want)
			var ids []string
			for _, c := range chosen {
				ids = append(ids, c.ID)
			}
			if !reflect.DeepEqual(ids, tc.ids) || freed != tc.freed {
				t.Errorf("chose %v (%d bytes), want %v (%d)", ids, freed, tc.ids, tc.freed)
			}
		})
	}
}
