package framework

// The change log lets state kept across scheduling cycles catch up with the
// cache by visiting only the nodes that changed. Between two cycles one
// node usually changed (it received the last pod), so a plugin that keeps
// per-domain counts or an index of pods by term reads one entry instead of
// checking 5,000 nodes. Like the snapshot, it is read and written under
// the cache lock.

// changeLogLimit bounds the log; a reader that fell further behind
// recomputes from scratch, which costs time, never a wrong answer.
const changeLogLimit = 4096

type changeLog struct {
	// epoch names one list of nodes: it changes when nodes are added or
	// removed, since positions in Snapshot.Nodes move then.
	epoch uint64
	// base is the sequence number of entries[0].
	base    uint64
	entries []*NodeInfo
}

func newChangeLog() *changeLog { return &changeLog{epoch: genCounter.Add(1)} }

func (l *changeLog) record(ni *NodeInfo) {
	if len(l.entries) >= changeLogLimit {
		l.base += uint64(len(l.entries))
		l.entries = l.entries[:0]
	}
	l.entries = append(l.entries, ni)
}

// renew starts a new epoch: every reader's mark becomes invalid.
func (l *changeLog) renew() {
	l.epoch = genCounter.Add(1)
	l.base += uint64(len(l.entries))
	l.entries = l.entries[:0]
}

func (l *changeLog) mark() Mark { return Mark{epoch: l.epoch, seq: l.base + uint64(len(l.entries))} }

// Mark is a reader's place in a snapshot's change log. The zero Mark is
// before everything: reading from it always asks for a full recount.
type Mark struct{ epoch, seq uint64 }

// ChangedSince returns the nodes whose labels or pods changed since m
// (a node may appear more than once, and some may no longer be in
// Nodes), and the mark to pass next time. ok is false when the log cannot
// answer: m is the zero Mark or from another list of nodes, the log was
// trimmed past it, or the snapshot was built without a cache (tests,
// preemption's what-if copies). Then the caller recomputes from scratch.
func (s *Snapshot) ChangedSince(m Mark) (changed []*NodeInfo, now Mark, ok bool) {
	if s.log == nil {
		return nil, Mark{}, false
	}
	now = s.log.mark()
	if m.epoch != s.log.epoch || m.seq < s.log.base || m.seq > now.seq {
		return nil, now, false
	}
	return s.log.entries[m.seq-s.log.base:], now, true
}

// Index returns the position of ni in Nodes, or -1 when it is not there.
func (s *Snapshot) Index(ni *NodeInfo) int {
	if ni.Node == nil {
		return -1
	}
	i, ok := s.pos[ni.Node.Name]
	if !ok || s.Nodes[i] != ni {
		return -1
	}
	return i
}
