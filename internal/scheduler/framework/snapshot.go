package framework

// Snapshot is the cluster as one scheduling cycle sees it. It is read-only
// for the cycle; the Cache refreshes it between cycles.
type Snapshot struct {
	// Nodes are the known nodes in a stable order.
	Nodes  []*NodeInfo
	byName map[string]*NodeInfo
	// withAffinity and withRequiredAnti list the nodes that carry pods with
	// pod (anti-)affinity, so that inter-pod affinity checks visit only those.
	withAffinity     []*NodeInfo
	withRequiredAnti []*NodeInfo
	// NamespaceLabels serves namespaceSelector in affinity terms.
	NamespaceLabels map[string]map[string]string
}

// NewSnapshot builds a snapshot over nodes (tests and preemption build
// them directly; the scheduler gets its own from the Cache).
func NewSnapshot(nodes ...*NodeInfo) *Snapshot {
	s := &Snapshot{Nodes: nodes, byName: make(map[string]*NodeInfo, len(nodes))}
	for _, n := range nodes {
		s.byName[n.Name()] = n
	}
	s.refreshAffinity()
	return s
}

func (s *Snapshot) refreshAffinity() {
	s.withAffinity = s.withAffinity[:0]
	s.withRequiredAnti = s.withRequiredAnti[:0]
	for _, n := range s.Nodes {
		if len(n.PodsWithAffinity) > 0 {
			s.withAffinity = append(s.withAffinity, n)
		}
		if len(n.PodsWithRequiredAntiAffinity) > 0 {
			s.withRequiredAnti = append(s.withRequiredAnti, n)
		}
	}
}

// Get returns the named node, or nil.
func (s *Snapshot) Get(name string) *NodeInfo { return s.byName[name] }

// NodesWithAffinityPods lists the nodes with pods that have any pod
// (anti-)affinity term.
func (s *Snapshot) NodesWithAffinityPods() []*NodeInfo { return s.withAffinity }

// NodesWithRequiredAntiAffinityPods lists the nodes with pods that have a
// required anti-affinity term.
func (s *Snapshot) NodesWithRequiredAntiAffinityPods() []*NodeInfo { return s.withRequiredAnti }

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
	return c
}
