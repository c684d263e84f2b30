package allocator

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/storage"
)

// servicesPrefix is where the API server keeps services.
const servicesPrefix = "/registry/services/"

// leakedRepairs is how many consecutive repairs must find a value held by
// no service before it is freed. A create allocates before it writes the
// service, so one sighting may be a create in flight; upstream waits the
// same three rounds.
const leakedRepairs = 3

// RunRepair repairs the ranges every interval until ctx ends.
func (a *Services) RunRepair(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := a.Repair(ctx); err != nil && ctx.Err() == nil {
			a.log.Warn("repair of service IP and node port ranges", "err", err)
		}
	}
}

// Repair makes the ranges agree with the stored services: values a
// service holds are marked (a range restored from an older backup, or
// services from before the range existed), and values no service has held
// for several repairs are freed (a crash between allocating and writing
// the service, or between deleting it and releasing). A range that
// changed while the services were read is left for the next round. Then
// the IPAddress objects are made to agree with the services (see
// planIPAddresses).
func (a *Services) Repair(ctx context.Context) error {
	a.repairMu.Lock()
	defer a.repairMu.Unlock()
	var errs []error
	for attempt := 0; attempt < 3; attempt++ {
		errs = errs[:0]
		conflict := false
		for _, r := range []struct {
			rng     *Range
			offsets func(*corev1.Service) []int
		}{{a.ipRange, a.ipOffsets}, {a.ptRange, a.portOffsets}} {
			err := a.repair(ctx, r.rng, r.offsets)
			if errors.Is(err, storage.ErrConflict) {
				conflict = true
				continue
			}
			if err != nil {
				errs = append(errs, err)
			}
		}
		if !conflict {
			break
		}
	}
	if err := a.repairIPAddresses(ctx); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func (a *Services) repair(ctx context.Context, r *Range, offsets func(*corev1.Service) []int) error {
	// The range is read before the services: an allocation after this
	// read changes the range's revision and the write below fails.
	stored, rev, err := r.Snapshot(ctx)
	if err != nil {
		return err
	}
	list, err := a.store.List(ctx, servicesPrefix, "services", func() runtime.Object { return &corev1.Service{} }, storage.ListOptions{})
	if err != nil {
		return fmt.Errorf("repair %s: list services: %w", r.key, err)
	}
	used := NewBitmap(r.size, r.static)
	for _, obj := range list.Items {
		svc := obj.(*corev1.Service)
		for _, off := range offsets(svc) {
			if err := used.Allocate(off); err != nil {
				a.log.Warn("two services hold the same value", "range", r.key, "offset", off, "service", svc.Namespace+"/"+svc.Name)
			} else if !stored.Has(off) {
				a.log.Info("marking a value held by a service as allocated", "range", r.key, "offset", off, "service", svc.Namespace+"/"+svc.Name)
			}
		}
	}
	seen := a.leaks[r.key]
	next := map[int]int{}
	for _, off := range stored.Offsets() {
		if used.Has(off) {
			continue
		}
		next[off] = seen[off] + 1
		if next[off] < leakedRepairs {
			_ = used.Allocate(off)
			continue
		}
		a.log.Info("freeing a value no service holds", "range", r.key, "offset", off)
		delete(next, off)
	}
	a.leaks[r.key] = next
	if equalBitmaps(used, stored) {
		return nil
	}
	return r.Replace(ctx, used, rev)
}

func equalBitmaps(a, b *Bitmap) bool {
	if a.size != b.size || a.count != b.count {
		return false
	}
	for i := range a.words {
		if a.words[i] != b.words[i] {
			return false
		}
	}
	return true
}
