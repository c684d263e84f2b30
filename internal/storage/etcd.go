package storage

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/storage/value"
)

// etcdDuration is etcd request latency as upstream names it.
var etcdDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
	Name:    "etcd_request_duration_seconds",
	Help:    "Etcd request latency in seconds for each operation and object type.",
	Buckets: []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5},
}, []string{"operation", "type"})

// Collectors returns the package's Prometheus metrics for registration.
func Collectors() []prometheus.Collector { return []prometheus.Collector{etcdDuration} }

// Store reads and writes objects in etcd. It holds no state of its own
// beyond the client, so any number of API servers may share one etcd.
type Store struct {
	client *clientv3.Client
	codec  *Codec
	// transformer, when set, turns encoded objects into the values kept
	// in etcd and back (encryption at rest).
	transformer value.Transformer
}

// NewStore returns a store over an etcd client.
func NewStore(client *clientv3.Client, codec *Codec) *Store {
	return &Store{client: client, codec: codec}
}

// Client exposes the etcd client to the watch cache.
func (s *Store) Client() *clientv3.Client { return s.client }

// Codec returns the store's codec.
func (s *Store) Codec() *Codec { return s.codec }

func observe(op, typ string, start time.Time) {
	etcdDuration.WithLabelValues(op, typ).Observe(time.Since(start).Seconds())
}

// Create stores obj under key unless the key exists. obj's resourceVersion
// is set to the revision of the write.
func (s *Store) Create(ctx context.Context, key, typ string, obj runtime.Object) error {
	if err := SetResourceVersion(obj, 0); err != nil {
		return err
	}
	data, err := s.codec.Encode(obj)
	if err != nil {
		return err
	}
	defer observe("create", typ, time.Now())
	release := s.holdWrite()
	stored, err := s.toStorage(ctx, key, data)
	if err != nil {
		release()
		return fmt.Errorf("create %s: %w", key, err)
	}
	resp, err := s.client.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, string(stored))).
		Commit()
	release()
	if err != nil {
		return fmt.Errorf("create %s: %w", key, err)
	}
	if !resp.Succeeded {
		return ErrAlreadyExists
	}
	return SetResourceVersion(obj, resp.Header.Revision)
}

// Get reads the object at key with a linearizable read.
func (s *Store) Get(ctx context.Context, key, typ string, newObj func() runtime.Object) (runtime.Object, error) {
	defer observe("get", typ, time.Now())
	resp, err := s.client.Get(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", key, err)
	}
	if len(resp.Kvs) == 0 {
		return nil, ErrNotFound
	}
	kv := resp.Kvs[0]
	obj, _, _, err := s.decode(ctx, key, kv.Value, kv.ModRevision, newObj)
	return obj, err
}

// UpdateFunc computes the next version of an object from the current one.
// It receives a private copy and may modify and return it. Returning an
// error aborts the update with that error.
type UpdateFunc func(current runtime.Object) (runtime.Object, error)

// GuaranteedUpdate applies update to the current object at key and writes
// the result, retrying from a fresh read whenever another writer got there
// first. hint, if not nil, is a recent copy (from a cache) that saves the
// first read; a stale hint only costs a retry. When update returns an
// object that encodes to the same bytes, nothing is written and the current
// object is returned unchanged, as upstream does for no-op updates, unless
// the stored value was read with a provider other than the writing one
// (an old encryption key): then it is written again, with the current key.
func (s *Store) GuaranteedUpdate(ctx context.Context, key, typ string, newObj func() runtime.Object, hint runtime.Object, update UpdateFunc) (runtime.Object, error) {
	var cur runtime.Object
	var curRev int64
	// curData is the current object as the codec encodes it (before any
	// encryption), to recognise no-op updates.
	var curData []byte
	var curStale bool
	read := func() error {
		resp, err := s.client.Get(ctx, key)
		if err != nil {
			return fmt.Errorf("get %s: %w", key, err)
		}
		if len(resp.Kvs) == 0 {
			return ErrNotFound
		}
		kv := resp.Kvs[0]
		curRev = kv.ModRevision
		cur, curData, curStale, err = s.decode(ctx, key, kv.Value, kv.ModRevision, newObj)
		return err
	}
	if hint != nil {
		cur = hint.DeepCopyObject()
		rv, err := resourceVersionOf(cur)
		if err != nil {
			return nil, err
		}
		curRev = rv
		if err := SetResourceVersion(cur, 0); err != nil {
			return nil, err
		}
		if curData, err = s.codec.Encode(cur); err != nil {
			return nil, err
		}
		if err := SetResourceVersion(cur, rv); err != nil {
			return nil, err
		}
	} else if err := read(); err != nil {
		return nil, err
	}
	for {
		next, err := update(cur.DeepCopyObject())
		if err != nil {
			return nil, err
		}
		if err := SetResourceVersion(next, 0); err != nil {
			return nil, err
		}
		data, err := s.codec.Encode(next)
		if err != nil {
			return nil, err
		}
		if bytes.Equal(data, curData) && !curStale {
			// Verify the hint was current (and its stored value not
			// stale) before claiming a no-op.
			if hint != nil {
				hint = nil
				if err := read(); err != nil {
					return nil, err
				}
				continue
			}
			return cur, nil
		}
		start := time.Now()
		release := s.holdWrite()
		stored, err := s.toStorage(ctx, key, data)
		if err != nil {
			release()
			return nil, fmt.Errorf("update %s: %w", key, err)
		}
		resp, err := s.client.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(key), "=", curRev)).
			Then(clientv3.OpPut(key, string(stored))).
			Else(clientv3.OpGet(key)).
			Commit()
		release()
		observe("update", typ, start)
		if err != nil {
			return nil, fmt.Errorf("update %s: %w", key, err)
		}
		if resp.Succeeded {
			if err := SetResourceVersion(next, resp.Header.Revision); err != nil {
				return nil, err
			}
			return next, nil
		}
		hint = nil
		kvs := resp.Responses[0].GetResponseRange().Kvs
		if len(kvs) == 0 {
			return nil, ErrNotFound
		}
		curRev = kvs[0].ModRevision
		if cur, curData, curStale, err = s.decode(ctx, key, kvs[0].Value, curRev, newObj); err != nil {
			return nil, err
		}
	}
}

