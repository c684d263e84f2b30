package framework

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func ownedPod(name, ns string, owner types.UID, deleting bool) *PodInfo {
	yes := true
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID(name)}}
	if owner != "" {
		p.OwnerReferences = []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "rs", UID: owner, Controller: &yes}}
	}
	if deleting {
		now := metav1.Now()
		p.DeletionTimestamp = &now
	}
	return NewPodInfo(p)
}

// TestCountOwned: the count of a controller's pods on a node leaves out
// other namespaces, other owners, pods being deleted and owner references
// that are not the controller's; the memo follows the node's pods.
func TestCountOwned(t *testing.T) {
	ni := NewNodeInfo(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}})
	for _, p := range []*PodInfo{
		ownedPod("a", "ns", "rs1", false),
		ownedPod("b", "ns", "rs1", false),
		ownedPod("other-ns", "other", "rs1", false),
		ownedPod("other-owner", "ns", "rs2", false),
		ownedPod("deleting", "ns", "rs1", true),
		ownedPod("bare", "ns", "", false),
	} {
		ni.AddPod(p)
	}
	notController := ownedPod("not-controller", "ns", "rs1", false)
	notController.Pod.OwnerReferences[0].Controller = nil
	ni.AddPod(notController)

	key := OwnerKey("ns", "rs1")
	if got := ni.CountOwned(key, "ns", "rs1"); got != 2 {
		t.Fatalf("count %d, want 2", got)
	}
	// Asked again, the memo answers; a pod added changes the answer.
	if got := ni.CountOwned(key, "ns", "rs1"); got != 2 {
		t.Fatalf("memoised count %d, want 2", got)
	}
	ni.AddPod(ownedPod("c", "ns", "rs1", false))
	if got := ni.CountOwned(key, "ns", "rs1"); got != 3 {
		t.Fatalf("after a pod added: %d, want 3", got)
	}
	ni.RemovePod("a")
	if got := ni.CountOwned(key, "ns", "rs1"); got != 2 {
		t.Fatalf("after a pod removed: %d, want 2", got)
	}
	if got := ni.CountOwned(OwnerKey("ns", "rs2"), "ns", "rs2"); got != 1 {
		t.Fatalf("other owner: %d, want 1", got)
	}
}
