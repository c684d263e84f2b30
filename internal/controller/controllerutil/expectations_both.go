package controllerutil

// ExpectCreationsAndDeletions records, in one step, creations and
// deletions asked for by the same sync (a DaemonSet creates on new nodes
// and deletes on departed ones at once); ExpectCreations and
// ExpectDeletions each replace what the other recorded.
func (e *Expectations) ExpectCreationsAndDeletions(key string, creations int, deletedUIDs []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	x := &expectation{add: int64(creations), at: e.now(), deleted: map[string]bool{}}
	for _, u := range deletedUIDs {
		x.deleted[u] = true
	}
	x.del = int64(len(x.deleted))
	e.m[key] = x
}
