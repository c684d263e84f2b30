package interpodaffinity

import "github.com/orca-project/orca/internal/scheduler/framework"

// nodeFlags keeps one yes/no answer about each node's pods from one cycle
// to the next: "hosts a pod this anti-affinity term selects", or "hosts a
// pod whose anti-affinity over hostnames forbids pods like this one". It
// follows the cache's change log, so a cycle asks again only about the
// nodes that changed (usually the one that received the last pod), and
// the answers, by node index, let the framework skip the nodes Filter
// would reject without running it. Used from PreFilter only, which runs
// once per cycle under the cache lock.
type nodeFlags struct {
	snap *framework.Snapshot
	mark framework.Mark
	gens []uint64
	set  []bool
}

// update brings the answers up to date with snap and returns them; ok is
// false when snap has no change log (tests, preemption's what-if copies),
// where asking every node each cycle would cost more than it saves.
func (f *nodeFlags) update(snap *framework.Snapshot, ask func(*framework.NodeInfo) bool) (set []bool, ok bool) {
	changed, now, logged := snap.ChangedSince(f.mark)
	if now == (framework.Mark{}) {
		return nil, false
	}
	if !logged || f.snap != snap || len(f.set) != len(snap.Nodes) {
		f.snap = snap
		f.gens = make([]uint64, len(snap.Nodes))
		f.set = make([]bool, len(snap.Nodes))
		for i, n := range snap.Nodes {
			f.gens[i], f.set[i] = n.Generation(), ask(n)
		}
		f.mark = now
		return f.set, true
	}
	for _, n := range changed {
		if i := snap.Index(n); i >= 0 && f.gens[i] != n.Generation() {
			f.gens[i], f.set[i] = n.Generation(), ask(n)
		}
	}
	f.mark = now
	return f.set, true
}

// keptLimit bounds the answers kept; past it they start over.
const keptLimit = 32

func (pl *Plugin) flagsFor(key string) *nodeFlags {
	if f, ok := pl.kept[key]; ok {
		return f
	}
	if pl.kept == nil || len(pl.kept) >= keptLimit {
		pl.kept = map[string]*nodeFlags{}
	}
	f := &nodeFlags{}
	pl.kept[key] = f
	return f
}

// rejecter returns Filter's verdict by node index for a pod whose only
// required terms are anti-affinity over unique hostnames (the common
// "one replica per node"), or nil when Filter has more to weigh.
func (pl *Plugin) rejecter(s *filterState, pod *framework.PodInfo, snap *framework.Snapshot) func(i int) bool {
	if len(pod.RequiredAffinity) > 0 || len(s.existingAnti) > 0 || len(s.anti) > 0 {
		return nil
	}
	var sets [][]bool
	for i := range pod.RequiredAntiAffinity {
		t := &pod.RequiredAntiAffinity[i]
		if !s.localAnti[i] || s.antiKeys[i] == "" {
			return nil
		}
		set, ok := pl.flagsFor(s.antiKeys[i]).update(snap, func(n *framework.NodeInfo) bool {
			return t.CountOn(n, s.antiKeys[i], s.nsLabels) > 0
		})
		if !ok {
			return nil
		}
		sets = append(sets, set)
	}
	if s.snapLocal && len(snap.NodesWithRequiredAntiAffinityPods()) > 0 {
		set, ok := pl.flagsFor(s.podKey).update(snap, func(n *framework.NodeInfo) bool {
			return existingLocalAnti(s, pod, n)
		})
		if !ok {
			return nil
		}
		sets = append(sets, set)
	}
	return func(i int) bool {
		for _, set := range sets {
			if set[i] {
				return true
			}
		}
		return false
	}
}

// Rejecter implements framework.NodeRejecter.
func (*Plugin) Rejecter(cs *framework.CycleState) func(i int) bool {
	if v, ok := cs.Read(filterKey); ok {
		return v.(*filterState).reject
	}
	return nil
}
