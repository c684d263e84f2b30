package cache

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/orca-project/orca/internal/storage"
)

// WatchOptions selects what a watcher receives.
type WatchOptions struct {
	// From is the revision after which events are sent. 0 starts with the
	// current state as ADDED events.
	From int64
	// SendInitialEvents sends the current state as ADDED events followed
	// by a bookmark marking their end, whatever From is.
	SendInitialEvents bool
	// Bookmarks asks for periodic BOOKMARK events.
	Bookmarks bool
	// Namespace narrows the watch to one namespace.
	Namespace string
	// Match filters objects; an object that stops matching is reported as
	// DELETED and one that starts matching as ADDED.
	Match func(runtime.Object) bool
	// Buffer is how many events may queue before a slow watcher is cut
	// off. It must absorb bursts; the client resumes from its last
	// revision after a cut.
	Buffer int
}

// Watcher receives a cache's events. Read from Events until it is closed.
type Watcher struct {
	ch           chan Event
	opts         WatchOptions
	lastBookmark time.Time
	stopped      bool
	name         string
	// cancel stops a watcher served straight from etcd.
	cancel func()
}

// Events delivers the watcher's events; it is closed when the watcher
// stops, because of Stop, a slow reader, or a cache relist.
func (w *Watcher) Events() <-chan Event { return w.ch }

// Watch starts a watcher. It fails with ErrTooOld when From is older than
// the cache's history.
func (c *Cache) Watch(opts WatchOptions) (*Watcher, error) {
	if opts.Buffer <= 0 {
		opts.Buffer = 1000
	}
	initial := opts.From == 0 || opts.SendInitialEvents
	c.mu.Lock()
	if !initial && opts.From < c.oldest {
		// Older than the cache's history (typically a client resuming
		// after a server restart): etcd may still have those events.
		c.mu.Unlock()
		return c.watchFromEtcd(opts)
	}
	defer c.mu.Unlock()
	var replay []Event
	if initial {
		visit := func(e *entry) bool {
			if opts.Match == nil || opts.Match(e.obj) {
				replay = append(replay, Event{Type: watch.Added, Object: e.obj, Rev: c.rev})
			}
			return true
		}
		c.ascend(opts.Namespace, visit)
		if opts.SendInitialEvents {
			replay = append(replay, c.bookmarkLocked(true))
		}
	} else {
		for i := 0; i < c.ringLen; i++ {
			idx := (c.ringPos - c.ringLen + i + len(c.ring)) % len(c.ring)
			e := c.ring[idx]
			if e.Rev <= opts.From {
				continue
			}
			if ev, ok := filter(opts, e); ok {
				replay = append(replay, ev)
			}
		}
	}
	w := &Watcher{
		ch:           make(chan Event, len(replay)+opts.Buffer),
		opts:         opts,
		lastBookmark: time.Now(),
		name:         c.cfg.Name,
	}
	for _, e := range replay {
		w.ch <- e
	}
	c.watchers[w] = struct{}{}
	watchersGauge.WithLabelValues(c.cfg.Name).Inc()
	return w, nil
}

// Stop ends a watcher; its channel is closed.
func (c *Cache) Stop(w *Watcher) {
	if w.cancel != nil {
		w.cancel()
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopLocked(w)
}

func (c *Cache) stopLocked(w *Watcher) {
	if w.stopped {
		return
	}
	w.stopped = true
	delete(c.watchers, w)
	close(w.ch)
	watchersGauge.WithLabelValues(w.name).Dec()
}

func namespaceOf(obj runtime.Object) string {
	acc, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	return acc.GetNamespace()
}

// filter turns a cache event into what a watcher with a selector sees.
func filter(opts WatchOptions, e Event) (Event, bool) {
	if opts.Namespace != "" && namespaceOf(e.Object) != opts.Namespace {
		return e, false
	}
	if opts.Match == nil {
		return e, true
	}
	cur := opts.Match(e.Object)
	prev := e.Prev != nil && opts.Match(e.Prev)
	switch {
	case e.Type == watch.Deleted:
		return e, prev || cur
	case cur && prev:
		return e, true
	case cur && !prev:
		return Event{Type: watch.Added, Object: e.Object, Rev: e.Rev}, true
	case !cur && prev:
		// The object left the selection: the watcher sees it deleted, in
		// its new state, as upstream reports it.
		return Event{Type: watch.Deleted, Object: e.Object, Rev: e.Rev}, true
	}
	return e, false
}

// offer hands an event to a watcher without blocking the cache; a watcher
// that cannot keep up is stopped and its client resumes from the last
// revision it saw.
func (w *Watcher) offer(c *Cache, e Event) {
	ev, ok := filter(w.opts, e)
	if !ok {
		return
	}
	select {
	case w.ch <- ev:
	default:
		c.cfg.Log.Warn("closing slow watcher", "resource", c.cfg.Name)
		c.stopLocked(w)
	}
}

func (c *Cache) bookmarkLocked(initialEnd bool) Event {
	obj := c.cfg.NewBookmark()
	_ = storage.SetResourceVersion(obj, c.rev)
	return Event{Type: watch.Bookmark, Object: obj, Rev: c.rev, InitialEventsEnd: initialEnd}
}

// sendBookmarks gives watchers that asked for them a bookmark about once a
// minute, so that they can resume from a recent revision.
func (c *Cache) sendBookmarks(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for w := range c.watchers {
		if !w.opts.Bookmarks || now.Sub(w.lastBookmark) < time.Minute {
			continue
		}
		w.lastBookmark = now
		select {
		case w.ch <- c.bookmarkLocked(false):
		default:
		}
	}
}
