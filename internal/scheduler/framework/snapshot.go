package framework

import v1 "k8s.io/api/core/v1"

// Snapshot is the cluster as one scheduling cycle sees it. It is read-only
// for the cycle; the Cache refreshes it between cycles.
type Snapshot struct {
	// Nodes are the known nodes in a stable order.
	Nodes []*NodeInfo
	pos   map[string]int
	// withAffinity and withRequiredAnti list the nodes that carry pods with
	// pod (anti-)affinity, so that inter-pod affinity checks visit only those.
	withAffinity     nodeSet
	withRequiredAnti nodeSet
	// withNonLocalAnti have pods whose required anti-affinity spans more
	// than one node (a topology key other than a unique hostname).
	withNonLocalAnti nodeSet
	// log is the cache's change log (nil for snapshots built directly);
	// affinityMark is how far the lists above have followed it.
	log          *changeLog
	affinityMark Mark
	// UniqueHostnames is true when every node has its own
	// kubernetes.io/hostname value, so a term over that key concerns one
	// node only and can be checked on the node itself.
	UniqueHostnames bool
	// NamespaceLabels serves namespaceSelector in affinity terms.
	NamespaceLabels map[string]map[string]string
	// Nominated are the pods waiting for room preemption freed; nil when
	// there are none.
	Nominated *Nominations
}

// NewSnapshot builds a snapshot over nodes (tests and preemption build
// them directly; the scheduler gets its own from the Cache).
func NewSnapshot(nodes ...*NodeInfo) *Snapshot {
	s := &Snapshot{Nodes: nodes, pos: make(map[string]int, len(nodes))}
	hosts := make(map[string]struct{}, len(nodes))
	s.UniqueHostnames = true
	for i, n := range nodes {
		s.pos[n.Name()] = i
		h, ok := n.Node.Labels[v1.LabelHostname]
		if _, dup := hosts[h]; !ok || dup {
			s.UniqueHostnames = false
		}
		hosts[h] = struct{}{}
	}
	s.refreshAffinity()
	return s
}

func (s *Snapshot) refreshAffinity() {
	if s.log != nil {
		changed, now, ok := s.ChangedSince(s.affinityMark)
		s.affinityMark = now
		if ok {
			// Only the nodes that changed can have joined or left a list:
			// a walk over every pod's terms per cycle is what this saves.
			for _, n := range changed {
				s.placeAffinity(n, s.Index(n) >= 0)
			}
			return
		}
	}
	s.withAffinity.reset()
	s.withRequiredAnti.reset()
	s.withNonLocalAnti.reset()
	for _, n := range s.Nodes {
		s.placeAffinity(n, true)
	}
}

// placeAffinity puts n in or out of the affinity lists by its pods.
func (s *Snapshot) placeAffinity(n *NodeInfo, present bool) {
	s.withNonLocalAnti.set(n, present && s.hasNonLocalAnti(n))
	s.withAffinity.set(n, present && len(n.PodsWithAffinity) > 0)
	s.withRequiredAnti.set(n, present && len(n.PodsWithRequiredAntiAffinity) > 0)
}

// nodeSet is a set of nodes kept as a slice for iteration, with O(1)
// insertion and removal; its order carries no meaning.
type nodeSet struct {
	list []*NodeInfo
	pos  map[*NodeInfo]int
}

func (ns *nodeSet) reset() {
	clear(ns.list)
	ns.list = ns.list[:0]
	ns.pos = nil
}

func (ns *nodeSet) set(n *NodeInfo, in bool) {
	i, had := ns.pos[n]
	switch {
	case in && !had:
		if ns.pos == nil {
			ns.pos = map[*NodeInfo]int{}
		}
		ns.pos[n] = len(ns.list)
		ns.list = append(ns.list, n)
	case !in && had:
		last := len(ns.list) - 1
		ns.list[i] = ns.list[last]
		ns.pos[ns.list[i]] = i
		ns.list[last] = nil
		ns.list = ns.list[:last]
		delete(ns.pos, n)
	}
}

func (s *Snapshot) hasNonLocalAnti(n *NodeInfo) bool {
	for _, p := range n.PodsWithRequiredAntiAffinity {
		for i := range p.RequiredAntiAffinity {
			if !s.IsLocal(p.RequiredAntiAffinity[i].TopologyKey) {
				return true
			}
		}
	}
	return false
}

// IsLocal reports whether a topology key names single nodes.
func (s *Snapshot) IsLocal(key string) bool { return key == v1.LabelHostname && s.UniqueHostnames }

// NodesWithNonLocalAntiAffinityPods lists the nodes with pods whose
// required anti-affinity is over a key that spans several nodes.
func (s *Snapshot) NodesWithNonLocalAntiAffinityPods() []*NodeInfo { return s.withNonLocalAnti.list }

// Get returns the named node, or nil.
func (s *Snapshot) Get(name string) *NodeInfo {
	if i, ok := s.pos[name]; ok {
		return s.Nodes[i]
	}
	return nil
}

// NodesWithAffinityPods lists the nodes with pods that have any pod
// (anti-)affinity term.
func (s *Snapshot) NodesWithAffinityPods() []*NodeInfo { return s.withAffinity.list }

// NodesWithRequiredAntiAffinityPods lists the nodes with pods that have a
// required anti-affinity term.
func (s *Snapshot) NodesWithRequiredAntiAffinityPods() []*NodeInfo { return s.withRequiredAnti.list }

// WithNode returns a copy of the snapshot in which ni replaces the node of
// the same name; preemption uses it to evaluate a node without victims.
func (s *Snapshot) WithNode(ni *NodeInfo) *Snapshot {
	nodes := make([]*NodeInfo, len(s.Nodes))
	for i, n := range s.Nodes {
		if n.Name() == ni.Name() {
			nodes[i] = ni
		} else {
			nodes[i] = n
		}
	}
	c := NewSnapshot(nodes...)
	c.NamespaceLabels = s.NamespaceLabels
	c.UniqueHostnames = s.UniqueHostnames
	c.Nominated = s.Nominated
	return c
}
