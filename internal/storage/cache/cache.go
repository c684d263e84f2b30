// Package cache is the watch cache: one per resource, it mirrors the
// resource's etcd prefix in memory from a single etcd watch, serves lists
// from memory and fans every change out to any number of watchers, so that
// a thousand watchers cost etcd one watch.
package cache

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/btree"
	"github.com/prometheus/client_golang/prometheus"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/storage/value"

	"github.com/orca-project/orca/internal/storage"
)

// ErrTooOld is returned for a watch from a revision the cache no longer
// holds events for; clients must relist (HTTP 410 Gone).
var ErrTooOld = errors.New("cache: resource version too old")

// ErrStopped is returned by a cache that no longer runs: its resource is
// no longer served (a custom resource whose CRD changed or went).
var ErrStopped = errors.New("cache: stopped")

// ErrNotFresh is returned when the cache could not catch up with etcd in
// time; callers fall back to reading etcd.
var ErrNotFresh = errors.New("cache: not fresh enough")

var watchersGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "apiserver_registered_watchers",
	Help: "Number of currently registered watchers for a given resource.",
}, []string{"resource"})

var cacheEvents = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "apiserver_watch_cache_events_received_total",
	Help: "Number of events received from etcd by the watch cache of a resource.",
}, []string{"resource"})

// Collectors returns the package's metrics for registration.
func Collectors() []prometheus.Collector {
	return []prometheus.Collector{watchersGauge, cacheEvents}
}

// Event is one change seen by the cache. Objects are shared with the cache
// and with other watchers: readers must not modify them.
type Event struct {
	Type   watch.EventType
	Object runtime.Object
	// Prev is the object before a MODIFIED or DELETED event.
	Prev runtime.Object
	Rev  int64
	// InitialEventsEnd marks the bookmark that ends a watch's initial
	// events (sendInitialEvents=true).
	InitialEventsEnd bool
	// Err is set on a watch.Error event, the last a watcher receives.
	Err error
}

type entry struct {
	key string
	obj runtime.Object
}

func less(a, b *entry) bool { return a.key < b.key }

// Config describes the resource a cache mirrors.
type Config struct {
	Client *clientv3.Client
	Codec  *storage.Codec
	// Transformer, when set, turns etcd's values back into what Codec
	// reads (decryption); the store that writes the resource uses the same.
	Transformer value.Transformer
	Prefix      string // etcd key prefix, ending in "/"
	Name        string // resource name, for metrics and logs
	New         func() runtime.Object
	// NewBookmark returns an empty object of the resource, to carry a
	// bookmark's resourceVersion.
	NewBookmark func() runtime.Object
	// History is how many events the cache keeps for watches that resume
	// from an older revision.
	History int
	Log     *slog.Logger
}

// Cache mirrors one resource.
type Cache struct {
	cfg Config

	mu      sync.RWMutex
	items   *btree.BTreeG[*entry]
	rev     int64
	ring    []Event // circular history of the latest events
	ringPos int     // index of the next write
	ringLen int
	// oldest is the lowest revision from which a watch can resume.
	oldest   int64
	watchers map[*Watcher]struct{}
	// fresh is closed and replaced whenever rev advances.
	fresh chan struct{}
	ready chan struct{}
	// stopped is closed when Run returns.
	stopped chan struct{}

	watchCtx context.Context
}

