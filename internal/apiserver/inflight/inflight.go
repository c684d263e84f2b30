// Package inflight caps how many requests of each kind an API server runs
// at once, as upstream's max-in-flight filter (--max-requests-inflight,
// --max-mutating-requests-inflight), and keeps the high-water marks that
// upstream's apiserver_current_inflight_requests and
// apiserver_current_inqueue_requests report (Watermark, which API Priority
// and Fairness uses too when it does the limiting). It knows nothing of
// HTTP: the caller decides a request's kind and what to answer when no
// slot is free.
package inflight

import "sync"

// Kind is the class of requests a limit applies to.
type Kind int

const (
	// ReadOnly requests are gets and lists.
	ReadOnly Kind = iota
	// Mutating requests are every other verb.
	Mutating
)

// String returns the kind as upstream's request_kind label has it.
func (k Kind) String() string {
	if k == Mutating {
		return "mutating"
	}
	return "readOnly"
}

// KindOf classifies a Kubernetes verb (or the lower-case method of a
// request that is not for a resource) as upstream does: get, list and
// watch read, anything else mutates.
func KindOf(verb string) Kind {
	switch verb {
	case "get", "list", "watch":
		return ReadOnly
	}
	return Mutating
}

// Limiter holds the slots of both kinds. A kind whose limit is 0 has no
// slots and is never limited.
type Limiter struct {
	slots [2]chan struct{}
	// marks counts the requests holding slots.
	marks Watermark
}

// New returns a limiter with the given number of slots per kind; 0 turns
// a kind's limit off.
func New(readOnly, mutating int) *Limiter {
	l := &Limiter{}
	for k, n := range [2]int{readOnly, mutating} {
		if n > 0 {
			l.slots[k] = make(chan struct{}, n)
		}
	}
	return l
}

// Limited reports whether requests of kind k are limited.
func (l *Limiter) Limited(k Kind) bool { return l.slots[k] != nil }

// Acquire takes a slot for a request of kind k without waiting, and
// reports whether it got one; a caller that did must Release it. An
// unlimited kind always gets one.
func (l *Limiter) Acquire(k Kind) bool {
	c := l.slots[k]
	if c == nil {
		return true
	}
	select {
	case c <- struct{}{}:
		l.marks.Add(k, 1)
		return true
	default:
		return false
	}
}

// Release frees the slot of a request of kind k.
func (l *Limiter) Release(k Kind) {
	c := l.slots[k]
	if c == nil {
		return
	}
	// Counted out before the slot is free: the other way round, a request
	// taking the slot at once is counted in first, and the mark passes
	// the limit.
	l.marks.Add(k, -1)
	<-c
}

// TakeWatermarks returns the most requests of each kind that were in
// flight at once since the previous call (see Watermark.Take).
func (l *Limiter) TakeWatermarks() (readOnly, mutating int) { return l.marks.Take() }

// Watermark counts the requests of each kind in some state (holding a
// slot, executing, waiting in a queue) and the most there were at once.
// The zero value is ready to use.
type Watermark struct {
	mu sync.Mutex
	n  [2]int
	// high is the most requests of each kind since the last Take.
	high [2]int
}

// Add changes the count of kind k by delta.
func (w *Watermark) Add(k Kind, delta int) {
	w.mu.Lock()
	w.n[k] += delta
	if w.n[k] > w.high[k] {
		w.high[k] = w.n[k]
	}
	w.mu.Unlock()
}

// Take returns the most requests of each kind counted at once since the
// previous call. The next period starts from the count now, not from
// zero as upstream's does, so that a few slow requests holding on
// through a quiet second still show.
func (w *Watermark) Take() (readOnly, mutating int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.high
	w.high = w.n
	return out[ReadOnly], out[Mutating]
}
