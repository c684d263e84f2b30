package explain

import "sync"

// Store keeps the explanations of the most recent attempts of up to size
// pods, the latest per pod: memory is bounded by size times the list cap
// the scheduler builds them with. It is safe for concurrent use.
type Store struct {
	mu    sync.Mutex
	seq   uint64
	ring  []slot
	byKey map[string]slot
}

type slot struct {
	key string
	seq uint64
	e   *Explanation
}

// NewStore returns a store of size entries; nil when size is not positive,
// which every method accepts as "keep nothing".
func NewStore(size int) *Store {
	if size <= 0 {
		return nil
	}
	return &Store{ring: make([]slot, size), byKey: make(map[string]slot, size)}
}

// Put records e as the latest explanation for its pod, forgetting the
// pod least recently put when the store is full.
func (s *Store) Put(e *Explanation) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	i := s.seq % uint64(len(s.ring))
	if old := s.ring[i]; old.key != "" && s.byKey[old.key].seq == old.seq {
		delete(s.byKey, old.key)
	}
	sl := slot{key: e.Pod, seq: s.seq, e: e}
	s.ring[i] = sl
	s.byKey[e.Pod] = sl
}

// Get returns the latest explanation for namespace/name, if kept.
func (s *Store) Get(namespace, name string) (*Explanation, bool) {
	if s == nil {
		return nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sl, ok := s.byKey[namespace+"/"+name]
	return sl.e, ok
}

// Len is the number of pods whose explanation is kept.
func (s *Store) Len() int {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.byKey)
}