// New returns a cache; Run fills and maintains it.
func New(cfg Config) *Cache {
	if cfg.History <= 0 {
		cfg.History = 1024
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	return &Cache{
		cfg:      cfg,
		items:    btree.NewG(32, less),
		ring:     make([]Event, cfg.History),
		watchers: map[*Watcher]struct{}{},
		fresh:    make(chan struct{}),
		ready:    make(chan struct{}),
		stopped:  make(chan struct{}),
	}
}

// Ready is closed once the cache holds a complete copy of the resource.
func (c *Cache) Ready() <-chan struct{} { return c.ready }

// Run lists the resource and follows its changes until ctx ends,
// relisting whenever the watch breaks beyond repair.
func (c *Cache) Run(ctx context.Context) {
	readyOnce := sync.Once{}
	ready := func() { readyOnce.Do(func() { close(c.ready) }) }
	for ctx.Err() == nil {
		rev, cur, err := c.relist(ctx)
		if err != nil {
			c.cfg.Log.Warn("watch cache list failed", "resource", c.cfg.Name, "err", err)
			sleep(ctx, time.Second)
			continue
		}
		err = c.follow(ctx, rev, cur, ready)
		if ctx.Err() == nil {
			c.cfg.Log.Warn("watch cache lost its etcd watch; relisting", "resource", c.cfg.Name, "err", err)
			sleep(ctx, 100*time.Millisecond)
		}
	}
	c.mu.Lock()
	for w := range c.watchers {
		c.stopLocked(w)
	}
	c.mu.Unlock()
	close(c.stopped)
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// relist replaces the cache's contents with a fresh read of etcd. Watchers
// cannot be told what changed in between, so they are closed and resume
// from their last revision (or relist, if that is now too old).
//
// The read is taken up to History revisions in the past, when etcd still
// has them, and follow replays the events since into the history: a
// client may then resume a watch from a revision older than this relist,
// such as the last one it saw before the API server restarted, instead of
// relisting. It returns the revision read at and etcd's revision when the
// relist began, which the cache has caught up with once it reaches it.
func (c *Cache) relist(ctx context.Context) (int64, int64, error) {
	head, err := c.cfg.Client.Get(ctx, c.cfg.Prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		return 0, 0, fmt.Errorf("list %s: %w", c.cfg.Prefix, err)
	}
	cur := head.Header.Revision
	// Each revision changes at most one key of the prefix, so the events
	// of the replay fit in the history.
	rev := max(cur-int64(len(c.ring)), 1)
	items, err := c.listAt(ctx, rev)
	if errors.Is(err, rpctypes.ErrCompacted) {
		rev = cur
		items, err = c.listAt(ctx, rev)
	}
	if err != nil {
		return 0, 0, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.items = items
	// The contents are those of rev now, which may be older than what the
	// cache held: readers that need more wait for the replay (WaitFresh).
	c.rev = rev
	c.ringLen, c.ringPos = 0, 0
	c.oldest = rev
	for w := range c.watchers {
		c.stopLocked(w)
	}
	c.advanceLocked()
	return rev, cur, nil
}

// listAt reads the resource's objects at revision rev.
func (c *Cache) listAt(ctx context.Context, rev int64) (*btree.BTreeG[*entry], error) {
	items := btree.NewG(32, less)
	start := c.cfg.Prefix
	end := clientv3.GetPrefixRangeEnd(c.cfg.Prefix)
	for {
		resp, err := c.cfg.Client.Get(ctx, start, clientv3.WithRange(end), clientv3.WithLimit(1000), clientv3.WithRev(rev))
		if err != nil {
			return nil, fmt.Errorf("list %s at %d: %w", c.cfg.Prefix, rev, err)
		}
		for _, kv := range resp.Kvs {
			obj, err := c.decode(kv.Key, kv.Value, kv.ModRevision)
			if err != nil {
				c.cfg.Log.Error("skipping undecodable object", "key", string(kv.Key), "err", err)
				continue
			}
			items.ReplaceOrInsert(&entry{key: string(kv.Key), obj: obj})
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return items, nil
		}
		start = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}

// decode reads one stored value of the resource, revision rev.
func (c *Cache) decode(key, data []byte, rev int64) (runtime.Object, error) {
	plain, _, err := storage.FromStorage(context.Background(), c.cfg.Transformer, string(key), data)
	if err != nil {
		return nil, err
	}
	return c.cfg.Codec.Decode(plain, rev, c.cfg.New)
}

// follow applies etcd's events after rev until the watch breaks, calling
// caughtUp once the cache has reached revision target.
func (c *Cache) follow(ctx context.Context, rev, target int64, caughtUp func()) error {
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	c.mu.Lock()
	c.watchCtx = wctx
	c.mu.Unlock()
	wch := c.cfg.Client.Watch(wctx, c.cfg.Prefix, clientv3.WithPrefix(),
		clientv3.WithRev(rev+1), clientv3.WithProgressNotify(), clientv3.WithPrevKV())
	bookmarks := time.NewTicker(5 * time.Second)
	defer bookmarks.Stop()
	// A prefix without events since rev has nothing to carry the cache to
	// target but a progress notification, and etcd ignores progress
	// requests while a watch is still replaying history: ask until done.
	catchUp := time.NewTicker(50 * time.Millisecond)
	defer catchUp.Stop()
	checkCaughtUp := func() {
		if caughtUp != nil && c.Revision() >= target {
			caughtUp()
			caughtUp = nil
			catchUp.Stop()
		}
	}
	checkCaughtUp()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-catchUp.C:
			if err := c.cfg.Client.RequestProgress(wctx); err != nil {
				c.cfg.Log.Debug("request progress failed", "resource", c.cfg.Name, "err", err)
			}
		case now := <-bookmarks.C:
			c.sendBookmarks(now)
		case resp, ok := <-wch:
			if !ok {
				return errors.New("watch channel closed")
			}
			if err := resp.Err(); err != nil {
				return err
			}
			if resp.IsProgressNotify() {
				c.mu.Lock()
				if resp.Header.Revision > c.rev {
					c.rev = resp.Header.Revision
					c.advanceLocked()
				}
				c.mu.Unlock()
				checkCaughtUp()
				continue
			}
			c.apply(resp.Events)
			checkCaughtUp()
		}
	}
}

// apply folds a batch of etcd events into the cache and fans them out.
func (c *Cache) apply(evs []*clientv3.Event) {
	decoded := make([]Event, 0, len(evs))
	keys := make([]string, 0, len(evs))
	for _, ev := range evs {
		if e, ok := c.decodeEvent(ev, false); ok {
			decoded = append(decoded, e)
			keys = append(keys, string(ev.Kv.Key))
		}
	}
	cacheEvents.WithLabelValues(c.cfg.Name).Add(float64(len(decoded)))
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range decoded {
		e := &decoded[i]
		key := keys[i]
		if prev, ok := c.items.Get(&entry{key: key}); ok {
			e.Prev = prev.obj
		}
		if e.Type == watch.Deleted {
			c.items.Delete(&entry{key: key})
		} else {
			c.items.ReplaceOrInsert(&entry{key: key, obj: e.Object})
		}
		if e.Type == watch.Modified && e.Prev == nil {
			e.Type = watch.Added
		}
		c.record(*e)
		c.rev = e.Rev
		for w := range c.watchers {
			w.offer(c, *e)
		}
	}
	c.advanceLocked()
}

func (c *Cache) record(e Event) {
	if c.ringLen == len(c.ring) {
		// Overwriting the oldest event: resuming before it is no longer
		// possible.
		c.oldest = c.ring[c.ringPos].Rev
	} else {
		c.ringLen++
	}
	c.ring[c.ringPos] = e
	c.ringPos = (c.ringPos + 1) % len(c.ring)
}

func (c *Cache) advanceLocked() {
	close(c.fresh)
	c.fresh = make(chan struct{})
}

// Revision returns the revision the cache has caught up to.
func (c *Cache) Revision() int64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.rev
}

// WaitFresh blocks until the cache has seen revision rev, asking etcd for
// a progress notification so that an idle resource catches up at once. It
// gives up with ErrNotFresh after timeout, and with ErrStopped at once
// once the cache no longer runs.
func (c *Cache) WaitFresh(ctx context.Context, rev int64, timeout time.Duration) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	asked := false
	for {
		c.mu.RLock()
		cur, fresh, wctx := c.rev, c.fresh, c.watchCtx
		c.mu.RUnlock()
		if cur >= rev {
			return nil
		}
		if !asked && wctx != nil {
			asked = true
			if err := c.cfg.Client.RequestProgress(wctx); err != nil {
				c.cfg.Log.Debug("request progress failed", "resource", c.cfg.Name, "err", err)
			}
		}
		select {
		case <-fresh:
		case <-c.stopped:
			return ErrStopped
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return ErrNotFresh
		}
	}
}

