package queue

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time       { return c.t }
func (c *fakeClock) step(d time.Duration) { c.t = c.t.Add(d) }
func pod(name string, prio int32, age int) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name), CreationTimestamp: metav1.NewTime(time.Unix(int64(1000-age), 0))},
		Spec: v1.PodSpec{Priority: &prio}}
}

func newQueue() (*Queue, *fakeClock) {
	c := &fakeClock{t: time.Unix(10000, 0)}
	return New(Options{Now: c.now}), c
}

func popName(t *testing.T, q *Queue) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	qp, err := q.Pop(ctx)
	if err != nil {
		t.Fatalf("pop: %v", err)
	}
	return qp.Pod.Name
}

func TestPriorityThenAge(t *testing.T) {
	q, _ := newQueue()
	q.Add(pod("low-old", 0, 10))
	q.Add(pod("high-new", 100, 1))
	q.Add(pod("low-new", 0, 1))
	q.Add(pod("high-old", 100, 5))
	for _, want := range []string{"high-old", "high-new", "low-old", "low-new"} {
		if got := popName(t, q); got != want {
			t.Fatalf("popped %s, want %s", got, want)
		}
	}
}

func TestUnschedulableWaitsForAnEventAndBacksOff(t *testing.T) {
	q, clock := newQueue()
	q.Add(pod("p", 0, 1))
	qp, _ := q.Pop(context.Background())
	q.AddUnschedulable(qp)
	if a, b, u := q.Len(); a != 0 || b != 0 || u != 1 {
		t.Fatalf("after failure: active=%d backoff=%d unschedulable=%d", a, b, u)
	}
	clock.step(30 * time.Second)
	q.Flush()
	if _, _, u := q.Len(); u != 1 {
		t.Fatal("retried without a cluster event")
	}
	q.MoveAllUnschedulable() // backoff (1 s) long over: straight to active
	if a, _, _ := q.Len(); a != 1 {
		t.Fatal("event did not move the pod")
	}
	qp, _ = q.Pop(context.Background()) // attempt 2
	q.AddUnschedulable(qp)
	q.MoveAllUnschedulable() // right away: still backing off 2 s
	if a, b, _ := q.Len(); a != 0 || b != 1 {
		t.Fatalf("active=%d backoff=%d, want the pod in backoff", a, b)
	}
	clock.step(1 * time.Second)
	q.Flush()
	if a, _, _ := q.Len(); a != 0 {
		t.Fatal("left backoff after 1 s; want 2 s on the second attempt")
	}
	clock.step(1 * time.Second)
	q.Flush()
	if a, _, _ := q.Len(); a != 1 {
		t.Fatal("still backing off after 2 s")
	}
	clock.step(10 * time.Minute)
	if got := q.backoff(20); got != 10*time.Second {
		t.Errorf("backoff cap = %v", got)
	}
}

func TestEventDuringAttemptSendsToBackoff(t *testing.T) {
	q, _ := newQueue()
	q.Add(pod("p", 0, 1))
	qp, _ := q.Pop(context.Background())
	q.MoveAllUnschedulable() // a node arrived while the pod was being scheduled
	q.AddUnschedulable(qp)
	if _, b, u := q.Len(); b != 1 || u != 0 {
		t.Fatalf("backoff=%d unschedulable=%d, want backoff", b, u)
	}
}

func TestDeleteWhileInFlight(t *testing.T) {
	q, _ := newQueue()
	q.Add(pod("p", 0, 1))
	qp, _ := q.Pop(context.Background())
	q.Delete("p")
	q.AddUnschedulable(qp)
	q.AddBackoff(qp)
	if a, b, u := q.Len(); a+b+u != 0 {
		t.Fatal("deleted pod came back")
	}
}

func TestPopUnblocksOnCancel(t *testing.T) {
	q, _ := newQueue()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	if _, err := q.Pop(ctx); err == nil {
		t.Fatal("pop returned without a pod")
	}
}
