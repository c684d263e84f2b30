package garbagecollector

import (
	"slices"
	"sync"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// node is what the collector knows of one object: enough to find it
// again, its owners, and whether it is being deleted and how.
type node struct {
	gvr             schema.GroupVersionResource
	namespace, name string
	uid             types.UID
	resourceVersion string
	owners          []metav1.OwnerReference
	deleting        bool
	finalizers      []string
}

func nodeOf(gvr schema.GroupVersionResource, m *metav1.ObjectMeta) *node {
	return &node{
		gvr: gvr, namespace: m.Namespace, name: m.Name, uid: m.UID, resourceVersion: m.ResourceVersion,
		owners: m.OwnerReferences, deleting: m.DeletionTimestamp != nil, finalizers: m.Finalizers,
	}
}

func (n *node) has(finalizer string) bool { return slices.Contains(n.finalizers, finalizer) }

// orphaning is an owner whose dependents must lose their references to it.
func (n *node) orphaning() bool { return n.deleting && n.has(metav1.FinalizerOrphanDependents) }

// deletingDependents is an owner in foreground deletion: it stays until
// its blocking dependents are gone.
func (n *node) deletingDependents() bool {
	return n.deleting && n.has(metav1.FinalizerDeleteDependents)
}

// ownerRef returns n's reference to the owner with uid, if any.
func (n *node) ownerRef(uid types.UID) (metav1.OwnerReference, bool) {
	for _, r := range n.owners {
		if r.UID == uid {
			return r, true
		}
	}
	return metav1.OwnerReference{}, false
}

// graph is the owner → dependents index over every object the collector
// watches, keyed by uid. Nodes are replaced, never modified in place, so
// a node handed out stays consistent without the lock.
type graph struct {
	mu         sync.RWMutex
	nodes      map[types.UID]*node
	dependents map[types.UID]map[types.UID]struct{}
}

func newGraph() *graph {
	return &graph{nodes: map[types.UID]*node{}, dependents: map[types.UID]map[types.UID]struct{}{}}
}

// upsert records n and returns the node it replaced, if any.
func (g *graph) upsert(n *node) *node {
	g.mu.Lock()
	defer g.mu.Unlock()
	old := g.nodes[n.uid]
	if old != nil {
		g.unlink(old)
	}
	g.nodes[n.uid] = n
	for _, r := range n.owners {
		deps := g.dependents[r.UID]
		if deps == nil {
			deps = map[types.UID]struct{}{}
			g.dependents[r.UID] = deps
		}
		deps[n.uid] = struct{}{}
	}
	return old
}

// remove forgets the object with uid and returns its last node. Its
// dependents stay indexed under its uid: they still reference it, and
// the collector finds them there to delete them.
func (g *graph) remove(uid types.UID) *node {
	g.mu.Lock()
	defer g.mu.Unlock()
	old := g.nodes[uid]
	if old != nil {
		g.unlink(old)
		delete(g.nodes, uid)
	}
	return old
}

func (g *graph) unlink(n *node) {
	for _, r := range n.owners {
		if deps := g.dependents[r.UID]; deps != nil {
			delete(deps, n.uid)
			if len(deps) == 0 {
				delete(g.dependents, r.UID)
			}
		}
	}
}

func (g *graph) get(uid types.UID) (*node, bool) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	n, ok := g.nodes[uid]
	return n, ok
}

// dependentsOf lists the known objects that reference owner.
func (g *graph) dependentsOf(owner types.UID) []*node {
	g.mu.RLock()
	defer g.mu.RUnlock()
	out := make([]*node, 0, len(g.dependents[owner]))
	for uid := range g.dependents[owner] {
		if n := g.nodes[uid]; n != nil {
			out = append(out, n)
		}
	}
	return out
}

func (g *graph) hasDependents(owner types.UID) bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return len(g.dependents[owner]) > 0
}

