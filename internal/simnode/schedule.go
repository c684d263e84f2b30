package simnode

import (
	"container/heap"
	"time"
)

// Offset is where in a period the i-th of n nodes does a periodic
// task, so that n nodes spread their lease renewals (or status checks)
// evenly over the period instead of sending them all at once.
func Offset(i, n int, period time.Duration) time.Duration {
	if n <= 0 {
		return 0
	}
	return time.Duration(int64(period) * int64(i%n) / int64(n))
}

// StatusDue says whether a node status is sent: at once when it changed
// in more than heartbeat times, otherwise once report has passed since
// the last one sent (upstream's nodeStatusReportFrequency).
func StatusDue(changed bool, lastSent, now time.Time, report time.Duration) bool {
	return changed || !now.Before(lastSent.Add(report))
}

// HeartbeatWidth is how many lease renewals and status reports may be in
// flight at once. A renewal is a round trip to the API server, so the
// simulator needs as many in flight as a renewal period holds at the
// server's latency: one per 20 nodes (250 for 5,000, enough for 500
// renewals a second at 500 ms each), never fewer than workers, at most
// 512.
func HeartbeatWidth(workers, nodes int) int {
	return min(max(workers, nodes/20), 512)
}

// task is one node's periodic job.
type task struct {
	node int
	kind taskKind
	due  time.Time
}

type taskKind int

const (
	renewLease taskKind = iota
	checkStatus
)

// agenda orders pending tasks by due time; one goroutine serves it for
// every node instead of a timer each.
type agenda []task

func (t agenda) Len() int           { return len(t) }
func (t agenda) Less(i, j int) bool { return t[i].due.Before(t[j].due) }
func (t agenda) Swap(i, j int)      { t[i], t[j] = t[j], t[i] }
func (t *agenda) Push(x any)        { *t = append(*t, x.(task)) }
func (t *agenda) Pop() any {
	old := *t
	x := old[len(old)-1]
	*t = old[:len(old)-1]
	return x
}

// add schedules a task.
func (t *agenda) add(x task) { heap.Push(t, x) }

// due removes and returns the tasks due at now, earliest first.
func (t *agenda) due(now time.Time) []task {
	var out []task
	for t.Len() > 0 && !(*t)[0].due.After(now) {
		out = append(out, heap.Pop(t).(task))
	}
	return out
}

// next is when the earliest task is due; zero when none is pending.
func (t *agenda) next() time.Time {
	if t.Len() == 0 {
		return time.Time{}
	}
	return (*t)[0].due
}
