package cache

import (
	"context"
	"errors"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/watch"
)

// watchFromEtcd serves a watch that starts before the cache's history
// from an etcd watch of its own. Without it every client resuming after a
// server restart would be told to relist (a relist storm), although etcd
// still holds the events it missed. When etcd has compacted them the
// watcher's only event is a watch.Error carrying ErrTooOld (etcd reports
// compaction after accepting the watch).
func (c *Cache) watchFromEtcd(opts WatchOptions) (*Watcher, error) {
	prefix := c.cfg.Prefix
	if opts.Namespace != "" {
		prefix += opts.Namespace + "/"
	}
	ctx, cancel := context.WithCancel(clientv3.WithRequireLeader(context.Background()))
	wch := c.cfg.Client.Watch(ctx, prefix, clientv3.WithPrefix(), clientv3.WithRev(opts.From+1),
		clientv3.WithPrevKV(), clientv3.WithCreatedNotify())
	var first clientv3.WatchResponse
	var ok bool
	select {
	case first, ok = <-wch:
	case <-time.After(10 * time.Second):
		ok = false
	}
	if !ok {
		cancel()
		return nil, errors.New("etcd did not accept the watch")
	}
	if err := first.Err(); err != nil {
		cancel()
		if errors.Is(err, rpctypes.ErrCompacted) {
			return nil, ErrTooOld
		}
		return nil, err
	}
	w := &Watcher{ch: make(chan Event, opts.Buffer), opts: opts, name: c.cfg.Name, cancel: cancel}
	watchersGauge.WithLabelValues(c.cfg.Name).Inc()
	go func() {
		defer watchersGauge.WithLabelValues(c.cfg.Name).Dec()
		defer close(w.ch)
		defer cancel()
		for resp := range wch {
			if err := resp.Err(); err != nil {
				if errors.Is(err, rpctypes.ErrCompacted) {
					err = ErrTooOld
				}
				select {
				case w.ch <- Event{Type: watch.Error, Err: err}:
				case <-ctx.Done():
				}
				return
			}
			for _, ev := range resp.Events {
				e, ok := c.decodeEvent(ev, true)
				if !ok {
					continue
				}
				out, ok := filter(opts, e)
				if !ok {
					continue
				}
				select {
				case w.ch <- out:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return w, nil
}

// decodeEvent turns one etcd event into a cache event, with its previous
// object when withPrev is set (the cache itself knows the previous object
// and skips that decode).
func (c *Cache) decodeEvent(ev *clientv3.Event, withPrev bool) (Event, bool) {
	e := Event{Rev: ev.Kv.ModRevision}
	if withPrev && ev.PrevKv != nil {
		prev, err := c.decode(ev.PrevKv.Key, ev.PrevKv.Value, ev.PrevKv.ModRevision)
		if err == nil {
			e.Prev = prev
		}
	}
	if ev.Type == mvccpb.DELETE {
		if ev.PrevKv == nil {
			return e, false
		}
		obj, err := c.decode(ev.PrevKv.Key, ev.PrevKv.Value, ev.Kv.ModRevision)
		if err != nil {
			c.cfg.Log.Error("skipping undecodable object", "key", string(ev.Kv.Key), "err", err)
			return e, false
		}
		e.Type, e.Object = watch.Deleted, obj
		return e, true
	}
	obj, err := c.decode(ev.Kv.Key, ev.Kv.Value, ev.Kv.ModRevision)
	if err != nil {
		c.cfg.Log.Error("skipping undecodable object", "key", string(ev.Kv.Key), "err", err)
		return e, false
	}
	e.Object = obj
	e.Type = watch.Added
	if !ev.IsCreate() {
		e.Type = watch.Modified
	}
	return e, true
}
