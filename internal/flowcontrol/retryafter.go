package flowcontrol

import "sync"

// maxRetryAfter caps the Retry-After a refused client is given, in
// seconds, as upstream's.
const maxRetryAfter = 32

// retryAfter is upstream's dropped-requests tracker: per priority level,
// the Retry-After given to refused clients doubles (up to 32 s) while a
// level keeps refusing at least three requests a second for each second
// of it, and shrinks by one second at a time as refusals calm down.
type retryAfter struct {
	mu     sync.Mutex
	levels map[string]*dropStats
}

type dropStats struct {
	// history holds the refusals of past seconds, oldest first.
	history []dropSecond
	current dropSecond
	// retryAfter is the value given now; raisedAt when it last doubled.
	retryAfter, raisedAt int64
}

type dropSecond struct{ unix, count int64 }

func newRetryAfter() *retryAfter { return &retryAfter{levels: map[string]*dropStats{}} }

// record notes a refusal at the given second.
func (t *retryAfter) record(level string, unix int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.levels[level]
	if s == nil {
		s = &dropStats{retryAfter: 1}
		t.levels[level] = s
	}
	if s.current.unix == unix {
		s.current.count++
		return
	}
	// A new second: the finished one joins the history, which keeps twice
	// the current value's seconds (at most 32).
	s.history = append(s.history, s.current)
	keep := min(2*s.retryAfter, maxRetryAfter)
	i := 0
	for i < len(s.history) && unix-s.history[i].unix > keep {
		i++
	}
	s.history = s.history[i:]
	s.current = dropSecond{unix: unix, count: 1}

	var dropped int64
	for i := len(s.history) - 1; i >= 0 && unix-s.history[i].unix <= s.retryAfter; i-- {
		if s.history[i].unix < unix {
			dropped += s.history[i].count
		}
	}
	switch {
	case unix-s.raisedAt >= s.retryAfter && dropped >= 3*s.retryAfter:
		s.retryAfter = min(2*s.retryAfter, maxRetryAfter)
		s.raisedAt = unix
	case dropped < s.retryAfter && s.retryAfter > 1:
		s.retryAfter--
	}
}

// get returns the Retry-After, in seconds, for a refusal at level.
func (t *retryAfter) get(level string) int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s := t.levels[level]; s != nil {
		return s.retryAfter
	}
	return 1
}
