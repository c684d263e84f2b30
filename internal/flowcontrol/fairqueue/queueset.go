package fairqueue

import (
	"math"
	"slices"
	"time"
)

// EstimatedServiceTime is what every request is charged when it starts,
// before its real service time is known (upstream's G).
const EstimatedServiceTime = 3 * time.Millisecond

// Reason tells why a request was refused; the values are upstream's
// reason labels.
type Reason string

// The reasons a request does not run.
const (
	// QueueFull: every seat was taken and the request's queue was full.
	QueueFull Reason = "queue-full"
	// ConcurrencyLimit: a level without queues had no seat free.
	ConcurrencyLimit Reason = "concurrency-limit"
	// TimeOut: the request waited until its caller gave up (Cancel).
	TimeOut Reason = "time-out"
)

// Config is how a priority level limits its requests.
type Config struct {
	// Exempt levels start every request at once and never refuse one.
	Exempt bool
	// Queues is the number of queues; 0 means the level does not queue and
	// refuses what finds its seats taken.
	Queues int
	// HandSize is how many queues a flow's hash deals it (at least 1 and
	// at most Queues when Queues is positive).
	HandSize int
	// QueueLengthLimit is how many requests a queue holds while every
	// seat is taken.
	QueueLengthLimit int
	// ConcurrencyLimit is the number of seats the level's running
	// requests may occupy together.
	ConcurrencyLimit int
}

type state int

const (
	fresh state = iota
	waiting
	executing
	finished
	cancelled
)

// Request is one request in a QueueSet. The caller sets Item, Seats and
// Hash before Arrive and must not change them afterwards.
type Request[T any] struct {
	// Item is the caller's handle on the request.
	Item T
	// Seats is how many seats the request occupies while it runs (its
	// width); at least 1.
	Seats int
	// Hash identifies the request's flow and picks its hand of queues.
	Hash uint64

	state    state
	queue    *queue[T]
	arrivalR float64
	started  time.Time
}

// Executing reports whether the request has started and not finished.
func (r *Request[T]) Executing() bool { return r.state == executing }

// Waiting reports whether the request is in a queue.
func (r *Request[T]) Waiting() bool { return r.state == waiting }

// work is what the request is charged when it starts, in seat-seconds.
func (r *Request[T]) work() float64 { return float64(r.Seats) * EstimatedServiceTime.Seconds() }

// queue is a FIFO of waiting requests and the accounting of its running
// ones.
type queue[T any] struct {
	waiting []*Request[T]
	// workWaiting is the work of the waiting requests, by which shuffle
	// sharding picks the least loaded queue of a hand.
	workWaiting  float64
	seatsWaiting int
	executing    int
	seatsInUse   int
	// nextDispatchR is the virtual time at which the queue's next request
	// starts, in seat-seconds.
	nextDispatchR float64
}

func (q *queue[T]) empty() bool { return len(q.waiting) == 0 && q.executing == 0 }

// QueueSet is the queues and running requests of one priority level. It
// is not safe for concurrent use.
type QueueSet[T any] struct {
	cfg    Config
	queues []*queue[T]

	// currentR is virtual time, in seat-seconds, as of lastTime.
	currentR float64
	lastTime time.Time
	// robin is the queue last dispatched from; the search for the next
	// starts after it, so ties go round robin.
	robin int
	// enqueues rotates where in a hand the search for the least loaded
	// queue starts, so equal queues share the load.
	enqueues int

	waiting, executing       int
	seatsWaiting, seatsInUse int
	hand                     []int
}

// Stats is a snapshot of a QueueSet's counts.
type Stats struct {
	Waiting, Executing       int
	SeatsWaiting, SeatsInUse int
}

// New returns an empty QueueSet; now starts its virtual clock.
func New[T any](cfg Config, now time.Time) *QueueSet[T] {
	qs := &QueueSet[T]{lastTime: now}
	qs.Reconfigure(now, cfg)
	return qs
}

// Config returns the set's configuration.
func (qs *QueueSet[T]) Config() Config { return qs.cfg }

// Stats returns the set's counts.
func (qs *QueueSet[T]) Stats() Stats {
	return Stats{Waiting: qs.waiting, Executing: qs.executing, SeatsWaiting: qs.seatsWaiting, SeatsInUse: qs.seatsInUse}
}

// Idle reports whether nothing waits or runs.
func (qs *QueueSet[T]) Idle() bool { return qs.waiting == 0 && qs.executing == 0 }

