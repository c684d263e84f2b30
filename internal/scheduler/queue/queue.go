// Package queue is the scheduling queue: pods waiting to be scheduled, in
// priority order, with the two waiting rooms upstream has — a backoff
// queue for pods that failed recently (1 s doubling to 10 s) and an
// unschedulable set for pods that fit nowhere, which are moved back only
// when the cluster changes in a way that could help (a node is added or
// changed, a pod is deleted). Nothing is retried in a busy loop.
package queue

import (
	"context"
	"errors"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
)

// ErrClosed is returned by Pop once the queue is closed.
var ErrClosed = errors.New("scheduling queue: closed")

type location int

const (
	nowhere location = iota
	inActive
	inBackoff
	inUnschedulable
	inFlight
)

// QueuedPod is a pod in the queue with its scheduling history.
type QueuedPod struct {
	Pod *v1.Pod
	// Attempts counts scheduling attempts (Pop increments it).
	Attempts int
	// Added is when the pod first entered the queue (for latency metrics).
	Added time.Time

	where         location
	index         int
	backoffExpiry time.Time
	unschedSince  time.Time
	deleted       bool
	cycle         int64
}

// Options tune the queue; zero values select upstream's defaults.
type Options struct {
	InitialBackoff, MaxBackoff time.Duration
	// MaxInUnschedulable is how long a pod may wait for a cluster event
	// before it is retried anyway (upstream: 5 minutes).
	MaxInUnschedulable time.Duration
	Now                func() time.Time
}

// Queue is safe for concurrent use.
type Queue struct {
	opts Options

	mu    sync.Mutex
	cond  *sync.Cond
	pods  map[types.UID]*QueuedPod
	act   *podHeap
	back  *podHeap
	unsch map[types.UID]*QueuedPod
	// cycle counts Pops; moveCycle is the cycle of the last move request.
	// A pod that fails in a cycle during which the cluster changed goes to
	// backoff rather than waiting for another change that may never come.
	cycle, moveCycle int64
	closed           bool
}

// New returns an empty queue.
func New(opts Options) *Queue {
	if opts.InitialBackoff == 0 {
		opts.InitialBackoff = time.Second
	}
	if opts.MaxBackoff == 0 {
		opts.MaxBackoff = 10 * time.Second
	}
	if opts.MaxInUnschedulable == 0 {
		opts.MaxInUnschedulable = 5 * time.Minute
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	q := &Queue{
		opts:  opts,
		pods:  map[types.UID]*QueuedPod{},
		act:   &podHeap{less: activeLess, which: inActive},
		back:  &podHeap{less: func(a, b *QueuedPod) bool { return a.backoffExpiry.Before(b.backoffExpiry) }, which: inBackoff},
		unsch: map[types.UID]*QueuedPod{},
	}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// activeLess orders by priority (higher first), then by age (older first).
func activeLess(a, b *QueuedPod) bool {
	pa, pb := corev1helpers.PodPriority(a.Pod), corev1helpers.PodPriority(b.Pod)
	if pa != pb {
		return pa > pb
	}
	ta, tb := a.Pod.CreationTimestamp.Time, b.Pod.CreationTimestamp.Time
	if !ta.Equal(tb) {
		return ta.Before(tb)
	}
	return a.Added.Before(b.Added)
}

// Add enqueues a new pending pod, or updates one already known: an update
// to a pod waiting as unschedulable may make it fit, so it is retried.
func (q *Queue) Add(pod *v1.Pod) {
	q.mu.Lock()
	defer q.mu.Unlock()
	qp, ok := q.pods[pod.UID]
	if !ok {
		qp = &QueuedPod{Pod: pod, Added: q.opts.Now(), index: -1}
		q.pods[pod.UID] = qp
		q.act.add(qp)
		q.cond.Broadcast()
		return
	}
	qp.Pod = pod
	switch qp.where {
	case inActive:
		q.act.fix(qp)
	case inUnschedulable:
		delete(q.unsch, pod.UID)
		q.requeueLocked(qp)
	}
}

// Delete forgets a pod (deleted, or bound by someone else).
func (q *Queue) Delete(uid types.UID) {
	q.mu.Lock()
	defer q.mu.Unlock()
	qp, ok := q.pods[uid]
	if !ok {
		return
	}
	q.removeLocked(qp)
	qp.deleted = true
	delete(q.pods, uid)
}

func (q *Queue) removeLocked(qp *QueuedPod) {
	switch qp.where {
	case inActive:
		q.act.remove(qp)
	case inBackoff:
		q.back.remove(qp)
	case inUnschedulable:
		delete(q.unsch, qp.Pod.UID)
		qp.where = nowhere
	}
}

// Pop blocks until a pod is active and hands it out; the pod is "in
// flight" until Done, AddUnschedulable or AddBackoff is called for it.
func (q *Queue) Pop(ctx context.Context) (*QueuedPod, error) {
	stop := context.AfterFunc(ctx, func() {
		q.mu.Lock()
		defer q.mu.Unlock()
		q.cond.Broadcast()
	})
	defer stop()
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.act.Len() == 0 {
		if q.closed {
			return nil, ErrClosed
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		q.cond.Wait()
	}
	qp := q.act.pop()
	qp.where = inFlight
	qp.Attempts++
	q.cycle++
	qp.cycle = q.cycle
	return qp, nil
}

// Done drops a pod that was scheduled (its binding is the cache's concern).
func (q *Queue) Done(qp *QueuedPod) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if cur, ok := q.pods[qp.Pod.UID]; ok && cur == qp {
		delete(q.pods, qp.Pod.UID)
	}
}

// AddUnschedulable parks a pod that fit nowhere until the cluster changes
// (or, if it already changed during the attempt, puts it in backoff).
func (q *Queue) AddUnschedulable(qp *QueuedPod) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if qp.deleted || q.pods[qp.Pod.UID] != qp {
		return
	}
	if q.moveCycle >= qp.cycle {
		q.backoffLocked(qp)
		return
	}
	qp.where = inUnschedulable
	qp.unschedSince = q.opts.Now()
	q.unsch[qp.Pod.UID] = qp
}

// AddBackoff retries a pod after its backoff (errors, failed binds).
func (q *Queue) AddBackoff(qp *QueuedPod) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if qp.deleted {
		return
	}
	if _, ok := q.pods[qp.Pod.UID]; !ok {
		q.pods[qp.Pod.UID] = qp
	}
	q.backoffLocked(qp)
}

