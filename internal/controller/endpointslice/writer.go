package endpointslice

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/orca-project/orca/internal/controller/controllerutil"
)

// Writer applies plans and keeps what protects the next sync from a cache
// that has not caught up with them. Keys are the owners' namespace/name.
type Writer struct {
	client kubernetes.Interface
	// expect holds back a sync while slices it created have not reached
	// the informer, which would otherwise make it create them again.
	expect *controllerutil.Expectations
	// written remembers the resource version of each slice it updated, so
	// that a sync over an older cached copy waits for the informer instead
	// of computing a diff from stale data.
	mu      sync.Mutex
	written map[types.UID]uint64
	// deleted holds the slices it deleted, with their owner's key, until a
	// sync finds the cache without them: a plan over a cache still showing
	// one would update it (a write to an object that is gone) or count its
	// endpoints as served. Only such a sync clears the mark, since the
	// informer may drop a slice after the sync listed it.
	deleted map[types.UID]string
}

// NewWriter returns a writer over client.
func NewWriter(client kubernetes.Interface) *Writer {
	return &Writer{client: client, expect: controllerutil.NewExpectations(),
		written: map[types.UID]uint64{}, deleted: map[types.UID]string{}}
}

// SliceAdded is called by the slice informer's add handler.
func (w *Writer) SliceAdded(key string) { w.expect.CreationObserved(key) }

// SliceDeleted is called by the slice informer's delete handler.
func (w *Writer) SliceDeleted(uid types.UID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.written, uid)
}

// Forget drops the bookkeeping of an owner that is gone.
func (w *Writer) Forget(key string) {
	w.expect.Delete(key)
	w.mu.Lock()
	defer w.mu.Unlock()
	for uid, k := range w.deleted {
		if k == key {
			delete(w.deleted, uid)
		}
	}
}

// UpToDate reports whether the cache holds everything this writer wrote
// for key, so that a diff computed from it is sound.
func (w *Writer) UpToDate(key string, existing []*discoveryv1.EndpointSlice) bool {
	if !w.expect.Satisfied(key) {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	cached := make(map[types.UID]bool, len(existing))
	for _, s := range existing {
		cached[s.UID] = true
	}
	for uid, k := range w.deleted {
		if k != key {
			continue
		}
		if cached[uid] {
			return false
		}
		delete(w.deleted, uid)
	}
	for _, s := range existing {
		want, ok := w.written[s.UID]
		if !ok {
			continue
		}
		have, err := strconv.ParseUint(s.ResourceVersion, 10, 64)
		if err != nil || have >= want {
			delete(w.written, s.UID)
			continue
		}
		return false
	}
	return true
}

func (w *Writer) remember(s *discoveryv1.EndpointSlice) {
	if rv, err := strconv.ParseUint(s.ResourceVersion, 10, 64); err == nil {
		w.mu.Lock()
		w.written[s.UID] = rv
		w.mu.Unlock()
	}
}

// Apply writes the plan: creations first, so that clients never see fewer
// endpoints than there are, then updates, then deletions. stamp, when not
// nil, adjusts every slice created or updated.
func (w *Writer) Apply(ctx context.Context, key string, plan Plan, stamp func(*discoveryv1.EndpointSlice)) error {
	var errs []error
	if len(plan.Create) > 0 {
		w.expect.ExpectCreations(key, len(plan.Create))
	}
	for _, s := range plan.Create {
		if stamp != nil {
			stamp(s)
		}
		if _, err := w.client.DiscoveryV1().EndpointSlices(s.Namespace).Create(ctx, s, metav1.CreateOptions{}); err != nil {
			w.expect.CreationObserved(key)
			errs = append(errs, fmt.Errorf("create endpointslice for %s: %w", key, err))
		}
	}
	for _, s := range plan.Update {
		if stamp != nil {
			stamp(s)
		}
		got, err := w.client.DiscoveryV1().EndpointSlices(s.Namespace).Update(ctx, s, metav1.UpdateOptions{})
		if err != nil {
			errs = append(errs, fmt.Errorf("update endpointslice %s/%s: %w", s.Namespace, s.Name, err))
			continue
		}
		w.remember(got)
	}
	for _, s := range plan.Delete {
		err := w.client.DiscoveryV1().EndpointSlices(s.Namespace).Delete(ctx, s.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &s.UID}})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("delete endpointslice %s/%s: %w", s.Namespace, s.Name, err))
			continue
		}
		w.mu.Lock()
		w.deleted[s.UID] = key
		w.mu.Unlock()
	}
	return errors.Join(errs...)
}
