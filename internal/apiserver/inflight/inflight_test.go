package inflight

import (
	"sync"
	"testing"
)

func TestKinds(t *testing.T) {
	for verb, want := range map[string]Kind{
		"get": ReadOnly, "list": ReadOnly, "watch": ReadOnly,
		"create": Mutating, "update": Mutating, "patch": Mutating, "delete": Mutating, "deletecollection": Mutating,
		// Requests that are not for resources carry their method.
		"post": Mutating, "head": Mutating,
	} {
		if got := KindOf(verb); got != want {
			t.Errorf("%s: %v, want %v", verb, got, want)
		}
	}
	if ReadOnly.String() != "readOnly" || Mutating.String() != "mutating" {
		t.Error("labels differ from upstream's")
	}
}

func TestLimitsAreSeparatePerKind(t *testing.T) {
	l := New(1, 2)
	if !l.Acquire(Mutating) || !l.Acquire(Mutating) {
		t.Fatal("mutating slots not granted")
	}
	if l.Acquire(Mutating) {
		t.Fatal("a third mutating request got a slot of two")
	}
	// Reads have slots of their own.
	if !l.Acquire(ReadOnly) {
		t.Fatal("read refused while only writes are full")
	}
	if l.Acquire(ReadOnly) {
		t.Fatal("second read got the only read slot")
	}
	l.Release(Mutating)
	if !l.Acquire(Mutating) {
		t.Fatal("a released slot was not reusable")
	}
}

func TestZeroDisablesAKind(t *testing.T) {
	l := New(0, 1)
	if l.Limited(ReadOnly) || !l.Limited(Mutating) {
		t.Fatal("Limited")
	}
	for i := 0; i < 1000; i++ {
		if !l.Acquire(ReadOnly) {
			t.Fatal("unlimited kind refused")
		}
	}
	l.Release(ReadOnly) // harmless without slots
	if ro, _ := l.TakeWatermarks(); ro != 0 {
		t.Errorf("unlimited kind has a watermark: %d", ro)
	}
}

func TestWatermarks(t *testing.T) {
	l := New(10, 10)
	for i := 0; i < 3; i++ {
		l.Acquire(Mutating)
	}
	l.Release(Mutating)
	l.Release(Mutating)
	l.Acquire(ReadOnly)
	l.Release(ReadOnly)
	if ro, mu := l.TakeWatermarks(); ro != 1 || mu != 3 {
		t.Errorf("watermarks = %d, %d; want 1, 3", ro, mu)
	}
	// One mutating request is still running: the next period starts there.
	if ro, mu := l.TakeWatermarks(); ro != 0 || mu != 1 {
		t.Errorf("next period = %d, %d; want 0, 1", ro, mu)
	}
}

func TestConcurrentUseNeverExceedsTheLimit(t *testing.T) {
	const limit = 4
	l := New(limit, limit)
	var (
		mu      sync.Mutex
		running int
		wg      sync.WaitGroup
	)
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				if !l.Acquire(Mutating) {
					continue
				}
				mu.Lock()
				running++
				if running > limit {
					t.Errorf("%d running with %d slots", running, limit)
				}
				mu.Unlock()
				mu.Lock()
				running--
				mu.Unlock()
				l.Release(Mutating)
			}
		}()
	}
	wg.Wait()
	if _, mu := l.TakeWatermarks(); mu > limit || mu == 0 {
		t.Errorf("watermark %d", mu)
	}
}

func TestWatermarkCountsWithoutLimits(t *testing.T) {
	var w Watermark
	w.Add(ReadOnly, 1)
	w.Add(ReadOnly, 1)
	w.Add(ReadOnly, -1)
	w.Add(Mutating, 1)
	w.Add(Mutating, -1)
	if ro, mu := w.Take(); ro != 2 || mu != 1 {
		t.Errorf("watermarks = %d, %d; want 2, 1", ro, mu)
	}
	if ro, mu := w.Take(); ro != 1 || mu != 0 {
		t.Errorf("next period = %d, %d; want 1, 0", ro, mu)
	}
}
