package garbagecollector

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

func ref(uid string, block bool) metav1.OwnerReference {
	r := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: uid, UID: types.UID(uid)}
	if block {
		r.BlockOwnerDeletion = ptr.To(true)
	}
	return r
}

func TestDecide(t *testing.T) {
	a, b := ref("a", false), ref("b", true)
	dep := []*node{{uid: "d"}}
	// A dependent already in foreground deletion: the object may be in
	// a cycle (the e2e case: pod1 → pod3 → pod2 → pod1, all blocking).
	cycle := []*node{{uid: "d"}, {uid: "e", deleting: true, finalizers: []string{metav1.FinalizerDeleteDependents}}}
	// A dependent deleting in the background is no cycle.
	background := []*node{{uid: "e", deleting: true}}
	tests := []struct {
		name       string
		refs       []metav1.OwnerReference
		states     []ownerState
		dependents []*node
		want       action
		drop       []types.UID
	}{
		{"no owners", nil, nil, nil, keep, nil},
		{"solid owner", []metav1.OwnerReference{a}, []ownerState{solid}, nil, keep, nil},
		{"dangling owner", []metav1.OwnerReference{a}, []ownerState{dangling}, nil, deleteObject, nil},
		{"all dangling", []metav1.OwnerReference{a, b}, []ownerState{dangling, dangling}, dep, deleteObject, nil},
		{"all dangling, dependent deleting its own", []metav1.OwnerReference{a}, []ownerState{dangling}, cycle, deleteObject, nil},
		{"one solid one dangling", []metav1.OwnerReference{a, b}, []ownerState{solid, dangling}, nil, removeRefs, []types.UID{"b"}},
		{"one solid one waiting", []metav1.OwnerReference{a, b}, []ownerState{waiting, solid}, cycle, removeRefs, []types.UID{"a"}},
		{"waiting owner, leaf", []metav1.OwnerReference{b}, []ownerState{waiting}, nil, deleteObject, nil},
		{"waiting owner, has dependents", []metav1.OwnerReference{b}, []ownerState{waiting}, dep, deleteForeground, nil},
		{"waiting owner, dependent deleting in the background", []metav1.OwnerReference{b}, []ownerState{waiting}, background, deleteForeground, nil},
		{"waiting and dangling, has dependents", []metav1.OwnerReference{a, b}, []ownerState{dangling, waiting}, dep, deleteForeground, nil},
		{"waiting owner, dependent deleting its own: possible cycle", []metav1.OwnerReference{b}, []ownerState{waiting}, cycle, unblockForeground, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, drop := decide(tt.refs, tt.states, tt.dependents)
			if got != tt.want || !slices.Equal(drop, tt.drop) {
				t.Fatalf("decide = %v %v, want %v %v", got, drop, tt.want, tt.drop)
			}
		})
	}
}

func TestPropagation(t *testing.T) {
	for _, tt := range []struct {
		finalizers []string
		want       metav1.DeletionPropagation
	}{
		{nil, metav1.DeletePropagationBackground},
		{[]string{"example.com/x"}, metav1.DeletePropagationBackground},
		{[]string{metav1.FinalizerOrphanDependents}, metav1.DeletePropagationOrphan},
		{[]string{metav1.FinalizerDeleteDependents}, metav1.DeletePropagationForeground},
	} {
		if got := propagation(&node{finalizers: tt.finalizers}); got != tt.want {
			t.Errorf("propagation(%v) = %v, want %v", tt.finalizers, got, tt.want)
		}
	}
}

func TestBlocking(t *testing.T) {
	deps := []*node{
		{uid: "d1", owners: []metav1.OwnerReference{ref("o", true)}},
		{uid: "d2", owners: []metav1.OwnerReference{ref("o", false)}},
		{uid: "d3", owners: []metav1.OwnerReference{ref("other", true)}},
		{uid: "d4", owners: []metav1.OwnerReference{ref("other", false), ref("o", true)}, deleting: true},
	}
	if got := blocking("o", deps); got != 2 {
		t.Fatalf("blocking = %d, want 2 (blocking references to o, deleting or not)", got)
	}
}

func TestUnblocked(t *testing.T) {
	refs := []metav1.OwnerReference{ref("a", false), ref("b", true)}
	got := unblocked(refs)
	if blocking("b", []*node{{owners: got}}) != 0 || got[0].BlockOwnerDeletion != nil || got[1].UID != "b" {
		t.Fatalf("unblocked = %+v", got)
	}
	if !*refs[1].BlockOwnerDeletion {
		t.Fatal("unblocked changed its input")
	}
}

func TestWithoutOwners(t *testing.T) {
	got := withoutOwners([]metav1.OwnerReference{ref("a", false), ref("b", true), ref("c", false)}, []types.UID{"b", "c"})
	if len(got) != 1 || got[0].UID != "a" {
		t.Fatalf("withoutOwners = %v", got)
	}
}

func TestGraphAndEnqueue(t *testing.T) {
	g := newGraph()
	owner := &node{uid: "o", name: "o"}
	dep := &node{uid: "d", owners: []metav1.OwnerReference{ref("o", true)}}
	enq := func(old, cur *node) []types.UID { return toEnqueue(old, cur, g.get, g.dependentsOf) }

	// A new dependent is looked at (its owner might be gone); a new
	// object without owners is not.
	if got := enq(g.upsert(owner), owner); len(got) != 0 {
		t.Fatalf("new owner enqueued %v", got)
	}
	if got := enq(g.upsert(dep), dep); !slices.Equal(got, []types.UID{"d"}) {
		t.Fatalf("new dependent enqueued %v, want [d]", got)
	}
	// An unchanged dependent (a resync) is not.
	same := &node{uid: "d", owners: []metav1.OwnerReference{ref("o", true)}}
	if got := enq(g.upsert(same), same); len(got) != 0 {
		t.Fatalf("unchanged dependent enqueued %v", got)
	}
	// The owner enters foreground deletion: it and its dependents.
	fg := &node{uid: "o", name: "o", deleting: true, finalizers: []string{metav1.FinalizerDeleteDependents}}
	got := enq(g.upsert(fg), fg)
	slices.Sort(got)
	if !slices.Equal(got, []types.UID{"d", "o"}) {
		t.Fatalf("foreground owner enqueued %v, want [d o]", got)
	}
	// The dependent goes: the waiting owner is looked at again.
	old := g.remove("d")
	if got := enq(old, nil); !slices.Equal(got, []types.UID{"o"}) {
		t.Fatalf("deleted dependent enqueued %v, want [o]", got)
	}
	if g.hasDependents("o") {
		t.Fatal("removed dependent still indexed")
	}
	// A deleted owner: its remaining dependents are looked at.
	d2 := &node{uid: "d2", owners: []metav1.OwnerReference{ref("o", false)}}
	g.upsert(d2)
	plain := &node{uid: "o", name: "o"}
	g.upsert(plain)
	if got := enq(g.remove("o"), nil); !slices.Equal(got, []types.UID{"d2"}) {
		t.Fatalf("deleted owner enqueued %v, want [d2]", got)
	}
	if deps := g.dependentsOf("o"); len(deps) != 1 {
		t.Fatalf("dependents of a deleted owner = %d, want 1 (kept for collection)", len(deps))
	}
}
