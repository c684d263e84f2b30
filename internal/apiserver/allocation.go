package apiserver

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/storage"
)

// Allocator hands out values the API server assigns at write time and
// that must be unique across objects (service cluster IPs and node
// ports). The write paths call it after validation, just before the etcd
// write, for every kind; it ignores kinds it does not allocate for.
type Allocator interface {
	// Allocate fills in what obj needs; old is the stored object on
	// update, nil on create. With dryRun it only checks and fills in
	// values without reserving them. done is called once with whether
	// the write was stored: it returns new values when it was not, so
	// nothing leaks, and frees what old held and obj no longer does when
	// it was, so nothing is freed that is still in use.
	Allocate(ctx context.Context, obj, old runtime.Object, dryRun bool) (done func(stored bool), err error)
	// Release frees what a deleted object held.
	Release(ctx context.Context, obj runtime.Object)
}

func settleNothing(bool) {}

// allocate runs the configured Allocator, if any.
func (s *Server) allocate(ctx context.Context, obj, old runtime.Object, dryRun bool) (func(bool), error) {
	if s.cfg.Allocator == nil {
		return settleNothing, nil
	}
	done, err := s.cfg.Allocator.Allocate(ctx, obj, old, dryRun)
	if err != nil {
		return nil, err
	}
	if done == nil {
		done = settleNothing
	}
	return done, nil
}

// release frees a deleted object's allocations.
func (s *Server) release(ctx context.Context, obj runtime.Object) {
	if s.cfg.Allocator != nil && obj != nil {
		s.cfg.Allocator.Release(context.WithoutCancel(ctx), obj)
	}
}

// allocatingUpdate wraps an update function so that each attempt
// allocates for its result. An attempt that loses a conflict in etcd is
// followed by another, so the previous attempt's allocations are returned
// first; settle reports the outcome of the last one.
func (s *Server) allocatingUpdate(ctx context.Context, fn storage.UpdateFunc, dryRun bool) (wrapped storage.UpdateFunc, settle func(stored bool)) {
	if s.cfg.Allocator == nil {
		return fn, settleNothing
	}
	pending := settleNothing
	settle = func(stored bool) {
		pending(stored)
		pending = settleNothing
	}
	return func(cur runtime.Object) (runtime.Object, error) {
		settle(false)
		next, err := fn(cur)
		if err != nil {
			return nil, err
		}
		done, err := s.allocate(ctx, next, cur, dryRun)
		if err != nil {
			return nil, err
		}
		pending = done
		return next, nil
	}, settle
}
