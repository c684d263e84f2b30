package kubelet

import (
	"context"
	"errors"
	"testing"

	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	nodelisters "k8s.io/client-go/listers/node/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

func TestRuntimeHandlerLookup(t *testing.T) {
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	_ = indexer.Add(&nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "gvisor"}, Handler: "runsc"})
	fresh := &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "kata"}, Handler: "kata-qemu"}
	gr := nodev1.Resource("runtimeclasses")
	var apiDown bool
	r := runtimeHandlers{
		lister: nodelisters.NewRuntimeClassLister(indexer),
		get: func(_ context.Context, name string) (*nodev1.RuntimeClass, error) {
			if apiDown {
				return nil, errors.New("connection refused")
			}
			if name == fresh.Name {
				return fresh, nil
			}
			return nil, apierrors.NewNotFound(gr, name)
		},
	}
	for _, tc := range []struct {
		name        string
		class       *string
		apiDown     bool
		wantHandler string
		wantErr     string
	}{
		{name: "no class runs the default handler"},
		{name: "empty class name", class: ptr.To("")},
		{name: "cached class", class: ptr.To("gvisor"), wantHandler: "runsc"},
		{name: "class not cached yet", class: ptr.To("kata"), wantHandler: "kata-qemu"},
		{name: "class gone", class: ptr.To("firecracker"), wantErr: `runtimeclass.node.k8s.io "firecracker" not found`},
		{name: "API unreachable", class: ptr.To("firecracker"), apiDown: true, wantErr: "failed to lookup RuntimeClass firecracker: connection refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			apiDown = tc.apiDown
			got, err := r.lookup(context.Background(), tc.class)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.wantHandler {
				t.Fatalf("got %q, %v; want %q", got, err, tc.wantHandler)
			}
		})
	}
}
