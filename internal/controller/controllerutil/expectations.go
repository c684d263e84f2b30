// Package controllerutil holds what the workload controllers share, as
// upstream's controller_utils does: expectations that keep a controller
// from acting twice on a cache that has not caught up with its own writes,
// creating and deleting pods from a template with owner references and
// events, adopting orphans and releasing pods that no longer match, and
// the pod predicates (active, ready, available).
package controllerutil

import (
	"sync"
	"time"
)

// ExpectationsTimeout is how long unmet expectations hold a controller
// back before it resyncs anyway (a watch event may have been lost).
const ExpectationsTimeout = 5 * time.Minute

// Expectations counts, per controller key, the creations and deletions a
// controller has asked for and not yet seen in its informer. While some
// are outstanding, the controller must not compute a new diff: its cache
// would make it create or delete the same pods again.
type Expectations struct {
	mu  sync.Mutex
	m   map[string]*expectation
	now func() time.Time
}

type expectation struct {
	add, del int64
	deleted  map[string]bool // UIDs whose deletion is expected
	at       time.Time
}

// NewExpectations returns an empty store.
func NewExpectations() *Expectations {
	return &Expectations{m: map[string]*expectation{}, now: time.Now}
}

// Satisfied reports whether key has no outstanding expectations (or they
// are older than ExpectationsTimeout).
func (e *Expectations) Satisfied(key string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	x, ok := e.m[key]
	if !ok {
		return true
	}
	if x.add <= 0 && x.del <= 0 {
		return true
	}
	return e.now().Sub(x.at) > ExpectationsTimeout
}

// ExpectCreations records that n creations were asked for.
func (e *Expectations) ExpectCreations(key string, n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.m[key] = &expectation{add: int64(n), at: e.now(), deleted: map[string]bool{}}
}

// ExpectDeletions records that the pods with these UIDs are being deleted.
func (e *Expectations) ExpectDeletions(key string, uids []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	x := &expectation{at: e.now(), deleted: map[string]bool{}}
	for _, u := range uids {
		x.deleted[u] = true
	}
	x.del = int64(len(x.deleted))
	e.m[key] = x
}

// CreationObserved lowers the creations still expected (an informer saw
// one, or a create failed and will never be seen).
func (e *Expectations) CreationObserved(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x, ok := e.m[key]; ok {
		x.add--
	}
}

// DeletionObserved marks the pod uid as gone.
func (e *Expectations) DeletionObserved(key, uid string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x, ok := e.m[key]; ok && x.deleted[uid] {
		delete(x.deleted, uid)
		x.del--
	}
}

// Delete forgets key (its owner is gone).
func (e *Expectations) Delete(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.m, key)
}