// DeleteFunc checks whether the current object may be deleted.
type DeleteFunc func(current runtime.Object) error

// Delete removes the object at key if check accepts the current object,
// retrying on concurrent writes. It returns the deleted object with its
// resourceVersion set to the revision of the deletion.
func (s *Store) Delete(ctx context.Context, key, typ string, newObj func() runtime.Object, check DeleteFunc) (runtime.Object, error) {
	resp, err := s.client.Get(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", key, err)
	}
	for {
		if len(resp.Kvs) == 0 {
			return nil, ErrNotFound
		}
		kv := resp.Kvs[0]
		cur, _, _, err := s.decode(ctx, key, kv.Value, kv.ModRevision, newObj)
		if err != nil {
			return nil, err
		}
		if check != nil {
			if err := check(cur); err != nil {
				return nil, err
			}
		}
		start := time.Now()
		txn, err := s.client.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(key), "=", kv.ModRevision)).
			Then(clientv3.OpDelete(key)).
			Else(clientv3.OpGet(key)).
			Commit()
		observe("delete", typ, start)
		if err != nil {
			return nil, fmt.Errorf("delete %s: %w", key, err)
		}
		if txn.Succeeded {
			if err := SetResourceVersion(cur, txn.Header.Revision); err != nil {
				return nil, err
			}
			return cur, nil
		}
		rr := txn.Responses[0].GetResponseRange()
		resp = &clientv3.GetResponse{Header: rr.Header, Kvs: rr.Kvs}
	}
}

// ListOptions selects a page of a key range.
type ListOptions struct {
	// Revision reads at an older revision; 0 reads the latest.
	Revision int64
	// Start is the first key to read (inclusive); empty means the prefix.
	Start string
	// Limit is the most matching objects to return; 0 is no limit.
	Limit int64
	// Match filters objects; nil keeps all.
	Match func(runtime.Object) bool
}

// ListResult is one page of a list.
type ListResult struct {
	Items    []runtime.Object
	Revision int64
	// Next is the key to continue from, empty when the range is exhausted.
	Next string
	// Remaining counts keys after this page when no filter is applied.
	Remaining *int64
}

// List reads objects under prefix at one revision, in key order. With a
// Limit and a Match filter it keeps reading until the page is full, so a
// selective filter does not yield empty pages.
func (s *Store) List(ctx context.Context, prefix, typ string, newObj func() runtime.Object, opts ListOptions) (*ListResult, error) {
	defer observe("list", typ, time.Now())
	end := clientv3.GetPrefixRangeEnd(prefix)
	start := opts.Start
	if start == "" {
		start = prefix
	}
	out := &ListResult{Revision: opts.Revision}
	batch := opts.Limit
	if batch > 0 && batch < 100 && opts.Match != nil {
		batch = 100
	}
	for {
		getOpts := []clientv3.OpOption{clientv3.WithRange(end)}
		if batch > 0 {
			getOpts = append(getOpts, clientv3.WithLimit(batch))
		}
		if out.Revision > 0 {
			getOpts = append(getOpts, clientv3.WithRev(out.Revision))
		}
		resp, err := s.client.Get(ctx, start, getOpts...)
		if err != nil {
			if err == rpctypes.ErrCompacted {
				return nil, ErrCompacted
			}
			return nil, fmt.Errorf("list %s: %w", prefix, err)
		}
		if out.Revision == 0 {
			out.Revision = resp.Header.Revision
		}
		for i, kv := range resp.Kvs {
			obj, _, _, err := s.decode(ctx, string(kv.Key), kv.Value, kv.ModRevision, newObj)
			if err != nil {
				return nil, err
			}
			if opts.Match != nil && !opts.Match(obj) {
				continue
			}
			out.Items = append(out.Items, obj)
			if opts.Limit > 0 && int64(len(out.Items)) == opts.Limit {
				last := string(kv.Key)
				if i < len(resp.Kvs)-1 || resp.More {
					out.Next = last + "\x00"
					if opts.Match == nil {
						rem := resp.Count - int64(i) - 1
						out.Remaining = &rem
					}
				}
				return out, nil
			}
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return out, nil
		}
		start = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}

// CurrentRevision returns etcd's latest revision with a linearizable read.
func (s *Store) CurrentRevision(ctx context.Context) (int64, error) {
	resp, err := s.client.Get(ctx, "/registry/health", clientv3.WithCountOnly())
	if err != nil {
		return 0, fmt.Errorf("read current revision: %w", err)
	}
	return resp.Header.Revision, nil
}

func resourceVersionOf(obj runtime.Object) (int64, error) {
	acc, err := meta.Accessor(obj)
	if err != nil {
		return 0, err
	}
	return ParseResourceVersion(acc.GetResourceVersion())
}
