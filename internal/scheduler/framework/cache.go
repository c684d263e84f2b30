package framework

import (
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Cache keeps the snapshot current from informer events, one change at a
// time, and holds "assumed" pods: pods the scheduler has placed but whose
// binding the API server has not confirmed yet. Counting them at once is
// what lets the next pod be scheduled while a bind is in flight without
// double-booking the node.
type Cache struct {
	mu    sync.Mutex
	nodes map[string]*NodeInfo
	pods  map[types.UID]*podState
	ns    map[string]map[string]string
	noms  *Nominations

	snap       *Snapshot
	log        *changeLog
	nodesDirty bool
}

type podState struct {
	info    *PodInfo
	node    string
	assumed bool
}

// NewCache returns an empty cache.
func NewCache() *Cache {
	c := &Cache{
		nodes: map[string]*NodeInfo{},
		pods:  map[types.UID]*podState{},
		ns:    map[string]map[string]string{},
		noms:  NewNominations(),
		snap:  NewSnapshot(),
		log:   newChangeLog(),
	}
	c.snap.log, c.snap.affinityMark = c.log, c.log.mark()
	return c
}

// WithSnapshot runs f with a current snapshot. The cache is locked while f
// runs, so the snapshot cannot change under a scheduling cycle; informer
// updates wait for the cycle (a few milliseconds) instead of the cycle
// copying the cluster.
func (c *Cache) WithSnapshot(f func(*Snapshot)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.nodesDirty {
		nodes := make([]*NodeInfo, 0, len(c.nodes))
		for _, n := range c.nodes {
			if n.Node != nil {
				nodes = append(nodes, n)
			}
		}
		c.log.renew()
		c.snap = NewSnapshot(nodes...)
		c.snap.log, c.snap.affinityMark = c.log, c.log.mark()
		c.nodesDirty = false
	} else {
		c.snap.refreshAffinity()
	}
	c.snap.NamespaceLabels = c.ns
	c.snap.Nominated = nil
	if c.noms.Len() > 0 {
		c.snap.Nominated = c.noms
	}
	f(c.snap)
}

// AddNode adds or replaces a node.
func (c *Cache) AddNode(node *v1.Node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ni, ok := c.nodes[node.Name]
	if !ok {
		ni = &NodeInfo{}
		c.nodes[node.Name] = ni
	}
	if ni.Node == nil {
		c.nodesDirty = true
	}
	ni.SetNode(node)
	c.log.record(ni)
}

// UpdateNode is AddNode: the node object is replaced as a whole.
func (c *Cache) UpdateNode(node *v1.Node) { c.AddNode(node) }

// RemoveNode forgets a node. Its pods stay accounted on a placeholder
// until they are deleted, as upstream does, so a node that comes back
// does not look empty.
func (c *Cache) RemoveNode(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ni, ok := c.nodes[name]
	if !ok {
		return
	}
	if len(ni.Pods) == 0 {
		delete(c.nodes, name)
	} else {
		ni.Node = nil
	}
	c.nodesDirty = true
}

// SetNamespace records a namespace's labels (for namespaceSelector).
func (c *Cache) SetNamespace(name string, labels map[string]string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if labels == nil {
		delete(c.ns, name)
		return
	}
	c.ns[name] = labels
}

// Nominate records that pod waits for room on node (its
// status.nominatedNodeName, or preemption's choice before that is
// written); an empty node clears the nomination.
func (c *Cache) Nominate(pod *v1.Pod, node string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.noms.Set(NewPodInfo(pod), node)
}

// RemoveNomination forgets the pod's nomination: it was bound, deleted or
// no longer waits for this scheduler.
func (c *Cache) RemoveNomination(uid types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.noms.Remove(uid)
}

// NominatedNode returns the node the pod is nominated to, or "".
func (c *Cache) NominatedNode(uid types.UID) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.noms.NodeOf(uid)
}

// AddPod records a bound pod; an assumed pod of the same UID is replaced
// by the confirmed one.
func (c *Cache) AddPod(pod *v1.Pod) {
	if pod.Spec.NodeName == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.removeLocked(pod.UID)
	c.addLocked(NewPodInfo(pod), false)
}

// UpdatePod replaces a bound pod.
func (c *Cache) UpdatePod(pod *v1.Pod) { c.AddPod(pod) }

// RemovePod forgets a pod, assumed or bound.
func (c *Cache) RemovePod(uid types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.removeLocked(uid)
}

// AssumePod accounts for pod (with spec.nodeName set to its chosen node)
// before the API server has confirmed the binding.
func (c *Cache) AssumePod(pi *PodInfo) error {
	if pi.Pod.Spec.NodeName == "" {
		return fmt.Errorf("assume pod %s/%s: no node name", pi.Pod.Namespace, pi.Pod.Name)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.pods[pi.Pod.UID]; ok {
		return fmt.Errorf("assume pod %s/%s: already in the cache", pi.Pod.Namespace, pi.Pod.Name)
	}
	c.addLocked(pi, true)
	return nil
}

// ForgetPod drops an assumed pod whose binding failed. A pod the
// informer has already confirmed stays.
func (c *Cache) ForgetPod(uid types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ps, ok := c.pods[uid]; ok && ps.assumed {
		c.removeLocked(uid)
	}
}

// IsAssumed reports whether the pod is assumed and not yet confirmed.
func (c *Cache) IsAssumed(uid types.UID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	ps, ok := c.pods[uid]
	return ok && ps.assumed
}

// Counts returns the number of known nodes and pods (for tests and logs).
func (c *Cache) Counts() (nodes, pods int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range c.nodes {
		if n.Node != nil {
			nodes++
		}
	}
	return nodes, len(c.pods)
}

func (c *Cache) addLocked(pi *PodInfo, assumed bool) {
	name := pi.Pod.Spec.NodeName
	ni, ok := c.nodes[name]
	if !ok {
		ni = &NodeInfo{}
		c.nodes[name] = ni
	}
	ni.AddPod(pi)
	c.log.record(ni)
	c.pods[pi.Pod.UID] = &podState{info: pi, node: name, assumed: assumed}
}

func (c *Cache) removeLocked(uid types.UID) {
	ps, ok := c.pods[uid]
	if !ok {
		return
	}
	delete(c.pods, uid)
	ni := c.nodes[ps.node]
	if ni == nil {
		return
	}
	ni.RemovePod(uid)
	c.log.record(ni)
	if ni.Node == nil && len(ni.Pods) == 0 {
		delete(c.nodes, ps.node)
	}
}
