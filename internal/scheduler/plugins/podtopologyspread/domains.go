package podtopologyspread

import (
	"strings"

	"github.com/orca-project/orca/internal/scheduler/framework"
)

// domainCounts keeps PreFilter's per-domain counts from one cycle to the
// next. Between cycles usually one node changed (it received the last
// pod), so checking each node's generation and recounting only the
// changed ones replaces a walk over every node's labels and pods. It is
// used by one goroutine: PreFilter runs once per cycle under the cache
// lock.
type domainCounts struct {
	sig     string
	nodes   []*framework.NodeInfo
	gens    []uint64
	vals    [][]string // per node, per constraint; nil when the node is not eligible
	contrib [][]int
	counts  []map[string]int
	members []map[string]int // eligible nodes per domain, to drop empty domains
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

// update brings the counts up to date with snap and returns them.
func (d *domainCounts) update(sig string, pod *framework.PodInfo, cons []constraint, snap *framework.Snapshot) []map[string]int {
	if d.sig != sig || len(d.nodes) != len(snap.Nodes) {
		d.reset(sig, cons, snap)
	}
	for i, n := range snap.Nodes {
		if d.nodes[i] != n {
			d.reset(sig, cons, snap)
			return d.update(sig, pod, cons, snap)
		}
		if d.gens[i] != n.Generation() {
			d.apply(i, -1)
			d.measure(i, pod, cons, n)
			d.apply(i, 1)
		}
	}
	return d.counts
}

func (d *domainCounts) reset(sig string, cons []constraint, snap *framework.Snapshot) {
	d.sig = sig
	d.nodes = append(d.nodes[:0], snap.Nodes...)
	d.gens = make([]uint64, len(snap.Nodes))
	d.vals = make([][]string, len(snap.Nodes))
	d.contrib = make([][]int, len(snap.Nodes))
	d.counts = make([]map[string]int, len(cons))
	d.members = make([]map[string]int, len(cons))
	for i := range cons {
		d.counts[i], d.members[i] = map[string]int{}, map[string]int{}
	}
	// gens of 0 never match a real generation: every node is measured on
	// the first update.
}

func (d *domainCounts) measure(i int, pod *framework.PodInfo, cons []constraint, n *framework.NodeInfo) {
	d.gens[i] = n.Generation()
	d.vals[i], d.contrib[i] = nil, nil
	vals := make([]string, len(cons))
	for j, c := range cons {
		v, ok := n.Node.Labels[c.key]
		if !ok {
			return
		}
		vals[j] = v
	}
	contrib := make([]int, len(cons))
	for j, c := range cons {
		contrib[j] = countMatching(pod.Pod, c, n)
	}
	d.vals[i], d.contrib[i] = vals, contrib
}

func (d *domainCounts) apply(i, sign int) {
	if d.vals[i] == nil {
		return
	}
	for j, v := range d.vals[i] {
		d.counts[j][v] += sign * d.contrib[i][j]
		d.members[j][v] += sign
		if d.members[j][v] == 0 {
			delete(d.members[j], v)
			delete(d.counts[j], v)
		}
	}
}