// toEnqueue decides which objects need a look after an object changed
// from old to cur (either may be nil: added, deleted). lookup reads the
// graph. It is the level-triggered heart of the collector: every state
// the workers act on is reached through one of these cases.
func toEnqueue(old, cur *node, lookup func(types.UID) (*node, bool), dependents func(types.UID) []*node) []types.UID {
	var out []types.UID
	if cur != nil {
		// An owner that started orphaning or foreground deletion, or a
		// dependent that is new or whose owners changed.
		if cur.orphaning() || cur.deletingDependents() {
			out = append(out, cur.uid)
			if cur.deletingDependents() && (old == nil || !old.deletingDependents()) {
				for _, d := range dependents(cur.uid) {
					out = append(out, d.uid)
				}
			}
		} else if len(cur.owners) > 0 && (old == nil || !apiequality.Semantic.DeepEqual(old.owners, cur.owners) || old.deleting != cur.deleting) {
			out = append(out, cur.uid)
		}
	} else if old != nil {
		// A deleted owner: its dependents may now be dangling.
		for _, d := range dependents(old.uid) {
			out = append(out, d.uid)
		}
	}
	// An owner in foreground deletion waits for its dependents: any
	// change to one of them may unblock it.
	for _, n := range []*node{old, cur} {
		if n == nil {
			continue
		}
		for _, r := range n.owners {
			if o, ok := lookup(r.UID); ok && o.deletingDependents() {
				out = append(out, o.uid)
			}
		}
	}
	return out
}

// ownerState is what a dependent's reference to an owner amounts to.
type ownerState int

const (
	// solid: the owner exists and is not deleting its dependents.
	solid ownerState = iota
	// dangling: no object with the reference's uid exists.
	dangling
	// waiting: the owner is in foreground deletion and waits for this
	// dependent to go.
	waiting
)

// action is what to do with a dependent.
type action int

const (
	keep action = iota
	// removeRefs drops the references to dangling or waiting owners
	// from a dependent that has a solid owner left.
	removeRefs
	// deleteObject deletes the dependent with its own propagation policy.
	deleteObject
	// deleteForeground deletes the dependent in the foreground, so that
	// an owner waiting on it also waits on its own dependents.
	deleteForeground
	// unblockForeground is deleteForeground after making the dependent's
	// owner references non-blocking: one of its own dependents is already
	// in foreground deletion, so the chain may be a cycle (a owns b owns
	// a) in which every member would wait for the next forever. As
	// upstream, the check has false positives; they only cost the owners
	// their wait for this one object.
	unblockForeground
)

// decide is upstream's attemptToDeleteItem decision over classified
// owner references: a dependent goes only when none of its owners is
// solid; with solid owners it merely drops the references that no
// longer hold. deps are the dependent's own dependents.
func decide(refs []metav1.OwnerReference, states []ownerState, deps []*node) (action, []types.UID) {
	var nSolid, nWaiting int
	var drop []types.UID
	for i, s := range states {
		switch s {
		case solid:
			nSolid++
		case waiting:
			nWaiting++
			drop = append(drop, refs[i].UID)
		case dangling:
			drop = append(drop, refs[i].UID)
		}
	}
	switch {
	case nSolid > 0 && len(drop) == 0:
		return keep, nil
	case nSolid > 0:
		return removeRefs, drop
	case nWaiting > 0 && slices.ContainsFunc(deps, (*node).deletingDependents):
		return unblockForeground, nil
	case nWaiting > 0 && len(deps) > 0:
		return deleteForeground, nil
	case len(refs) == 0:
		return keep, nil
	default:
		return deleteObject, nil
	}
}

// propagation is the policy a dependent is deleted with by default: its
// own finalizers say how its own dependents should go.
func propagation(n *node) metav1.DeletionPropagation {
	switch {
	case n.has(metav1.FinalizerOrphanDependents):
		return metav1.DeletePropagationOrphan
	case n.has(metav1.FinalizerDeleteDependents):
		return metav1.DeletePropagationForeground
	default:
		return metav1.DeletePropagationBackground
	}
}

// blocking counts the dependents that keep an owner in foreground
// deletion: those still present whose reference to it blocks deletion.
func blocking(owner types.UID, deps []*node) int {
	n := 0
	for _, d := range deps {
		if r, ok := d.ownerRef(owner); ok && r.BlockOwnerDeletion != nil && *r.BlockOwnerDeletion {
			n++
		}
	}
	return n
}

// unblocked is refs with every blockOwnerDeletion cleared.
func unblocked(refs []metav1.OwnerReference) []metav1.OwnerReference {
	out := make([]metav1.OwnerReference, len(refs))
	for i, r := range refs {
		out[i] = r
		if r.BlockOwnerDeletion != nil && *r.BlockOwnerDeletion {
			out[i].BlockOwnerDeletion = new(bool)
		}
	}
	return out
}

// withoutOwners is refs minus the references to the given uids.
func withoutOwners(refs []metav1.OwnerReference, uids []types.UID) []metav1.OwnerReference {
	out := make([]metav1.OwnerReference, 0, len(refs))
	for _, r := range refs {
		if !slices.Contains(uids, r.UID) {
			out = append(out, r)
		}
	}
	return out
}
