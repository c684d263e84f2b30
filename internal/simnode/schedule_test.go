package simnode

import (
	"testing"
	"time"
)

func TestOffset(t *testing.T) {
	cases := []struct {
		i, n   int
		period time.Duration
		want   time.Duration
	}{
		{0, 5000, 10 * time.Second, 0},
		{1, 5000, 10 * time.Second, 2 * time.Millisecond},
		{2500, 5000, 10 * time.Second, 5 * time.Second},
		{4999, 5000, 10 * time.Second, 9998 * time.Millisecond},
		{3, 4, 10 * time.Second, 7500 * time.Millisecond},
		{0, 0, 10 * time.Second, 0},
	}
	for _, tc := range cases {
		if got := Offset(tc.i, tc.n, tc.period); got != tc.want {
			t.Errorf("Offset(%d, %d, %v) = %v, want %v", tc.i, tc.n, tc.period, got, tc.want)
		}
	}
}

// Spread evenly, 5,000 nodes put at most one renewal in any 2 ms slot.
func TestOffsetSpreadsEvenly(t *testing.T) {
	const n = 5000
	per := map[time.Duration]int{}
	for i := range n {
		per[Offset(i, n, 10*time.Second)/(2*time.Millisecond)]++
	}
	for slot, c := range per {
		if c != 1 {
			t.Fatalf("slot %v holds %d renewals", slot, c)
		}
	}
}

func TestStatusDue(t *testing.T) {
	cases := []struct {
		name    string
		changed bool
		since   time.Duration
		want    bool
	}{
		{"changed is sent at once", true, 10 * time.Second, true},
		{"unchanged waits", false, 4 * time.Minute, false},
		{"unchanged sent after the report period", false, 5 * time.Minute, true},
	}
	for _, tc := range cases {
		if got := StatusDue(tc.changed, t0, t0.Add(tc.since), 5*time.Minute); got != tc.want {
			t.Errorf("%s: got %v", tc.name, got)
		}
	}
}

func TestAgenda(t *testing.T) {
	var a agenda
	a.add(task{node: 2, due: t0.Add(3 * time.Second)})
	a.add(task{node: 0, due: t0.Add(time.Second)})
	a.add(task{node: 1, due: t0.Add(2 * time.Second)})
	if got := a.next(); !got.Equal(t0.Add(time.Second)) {
		t.Fatalf("next = %v", got)
	}
	due := a.due(t0.Add(2 * time.Second))
	if len(due) != 2 || due[0].node != 0 || due[1].node != 1 {
		t.Fatalf("due = %+v, want nodes 0 and 1 in order", due)
	}
	if a.Len() != 1 || !a.next().Equal(t0.Add(3*time.Second)) {
		t.Fatalf("left %d, next %v", a.Len(), a.next())
	}
}

func TestHeartbeatWidth(t *testing.T) {
	cases := []struct{ workers, nodes, want int }{
		{8, 3, 8},
		{8, 100, 8},
		{8, 5000, 250},
		{8, 100000, 512},
		{300, 100, 300},
	}
	for _, tc := range cases {
		if got := HeartbeatWidth(tc.workers, tc.nodes); got != tc.want {
			t.Errorf("HeartbeatWidth(%d, %d) = %d, want %d", tc.workers, tc.nodes, got, tc.want)
		}
	}
}