func (q *Queue) backoffLocked(qp *QueuedPod) {
	qp.backoffExpiry = q.opts.Now().Add(q.backoff(qp.Attempts))
	q.back.add(qp)
}

// backoff is InitialBackoff doubled per earlier attempt, capped.
func (q *Queue) backoff(attempts int) time.Duration {
	d := q.opts.InitialBackoff
	for i := 1; i < attempts && d < q.opts.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, q.opts.MaxBackoff)
}

// requeueLocked moves a pod to backoff if it is still backing off, or to
// the active queue.
func (q *Queue) requeueLocked(qp *QueuedPod) {
	expiry := qp.unschedSince
	if qp.Attempts > 0 {
		expiry = qp.unschedSince.Add(q.backoff(qp.Attempts))
	}
	if q.opts.Now().Before(expiry) {
		qp.backoffExpiry = expiry
		q.back.add(qp)
		return
	}
	q.act.add(qp)
	q.cond.Broadcast()
}

// MoveAllUnschedulable is called on cluster events that could make parked
// pods fit (node added or changed, pod deleted).
func (q *Queue) MoveAllUnschedulable() {
	q.mu.Lock()
	defer q.mu.Unlock()
	for uid, qp := range q.unsch {
		delete(q.unsch, uid)
		q.requeueLocked(qp)
	}
	q.moveCycle = q.cycle
}

// Flush moves pods whose backoff expired to the active queue, and pods
// parked longer than MaxInUnschedulable back for another try.
func (q *Queue) Flush() {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.opts.Now()
	for {
		qp := q.back.peek()
		if qp == nil || qp.backoffExpiry.After(now) {
			break
		}
		q.back.pop()
		q.act.add(qp)
		q.cond.Broadcast()
	}
	for uid, qp := range q.unsch {
		if now.Sub(qp.unschedSince) > q.opts.MaxInUnschedulable {
			delete(q.unsch, uid)
			q.requeueLocked(qp)
		}
	}
}

// Run flushes the waiting rooms every interval until ctx ends, then
// closes the queue.
func (q *Queue) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			q.Close()
			return
		case <-t.C:
			q.Flush()
		}
	}
}

// Close wakes Pop callers with ErrClosed.
func (q *Queue) Close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.cond.Broadcast()
}

// Len returns the number of pods in active, backoff and unschedulable.
func (q *Queue) Len() (active, backoff, unschedulable int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.act.Len(), q.back.Len(), len(q.unsch)
}
