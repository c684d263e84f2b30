package endpoints

import (
	"sync"
	"time"
)

// ownWritesTimeout bounds how long a sync waits for the informer to show
// the controller's own write: an informer that relisted past a version
// that came and went never shows it.
const ownWritesTimeout = 30 * time.Second

// ownWrites keeps the controller from racing itself, as upstream's
// staleEndpointsTracker does. After it writes an Endpoints object, the
// next sync of the service may come before the informer shows that write;
// computed from the copy the write replaced, its update would fail with a
// conflict (and a create with AlreadyExists). So the resource version a
// write replaced ("" for a create) is remembered, and a sync that finds
// exactly that version in the cache waits for the informer instead.
//
// A sync reads stale before it reads the cache, and the informer's handler
// calls observed after the cache holds the new version; so either the
// sync reads the new version, or observed comes after it and queues the
// key again.
type ownWrites struct {
	mu      sync.Mutex
	now     func() time.Time
	entries map[string]ownWrite
}

type ownWrite struct {
	replaced string
	at       time.Time
	// waited is set once a sync has waited for this write.
	waited bool
}

func newOwnWrites() *ownWrites {
	return &ownWrites{now: time.Now, entries: map[string]ownWrite{}}
}

// wrote records that a write of key replaced the version replaced ("" when
// it created the object) with written.
func (w *ownWrites) wrote(key, replaced, written string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if written == replaced {
		// A write that changed nothing leaves nothing to wait for.
		delete(w.entries, key)
		return
	}
	w.entries[key] = ownWrite{replaced: replaced, at: w.now()}
}

// staleVersion returns the version that, found in the cache, means the
// cache has not caught up with the controller's last write of key.
func (w *ownWrites) staleVersion(key string) (string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	e, ok := w.entries[key]
	if ok && w.now().Sub(e.at) > ownWritesTimeout {
		delete(w.entries, key)
		return "", false
	}
	return e.replaced, ok
}

// waiting records that a sync of key waits for the informer; first is
// true the first time for this write.
func (w *ownWrites) waiting(key string) (first bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	e, ok := w.entries[key]
	if !ok || e.waited {
		return false
	}
	e.waited = true
	w.entries[key] = e
	return true
}

// observed is called for each version of key the informer delivers (""
// when it saw the object deleted). It reports whether a sync may have
// waited for it.
func (w *ownWrites) observed(key, version string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	e, ok := w.entries[key]
	if !ok || e.replaced == version {
		return false
	}
	delete(w.entries, key)
	return true
}

// forget drops what is known of key (its service is gone).
func (w *ownWrites) forget(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.entries, key)
}
