package storage

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/storage/value"
)

// WriteFence is implemented by transformers whose writing key can change
// while the server runs (encryption key rotation). A store holds the fence
// from transforming a value until etcd has answered the write, so that a
// key change can wait out every write still using the previous key: once
// it returns, no value written with that key can still be on its way.
type WriteFence interface {
	HoldWrite() (release func())
}

// WithTransformer returns a store like s (same client and codec) whose
// values pass through t (encryption at rest) between the codec and etcd,
// with the object's etcd key as authenticated data, as upstream does. A nil
// t stores values as the codec encodes them.
func (s *Store) WithTransformer(t value.Transformer) *Store {
	cp := *s
	cp.transformer = t
	return &cp
}

// Transformer returns the store's value transformer, nil if none.
func (s *Store) Transformer() value.Transformer { return s.transformer }

// FromStorage undoes t's transformation of a value stored under key. stale
// reports that a provider other than the writing one read it, so that the
// next update writes it even when the object is unchanged. A nil t returns
// data as it is.
func FromStorage(ctx context.Context, t value.Transformer, key string, data []byte) (out []byte, stale bool, err error) {
	if t == nil {
		return data, false, nil
	}
	return t.TransformFromStorage(ctx, data, value.DefaultContext(key))
}

// holdWrite holds the transformer's write fence, if it has one.
func (s *Store) holdWrite() func() {
	if f, ok := s.transformer.(WriteFence); ok {
		return f.HoldWrite()
	}
	return func() {}
}

// toStorage transforms an encoded object for etcd.
func (s *Store) toStorage(ctx context.Context, key string, data []byte) ([]byte, error) {
	if s.transformer == nil {
		return data, nil
	}
	return s.transformer.TransformToStorage(ctx, data, value.DefaultContext(key))
}

// decode reads a stored value into an object; see FromStorage for stale.
func (s *Store) decode(ctx context.Context, key string, data []byte, rev int64, newObj func() runtime.Object) (runtime.Object, []byte, bool, error) {
	plain, stale, err := FromStorage(ctx, s.transformer, key, data)
	if err != nil {
		return nil, nil, false, fmt.Errorf("read %s: %w", key, err)
	}
	obj, err := s.codec.Decode(plain, rev, newObj)
	if err != nil {
		return nil, nil, false, err
	}
	return obj, plain, stale, nil
}
