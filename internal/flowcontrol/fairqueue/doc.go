// Package fairqueue is fair queuing for server requests, the core of API
// Priority and Fairness: the queues of one priority level, and the choice
// of which waiting request runs next when a seat frees up. It follows
// upstream's queueset (k8s.io/apiserver/pkg/util/flowcontrol/fairqueuing)
// in its rules and its arithmetic.
//
// A QueueSet is pure: it holds no goroutine, lock or clock. Every call
// takes the current time, and every call that can start requests returns
// those it started, so the caller decides how waiting requests are woken
// and serializes the calls. The standard loop:
//
//	qs := fairqueue.New[*call](cfg, now)
//
//	// A request arrives, classified into a flow whose hash picks its queues.
//	r := &fairqueue.Request[*call]{Item: c, Seats: 1, Hash: flowHash}
//	started, rejected := qs.Arrive(now, r)
//	if rejected != "" { answer 429 }
//	for _, s := range started { wake s.Item }   // r among them if it runs at once
//
//	// It waited too long: take it out unless it was started meanwhile.
//	if removed, started := qs.Cancel(now, r); removed { answer 429 } // wake started
//
//	// It has run.
//	for _, s := range qs.Finish(now, r) { wake s.Item }
//
// How requests are ordered. Each queue has a virtual finish time for its
// next request; virtual time R advances at min(seats wanted, limit) divided
// by the number of queues with requests, so that every busy queue gets an
// equal share of the level's seats. A request is charged its seats times
// an estimated service time (3 ms) when it starts, and the difference to
// its real service time when it finishes. The next request to start is
// the oldest of the queue with the earliest virtual finish; ties go round
// robin. A flow (a FlowSchema and its distinguisher, such as the user)
// hashes to a hand of queues (shuffle sharding) and each of its requests
// joins the least loaded queue of its hand, so a busy flow spreads over
// at most a hand of queues while others keep queues of their own.
//
// A request is refused with QueueFull when its queue already holds the
// queue length limit while every seat is taken; a level without queues
// refuses with ConcurrencyLimit as soon as its seats are taken; an
// exempt level starts everything at once.
package fairqueue