// List returns the objects that match, in key order, and the revision they
// were read at. A non-empty namespace narrows the range to its keys.
func (c *Cache) List(namespace string, match func(runtime.Object) bool) ([]runtime.Object, int64) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var out []runtime.Object
	visit := func(e *entry) bool {
		if match == nil || match(e.obj) {
			out = append(out, e.obj)
		}
		return true
	}
	c.ascend(namespace, visit)
	return out, c.rev
}

// Len returns how many objects the cache holds, which API Priority and
// Fairness reads as the cost of a list.
func (c *Cache) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.items.Len()
}

// Get returns the cached object at key.
func (c *Cache) Get(key string) (runtime.Object, int64, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	e, ok := c.items.Get(&entry{key: key})
	if !ok {
		return nil, c.rev, false
	}
	return e.obj, c.rev, true
}

// ascend visits the cached objects of a namespace (all, when empty) in key
// order. Keys of namespaced resources are PREFIX<namespace>/<name>.
func (c *Cache) ascend(namespace string, visit func(*entry) bool) {
	if namespace == "" {
		c.items.Ascend(visit)
		return
	}
	p := c.cfg.Prefix + namespace + "/"
	c.items.AscendRange(&entry{key: p}, &entry{key: clientv3.GetPrefixRangeEnd(p)}, visit)
}