// Reconfigure changes the limits; requests already waiting stay where
// they are (queues beyond a smaller count go once they empty) and those
// that now fit are started and returned.
func (qs *QueueSet[T]) Reconfigure(now time.Time, cfg Config) []*Request[T] {
	qs.advance(now)
	for len(qs.queues) < cfg.Queues {
		qs.queues = append(qs.queues, &queue[T]{})
	}
	qs.cfg = cfg
	qs.trimSurplus()
	return qs.dispatchAll(now)
}

// Arrive admits r. It returns the requests that start now (r among them
// when it runs at once), or the reason r is refused.
func (qs *QueueSet[T]) Arrive(now time.Time, r *Request[T]) (started []*Request[T], refused Reason) {
	if r.state != fresh {
		panic("fairqueue: request arrived twice")
	}
	if r.Seats < 1 {
		r.Seats = 1
	}
	qs.advance(now)
	if qs.cfg.Exempt || qs.cfg.Queues == 0 {
		if !qs.fits(r.Seats) {
			return nil, ConcurrencyLimit
		}
		qs.start(now, r)
		return []*Request[T]{r}, ""
	}
	q := qs.queues[qs.pickQueue(r.Hash)]
	if qs.seatsInUse >= qs.cfg.ConcurrencyLimit && len(q.waiting) >= qs.cfg.QueueLengthLimit {
		return nil, QueueFull
	}
	if q.empty() {
		// An idle queue starts afresh at the current virtual time, so a
		// flow gets no credit for the time it sent nothing.
		q.nextDispatchR = qs.currentR
	}
	r.queue, r.state, r.arrivalR = q, waiting, qs.currentR
	q.waiting = append(q.waiting, r)
	q.workWaiting += r.work()
	q.seatsWaiting += r.Seats
	qs.waiting++
	qs.seatsWaiting += r.Seats
	qs.boundNextDispatch(q)
	return qs.dispatchAll(now), ""
}

// Cancel takes r out of its queue when its caller stops waiting. It
// reports whether r was waiting; if it had already started, the caller
// must run it (and Finish it) after all. Other requests may start.
func (qs *QueueSet[T]) Cancel(now time.Time, r *Request[T]) (removed bool, started []*Request[T]) {
	if r.state != waiting {
		return false, nil
	}
	qs.advance(now)
	q := r.queue
	i := slices.Index(q.waiting, r)
	q.waiting = slices.Delete(q.waiting, i, i+1)
	q.workWaiting -= r.work()
	q.seatsWaiting -= r.Seats
	qs.waiting--
	qs.seatsWaiting -= r.Seats
	r.state = cancelled
	qs.boundNextDispatch(q)
	// A wide request at the head may have been holding back narrower ones.
	return true, qs.dispatchAll(now)
}

// Finish ends a started request and returns those that start in its
// place. Its queue is charged what it really used: the difference
// between its real service time and the estimate it was charged.
func (qs *QueueSet[T]) Finish(now time.Time, r *Request[T]) []*Request[T] {
	if r.state != executing {
		panic("fairqueue: finishing a request that is not running")
	}
	qs.advance(now)
	r.state = finished
	qs.executing--
	qs.seatsInUse -= r.Seats
	if q := r.queue; q != nil {
		q.executing--
		q.seatsInUse -= r.Seats
		q.nextDispatchR += float64(r.Seats) * (now.Sub(r.started) - EstimatedServiceTime).Seconds()
		qs.boundNextDispatch(q)
		qs.dropIfSurplus(q)
	}
	return qs.dispatchAll(now)
}

// fits reports whether a request of so many seats may start now. One
// wider than the whole limit runs alone, so it is not refused forever.
func (qs *QueueSet[T]) fits(seats int) bool {
	switch {
	case qs.cfg.Exempt:
		return true
	case seats > qs.cfg.ConcurrencyLimit:
		return qs.executing == 0
	}
	return qs.seatsInUse+seats <= qs.cfg.ConcurrencyLimit
}

func (qs *QueueSet[T]) start(now time.Time, r *Request[T]) {
	r.state, r.started = executing, now
	qs.executing++
	qs.seatsInUse += r.Seats
}

// dispatchAll starts waiting requests while seats are free.
func (qs *QueueSet[T]) dispatchAll(now time.Time) []*Request[T] {
	var started []*Request[T]
	for qs.waiting > 0 && qs.seatsInUse < qs.cfg.ConcurrencyLimit {
		r := qs.dispatchOne(now)
		if r == nil {
			break
		}
		started = append(started, r)
	}
	return started
}

