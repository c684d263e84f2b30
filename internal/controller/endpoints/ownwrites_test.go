package endpoints

import (
	"testing"
	"time"
)

func TestOwnWrites(t *testing.T) {
	now := time.Unix(1000, 0)
	w := newOwnWrites()
	w.now = func() time.Time { return now }
	stale := func(key string) string {
		v, ok := w.staleVersion(key)
		if !ok {
			return "-"
		}
		return v
	}

	// An update of version 5 to 7: a cache at 5 is behind, waits once,
	// and the informer delivering 7 wakes it.
	w.wrote("ns/a", "5", "7")
	if got := stale("ns/a"); got != "5" {
		t.Fatalf("stale version %q, want 5", got)
	}
	if !w.waiting("ns/a") || w.waiting("ns/a") {
		t.Error("waiting should say first only once per write")
	}
	if w.observed("ns/a", "5") {
		t.Error("the replaced version itself woke the sync")
	}
	if !w.observed("ns/a", "7") {
		t.Error("the written version did not wake the sync")
	}
	if got := stale("ns/a"); got != "-" {
		t.Errorf("after the informer caught up: stale version %q", got)
	}

	// A create replaced nothing: an empty cache is behind until the
	// informer adds the object.
	w.wrote("ns/b", "", "9")
	if got := stale("ns/b"); got != "" {
		t.Fatalf("stale version %q, want empty", got)
	}
	if !w.observed("ns/b", "9") {
		t.Error("the created object did not wake the sync")
	}

	// A write that changed nothing leaves nothing to wait for.
	w.wrote("ns/c", "4", "4")
	if got := stale("ns/c"); got != "-" {
		t.Errorf("no-op write: stale version %q", got)
	}

	// An informer that never shows the write: given up after the timeout.
	w.wrote("ns/d", "3", "8")
	now = now.Add(ownWritesTimeout + time.Second)
	if got := stale("ns/d"); got != "-" {
		t.Errorf("after the timeout: stale version %q", got)
	}

	// A deleted service forgets its writes.
	w.wrote("ns/e", "1", "2")
	w.forget("ns/e")
	if got := stale("ns/e"); got != "-" {
		t.Errorf("forgotten: stale version %q", got)
	}
}
