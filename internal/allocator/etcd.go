package allocator

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/storage"
)

// Keys of the persisted ranges, where upstream keeps them.
const (
	ServiceIPsKey       = "/registry/ranges/serviceips"
	ServiceNodePortsKey = "/registry/ranges/servicenodeports"
)

const rangeType = "rangeallocations"

// Range is a bitmap kept in etcd as one core/v1 RangeAllocation (range
// and data, upstream's format). Every change is a read-modify-write with
// a compare on the key's ModRevision, so concurrent writers, in this
// process or in other API servers, can never both take one offset: the
// loser rereads and tries again. Within a process a mutex serialises the
// writers, so they queue instead of colliding in etcd.
type Range struct {
	store  *storage.Store
	key    string
	spec   string
	size   int
	static int

	mu   sync.Mutex
	rnd  *rand.Rand
	last runtime.Object // last stored RangeAllocation: saves the read before a write
}

// NewRange describes a range of size offsets (spec is its human form,
// "10.43.0.0/16") kept under key.
func NewRange(store *storage.Store, key, spec string, size, static int) *Range {
	return &Range{store: store, key: key, spec: spec, size: size, static: static,
		rnd: rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))}
}

func newRangeAllocation() runtime.Object { return &corev1.RangeAllocation{} }

// Init creates the key if it is missing. A stored range of another spec
// (the flag changed) is replaced by an empty one; the caller's repair then
// marks what existing services hold inside the new range.
func (r *Range) Init(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	ra := &corev1.RangeAllocation{Range: r.spec}
	storage.SetKind(ra, corev1.SchemeGroupVersion.WithKind("RangeAllocation"))
	err := r.store.Create(ctx, r.key, rangeType, ra)
	if err == nil {
		r.last = ra
		return nil
	}
	if !errors.Is(err, storage.ErrAlreadyExists) {
		return fmt.Errorf("create range %s: %w", r.key, err)
	}
	out, err := r.store.GuaranteedUpdate(ctx, r.key, rangeType, newRangeAllocation, nil, func(cur runtime.Object) (runtime.Object, error) {
		ra := cur.(*corev1.RangeAllocation)
		if ra.Range != r.spec {
			ra.Range, ra.Data = r.spec, nil
		}
		return ra, nil
	})
	if err != nil {
		return fmt.Errorf("initialise range %s: %w", r.key, err)
	}
	r.last = out
	return nil
}

// decode reads a stored RangeAllocation into a bitmap.
func (r *Range) decode(obj runtime.Object) (*Bitmap, error) {
	ra := obj.(*corev1.RangeAllocation)
	if ra.Range != r.spec {
		return nil, fmt.Errorf("range %s holds %q, this server serves %q: API servers sharing an etcd must use the same range", r.key, ra.Range, r.spec)
	}
	b := NewBitmap(r.size, r.static)
	b.SetBytes(ra.Data)
	return b, nil
}

// update applies fn to the current bitmap and stores the result. fn may run
// more than once (after a conflict) and must work from its argument alone.
// The caller holds r.mu.
func (r *Range) update(ctx context.Context, fn func(*Bitmap) error) error {
	out, err := r.store.GuaranteedUpdate(ctx, r.key, rangeType, newRangeAllocation, r.last, func(cur runtime.Object) (runtime.Object, error) {
		b, err := r.decode(cur)
		if err != nil {
			return nil, err
		}
		if err := fn(b); err != nil {
			return nil, err
		}
		ra := cur.(*corev1.RangeAllocation)
		ra.Data = b.Bytes()
		return ra, nil
	})
	if err != nil {
		r.last = nil
		return err
	}
	r.last = out
	return nil
}

// Snapshot reads the stored bitmap and the revision it was read at.
func (r *Range) Snapshot(ctx context.Context) (*Bitmap, int64, error) {
	obj, err := r.store.Get(ctx, r.key, rangeType, newRangeAllocation)
	if err != nil {
		return nil, 0, fmt.Errorf("read range %s: %w", r.key, err)
	}
	b, err := r.decode(obj)
	if err != nil {
		return nil, 0, err
	}
	rv, err := storage.ParseResourceVersion(obj.(*corev1.RangeAllocation).ResourceVersion)
	return b, rv, err
}

// SpecificError says which of the requested offsets was unavailable.
type SpecificError struct {
	Index int
	Err   error
}

func (e *SpecificError) Error() string { return e.Err.Error() }
func (e *SpecificError) Unwrap() error { return e.Err }

// Reserve takes the offsets in specific and n more free ones, in one
// write, and returns the n it chose. A taken specific offset fails the
// whole reservation with a *SpecificError. With dry nothing is written:
// the answer is what a real reservation would have got at this moment.
func (r *Range) Reserve(ctx context.Context, specific []int, n int, dry bool) ([]int, error) {
	if len(specific) == 0 && n == 0 {
		return nil, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var chosen []int
	take := func(b *Bitmap) error {
		chosen = chosen[:0]
		for i, off := range specific {
			if err := b.Allocate(off); err != nil {
				return &SpecificError{Index: i, Err: err}
			}
		}
		for range n {
			off, err := b.AllocateNext(r.rnd)
			if err != nil {
				return err
			}
			chosen = append(chosen, off)
		}
		return nil
	}
	if dry {
		b, _, err := r.Snapshot(ctx)
		if err != nil {
			return nil, err
		}
		return chosen, take(b)
	}
	if err := r.update(ctx, take); err != nil {
		return nil, err
	}
	return chosen, nil
}

// Release frees offsets; freeing a free one does nothing.
func (r *Range) Release(ctx context.Context, offs []int) error {
	if len(offs) == 0 {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.update(ctx, func(b *Bitmap) error {
		for _, off := range offs {
			b.Release(off)
		}
		return nil
	})
}

// Replace stores b in place of the bitmap read at revision rev. It fails
// with storage.ErrConflict when the range changed since: an allocation
// happened meanwhile, and the caller's view of what is in use is stale.
func (r *Range) Replace(ctx context.Context, b *Bitmap, rev int64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	ra := &corev1.RangeAllocation{Range: r.spec, Data: b.Bytes()}
	storage.SetKind(ra, corev1.SchemeGroupVersion.WithKind("RangeAllocation"))
	data, err := r.store.Codec().Encode(ra)
	if err != nil {
		return err
	}
	r.last = nil
	resp, err := r.store.Client().Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(r.key), "=", rev)).
		Then(clientv3.OpPut(r.key, string(data))).
		Commit()
	if err != nil {
		return fmt.Errorf("replace range %s: %w", r.key, err)
	}
	if !resp.Succeeded {
		return storage.ErrConflict
	}
	return nil
}
