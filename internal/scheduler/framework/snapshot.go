package framework

import v1 "k8s.io/api/core/v1"

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
	// withNonLocalAnti have pods whose required anti-affinity spans more
	// than one node (a topology key other than a unique hostname).
	withNonLocalAnti []*NodeInfo
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
	s := &Snapshot{Nodes: nodes, byName: make(map[string]*NodeInfo, len(nodes))}
	hosts := make(map[string]struct{}, len(nodes))
	s.UniqueHostnames = true
	for _, n := range nodes {
		s.byName[n.Name()] = n
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
	s.withAffinity = s.withAffinity[:0]
	s.withRequiredAnti = s.withRequiredAnti[:0]
	s.withNonLocalAnti = s.withNonLocalAnti[:0]
	for _, n := range s.Nodes {
		if s.hasNonLocalAnti(n) {
			s.withNonLocalAnti = append(s.withNonLocalAnti, n)
		}
		if len(n.PodsWithAffinity) > 0 {
			s.withAffinity = append(s.withAffinity, n)
		}
		if len(n.PodsWithRequiredAntiAffinity) > 0 {
			s.withRequiredAnti = append(s.withRequiredAnti, n)
		}
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
func (s *Snapshot) NodesWithNonLocalAntiAffinityPods() []*NodeInfo { return s.withNonLocalAnti }

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
	c.UniqueHostnames = s.UniqueHostnames
	c.Nominated = s.Nominated
	return c
}
