package endpointslice

import (
	"context"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
)

// The writer holds a sync back while the cache does not show its own
// writes: a created slice not yet seen, an updated slice at an older
// version, a deleted slice still there.
func TestWriterUpToDate(t *testing.T) {
	ctx := context.Background()
	const key = "ns/web"
	slice := func(name, uid, rv string) *discoveryv1.EndpointSlice {
		return &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(uid), ResourceVersion: rv}, AddressType: discoveryv1.AddressTypeIPv4}
	}
	a, b := slice("web-a", "a", "5"), slice("web-b", "b", "6")
	client := fake.NewClientset(a, b)
	w := NewWriter(client)
	if !w.UpToDate(key, []*discoveryv1.EndpointSlice{a, b}) {
		t.Fatal("nothing written yet, but not up to date")
	}

	// Created: held until the informer reports it.
	if err := w.Apply(ctx, key, Plan{Create: []*discoveryv1.EndpointSlice{slice("web-c", "c", "")}}, nil); err != nil {
		t.Fatal(err)
	}
	if w.UpToDate(key, []*discoveryv1.EndpointSlice{a, b}) {
		t.Error("up to date before the created slice was seen")
	}
	w.SliceAdded(key)
	if !w.UpToDate(key, []*discoveryv1.EndpointSlice{a, b}) {
		t.Error("not up to date once the created slice was seen")
	}

	// Deleted: held while the cache still lists it, whatever the
	// informer's handler said meanwhile.
	if err := w.Apply(ctx, key, Plan{Delete: []*discoveryv1.EndpointSlice{b}}, nil); err != nil {
		t.Fatal(err)
	}
	w.SliceDeleted(b.UID)
	if w.UpToDate(key, []*discoveryv1.EndpointSlice{a, b}) {
		t.Error("up to date while the cache still shows the deleted slice")
	}
	if w.UpToDate("ns/other", []*discoveryv1.EndpointSlice{a, b}) != true {
		t.Error("another owner held back by this one's deletion")
	}
	if !w.UpToDate(key, []*discoveryv1.EndpointSlice{a}) {
		t.Error("not up to date once the deleted slice left the cache")
	}
	if !w.UpToDate(key, []*discoveryv1.EndpointSlice{a}) || len(w.deleted) != 0 {
		t.Errorf("deletion marks left behind: %v", w.deleted)
	}
}