// dispatchOne starts the oldest request of the queue whose next request
// finishes first in virtual time, if its seats fit. When they do not, it
// starts nothing: narrower requests behind do not overtake it, so a wide
// request is not starved.
func (qs *QueueSet[T]) dispatchOne(now time.Time) *Request[T] {
	best, bestIdx := (*queue[T])(nil), 0
	bestFinish := math.Inf(1)
	for range qs.queues {
		qs.robin = (qs.robin + 1) % len(qs.queues)
		q := qs.queues[qs.robin]
		if len(q.waiting) == 0 {
			continue
		}
		if finish := q.nextDispatchR + q.waiting[0].work(); finish < bestFinish {
			best, bestIdx, bestFinish = q, qs.robin, finish
		}
	}
	if best == nil || !qs.fits(best.waiting[0].Seats) {
		return nil
	}
	r := best.waiting[0]
	best.waiting = slices.Delete(best.waiting, 0, 1)
	best.workWaiting -= r.work()
	best.seatsWaiting -= r.Seats
	qs.waiting--
	qs.seatsWaiting -= r.Seats
	qs.start(now, r)
	best.executing++
	best.seatsInUse += r.Seats
	best.nextDispatchR += r.work()
	qs.robin = bestIdx
	qs.boundNextDispatch(best)
	return r
}

// boundNextDispatch keeps a queue's next virtual start from lagging
// behind the arrival of its oldest request: time the queue spent with
// nothing to send earns it nothing.
func (qs *QueueSet[T]) boundNextDispatch(q *queue[T]) {
	if len(q.waiting) > 0 && q.nextDispatchR < q.waiting[0].arrivalR {
		q.nextDispatchR = q.waiting[0].arrivalR
	}
}

// dropIfSurplus removes an emptied queue beyond a reduced queue count,
// and any empty ones left at the end.
func (qs *QueueSet[T]) dropIfSurplus(q *queue[T]) {
	if len(qs.queues) > qs.cfg.Queues && q.empty() {
		i := slices.Index(qs.queues, q)
		qs.queues = slices.Delete(qs.queues, i, i+1)
		if qs.robin >= i && qs.robin > 0 {
			qs.robin--
		}
	}
	qs.trimSurplus()
}

// trimSurplus removes empty queues from the end beyond the queue count;
// the queues a hand is dealt from keep their places.
func (qs *QueueSet[T]) trimSurplus() {
	for n := len(qs.queues); n > qs.cfg.Queues && qs.queues[n-1].empty(); n-- {
		qs.queues = qs.queues[:n-1]
	}
	if qs.robin >= len(qs.queues) {
		qs.robin = 0
	}
}

// pickQueue deals the flow its hand and picks the queue with the least
// waiting work, starting the search at a rotating offset.
func (qs *QueueSet[T]) pickQueue(hash uint64) int {
	qs.hand = deal(hash, qs.cfg.Queues, qs.cfg.HandSize, qs.hand)
	offset := qs.enqueues % len(qs.hand)
	qs.enqueues++
	best, least := qs.hand[offset], math.Inf(1)
	for i := range qs.hand {
		idx := qs.hand[(offset+i)%len(qs.hand)]
		if w := qs.queues[idx].workWaiting; w < least {
			best, least = idx, w
		}
	}
	return best
}

// rebaseAt bounds virtual time: past it, every virtual time is moved back
// together, so float64 arithmetic keeps its precision however long the
// server runs.
const rebaseAt = 1 << 30

// advance moves virtual time to now at the rate the busy queues share:
// the seats in use or wanted (at most the limit) over the number of queues
// with requests.
func (qs *QueueSet[T]) advance(now time.Time) {
	dt := now.Sub(qs.lastTime).Seconds()
	if dt <= 0 {
		return
	}
	qs.lastTime = now
	active, wanted := 0, 0
	for _, q := range qs.queues {
		if !q.empty() {
			active++
			wanted += q.seatsInUse + q.seatsWaiting
		}
	}
	if active == 0 {
		return
	}
	qs.currentR += dt * math.Min(float64(wanted), float64(qs.cfg.ConcurrencyLimit)) / float64(active)
	if qs.currentR < rebaseAt {
		return
	}
	const shift = rebaseAt / 2
	qs.currentR -= shift
	for _, q := range qs.queues {
		q.nextDispatchR -= shift
		for _, r := range q.waiting {
			r.arrivalR -= shift
		}
	}
}
