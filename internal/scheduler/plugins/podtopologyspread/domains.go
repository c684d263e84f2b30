package podtopologyspread

import (
	"math"
	"strings"

	"github.com/orca-project/orca/internal/scheduler/framework"
)

// domainCounts keeps PreFilter's per-domain counts from one cycle to the
// next for one set of constraints. It follows the cache's change log:
// between cycles usually one node changed (it received the last pod), so
// only that node is measured again instead of every node's labels and
// pods. Domains (label values) get small integer ids so that a node's
// domain is an array lookup, which is what lets Filter's verdict for a
// node be read without touching the node (see rejecter). It is used by
// one goroutine: PreFilter runs once per cycle under the cache lock.
type domainCounts struct {
	sig  string
	snap *framework.Snapshot
	mark framework.Mark
	ncon int
	gens []uint64
	// ids[i*ncon+j] is node i's domain for constraint j, or -1 for all of
	// node i's entries when it lacks one of the keys (it is not eligible).
	ids     []int32
	contrib []int
	idOf    []map[string]int32
	values  [][]string
	counts  [][]int
	members [][]int // eligible nodes per domain, to drop empty domains
}

func signature(cons []constraint) string {
	var b strings.Builder
	for _, c := range cons {
		b.WriteString(c.key)
		b.WriteByte(0)
		b.WriteString(c.memoKey)
		b.WriteByte(0)
	}
	return b.String()
}

// update brings the counts up to date with snap.
func (d *domainCounts) update(sig string, pod *framework.PodInfo, cons []constraint, snap *framework.Snapshot) {
	changed, now, ok := snap.ChangedSince(d.mark)
	if !ok || d.sig != sig || d.snap != snap || len(d.gens) != len(snap.Nodes) {
		d.reset(sig, cons, snap)
		for i, n := range snap.Nodes {
			d.measure(i, pod, cons, n)
			d.apply(i, 1)
		}
		d.mark = now
		return
	}
	for _, n := range changed {
		i := snap.Index(n)
		if i < 0 || d.gens[i] == n.Generation() {
			continue
		}
		d.apply(i, -1)
		d.measure(i, pod, cons, n)
		d.apply(i, 1)
	}
	d.mark = now
}

func (d *domainCounts) reset(sig string, cons []constraint, snap *framework.Snapshot) {
	d.sig, d.snap, d.ncon = sig, snap, len(cons)
	d.gens = make([]uint64, len(snap.Nodes))
	d.ids = make([]int32, len(snap.Nodes)*len(cons))
	d.contrib = make([]int, len(snap.Nodes)*len(cons))
	for i := range d.ids {
		d.ids[i] = -1
	}
	d.idOf = make([]map[string]int32, len(cons))
	d.values = make([][]string, len(cons))
	d.counts = make([][]int, len(cons))
	d.members = make([][]int, len(cons))
	for j := range cons {
		d.idOf[j] = map[string]int32{}
	}
}

func (d *domainCounts) id(j int, v string) int32 {
	if id, ok := d.idOf[j][v]; ok {
		return id
	}
	id := int32(len(d.values[j]))
	d.idOf[j][v] = id
	d.values[j] = append(d.values[j], v)
	d.counts[j] = append(d.counts[j], 0)
	d.members[j] = append(d.members[j], 0)
	return id
}

func (d *domainCounts) measure(i int, pod *framework.PodInfo, cons []constraint, n *framework.NodeInfo) {
	d.gens[i] = n.Generation()
	row, contrib := d.ids[i*d.ncon:(i+1)*d.ncon], d.contrib[i*d.ncon:(i+1)*d.ncon]
	for j, c := range cons {
		v, ok := n.Node.Labels[c.key]
		if !ok {
			for j := range row {
				row[j], contrib[j] = -1, 0
			}
			return
		}
		row[j] = d.id(j, v)
	}
	for j, c := range cons {
		contrib[j] = countMatching(pod.Pod, c, n)
	}
}

func (d *domainCounts) apply(i, sign int) {
	for j := range d.ncon {
		id := d.ids[i*d.ncon+j]
		if id < 0 {
			return
		}
		d.counts[j][id] += sign * d.contrib[i*d.ncon+j]
		d.members[j][id] += sign
	}
}

// fill copies the counts of the domains that have eligible nodes into s,
// as the from-scratch scan would have counted them.
func (d *domainCounts) fill(s *filterState) {
	for j := range d.ncon {
		for id, m := range d.members[j] {
			if m > 0 {
				s.counts[j][d.values[j][id]] = d.counts[j][id]
			}
		}
	}
}

// rejecter returns Filter's verdict per node index for s, computed per
// domain once: a node is rejected when it lacks a key or its domain would
// exceed maxSkew.
func (d *domainCounts) rejecter(s *filterState) func(i int) bool {
	ok := make([][]bool, d.ncon)
	for j, c := range s.constraints {
		ok[j] = make([]bool, len(d.values[j]))
		for id := range d.values[j] {
			n := 0
			if d.members[j][id] > 0 {
				n = d.counts[j][id]
			}
			ok[j][id] = n+s.self[j]-s.minMatch[j] <= int(c.maxSkew)
		}
	}
	ids, ncon := d.ids, d.ncon
	return func(i int) bool {
		for j := range ncon {
			id := ids[i*ncon+j]
			if id < 0 || !ok[j][id] {
				return true
			}
		}
		return false
	}
}

// minMatch is the least-loaded domain's count, or 0 with fewer domains
// than minDomains.
func minMatch(counts map[string]int, minDomains int32) int {
	lo := math.MaxInt
	for _, n := range counts {
		lo = min(lo, n)
	}
	if len(counts) < int(minDomains) || lo == math.MaxInt {
		return 0
	}
	return lo
}
