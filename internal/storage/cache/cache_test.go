package cache_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/orca-project/orca/internal/storage"
	"github.com/orca-project/orca/internal/storage/cache"
	"github.com/orca-project/orca/internal/storage/embedded"
)

// One etcd member serves the whole package; each test mirrors its own key
// prefix.
var (
	etcd  *clientv3.Client
	store *storage.Store
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	// A short path: the member listens on unix sockets inside it.
	dir, err := os.MkdirTemp("", "orca-cache-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e, err := embedded.Start(ctx, embedded.Config{Dir: dir})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer e.Close()
	etcd = e.Client()
	store = storage.NewStore(etcd, storage.NewCodec())
	return m.Run()
}

const typ = "configmaps"

func newCM() runtime.Object { return &corev1.ConfigMap{} }

var (
	prefixes  sync.Map // *testing.T -> string
	prefixSeq atomic.Int64
)

// prefix is the test's own key prefix, new on every run (-count).
func prefix(t *testing.T) string {
	p, _ := prefixes.LoadOrStore(t, fmt.Sprintf("/registry/configmaps/%s-%d/", strings.ToLower(t.Name()), prefixSeq.Add(1)))
	return p.(string)
}

// startCache runs a cache over the test's prefix until the test ends.
func startCache(t *testing.T, history int) *cache.Cache {
	t.Helper()
	c := cache.New(cache.Config{
		Client:  etcd,
		Codec:   store.Codec(),
		Prefix:  prefix(t),
		Name:    typ,
		New:     newCM,
		History: history,
		NewBookmark: func() runtime.Object {
			return &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}}
		},
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Run(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case <-c.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("cache not ready after 10s")
	}
	return c
}

func key(t *testing.T, ns, name string) string { return prefix(t) + ns + "/" + name }

func create(t *testing.T, ns, name string, labels map[string]string) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Data:       map[string]string{"v": "0"},
	}
	if err := store.Create(context.Background(), key(t, ns, name), typ, cm); err != nil {
		t.Fatalf("create %s/%s: %v", ns, name, err)
	}
	return cm
}

// update applies change to the stored object and returns the result.
func update(t *testing.T, ns, name string, change func(*corev1.ConfigMap)) *corev1.ConfigMap {
	t.Helper()
	out, err := store.GuaranteedUpdate(context.Background(), key(t, ns, name), typ, newCM, nil, func(cur runtime.Object) (runtime.Object, error) {
		change(cur.(*corev1.ConfigMap))
		return cur, nil
	})
	if err != nil {
		t.Fatalf("update %s/%s: %v", ns, name, err)
	}
	return out.(*corev1.ConfigMap)
}

func remove(t *testing.T, ns, name string) {
	t.Helper()
	if _, err := store.Delete(context.Background(), key(t, ns, name), typ, newCM, nil); err != nil {
		t.Fatalf("delete %s/%s: %v", ns, name, err)
	}
}

func rvOf(t *testing.T, obj runtime.Object) int64 {
	t.Helper()
	n, err := strconv.ParseInt(obj.(metav1.Object).GetResourceVersion(), 10, 64)
	if err != nil {
		t.Fatalf("resourceVersion: %v", err)
	}
	return n
}

// waitFresh waits until the cache has every write made so far.
func waitFresh(t *testing.T, c *cache.Cache) int64 {
	t.Helper()
	ctx := context.Background()
	cur, err := store.CurrentRevision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.WaitFresh(ctx, cur, 5*time.Second); err != nil {
		t.Fatalf("cache did not reach revision %d: %v (at %d)", cur, err, c.Revision())
	}
	return cur
}

func nextEvent(t *testing.T, w *cache.Watcher) cache.Event {
	t.Helper()
	select {
	case ev, ok := <-w.Events():
		if !ok {
			t.Fatal("watcher closed")
		}
		return ev
	case <-time.After(5 * time.Second):
		t.Fatal("no event within 5s")
	}
	return cache.Event{}
}

// describe is an event as "TYPE name@rev".
func describe(ev cache.Event) string {
	if ev.Type == watch.Bookmark {
		return fmt.Sprintf("BOOKMARK@%d", ev.Rev)
	}
	return fmt.Sprintf("%s %s@%d", ev.Type, ev.Object.(*corev1.ConfigMap).Name, ev.Rev)
}

func listNames(objs []runtime.Object) string {
	var out []string
	for _, o := range objs {
		cm := o.(*corev1.ConfigMap)
		out = append(out, cm.Namespace+"/"+cm.Name)
	}
	return strings.Join(out, ",")
}

func TestListAfterWrites(t *testing.T) {
	c := startCache(t, 0)
	for _, n := range []string{"c", "a", "b"} {
		create(t, "ns1", n, nil)
	}
	create(t, "ns2", "a", nil)
	cur := waitFresh(t, c)

	items, rev := c.List("", nil)
	if got := listNames(items); got != "ns1/a,ns1/b,ns1/c,ns2/a" {
		t.Errorf("list: %s", got)
	}
	if rev < cur {
		t.Errorf("list at %d, before the last write %d", rev, cur)
	}
	if items, _ := c.List("ns1", nil); listNames(items) != "ns1/a,ns1/b,ns1/c" {
		t.Errorf("list of ns1: %s", listNames(items))
	}
	// A namespace that is a prefix of another must not see its objects.
	if items, _ := c.List("ns", nil); len(items) != 0 {
		t.Errorf("list of ns: %s", listNames(items))
	}

	updated := update(t, "ns1", "b", func(cm *corev1.ConfigMap) { cm.Data["v"] = "1" })
	remove(t, "ns1", "c")
	waitFresh(t, c)
	items, _ = c.List("", func(o runtime.Object) bool { return o.(*corev1.ConfigMap).Name != "a" })
	if got := listNames(items); got != "ns1/b" {
		t.Fatalf("filtered list after update and delete: %s", got)
	}
	if b := items[0].(*corev1.ConfigMap); b.Data["v"] != "1" || b.ResourceVersion != updated.ResourceVersion {
		t.Errorf("cached b is %v at %s, stored %v at %s", b.Data, b.ResourceVersion, updated.Data, updated.ResourceVersion)
	}
	if _, _, ok := c.Get(key(t, "ns1", "c")); ok {
		t.Errorf("deleted object still cached")
	}
}

func TestWatchFromRevisionReplaysOnlyLaterEvents(t *testing.T) {
	c := startCache(t, 0)
	create(t, "ns", "a", nil)
	b := create(t, "ns", "b", nil)
	create(t, "ns", "c", nil)
	update(t, "ns", "a", func(cm *corev1.ConfigMap) { cm.Data["v"] = "1" })
	waitFresh(t, c)

	w, err := c.Watch(cache.WatchOptions{From: rvOf(t, b)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop(w)
	// A write after the watch started marks the end of the replay.
	create(t, "ns", "d", nil)
	var got []string
	for len(got) < 3 {
		ev := nextEvent(t, w)
		got = append(got, fmt.Sprintf("%s %s", ev.Type, ev.Object.(*corev1.ConfigMap).Name))
		if ev.Rev <= rvOf(t, b) {
			t.Errorf("replayed %s, not after %d", describe(ev), rvOf(t, b))
		}
	}
	if strings.Join(got, ",") != "ADDED c,MODIFIED a,ADDED d" {
		t.Errorf("events after b: %v", got)
	}
	if len(w.Events()) != 0 {
		t.Errorf("unexpected extra event %s", describe(<-w.Events()))
	}
}

func TestWatchLabelFilterTransitions(t *testing.T) {
	c := startCache(t, 0)
	start := waitFresh(t, c)
	selected := func(o runtime.Object) bool { return o.(*corev1.ConfigMap).Labels["k"] == "v" }
	w, err := c.Watch(cache.WatchOptions{From: start, Match: selected})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop(w)
	setLabel := func(v string) func(*corev1.ConfigMap) {
		return func(cm *corev1.ConfigMap) { cm.Labels = map[string]string{"k": v} }
	}

	create(t, "ns", "x", map[string]string{"k": "v"}) // created selected: ADDED
	create(t, "ns", "y", nil)                         // never selected: nothing
	update(t, "ns", "x", func(cm *corev1.ConfigMap) { cm.Data["v"] = "1" })
	left := update(t, "ns", "x", setLabel("other"))                         // leaves: DELETED
	update(t, "ns", "x", func(cm *corev1.ConfigMap) { cm.Data["v"] = "2" }) // outside: nothing
	update(t, "ns", "y", setLabel("v"))                                     // enters: ADDED
	update(t, "ns", "x", setLabel("v"))                                     // comes back: ADDED
	remove(t, "ns", "y")                                                    // deleted while selected
	update(t, "ns", "x", setLabel("gone"))
	remove(t, "ns", "x") // deleted while outside: nothing
	create(t, "ns", "end", map[string]string{"k": "v"})

	var got []string
	for {
		ev := nextEvent(t, w)
		name := ev.Object.(*corev1.ConfigMap).Name
		got = append(got, fmt.Sprintf("%s %s", ev.Type, name))
		if ev.Type == watch.Deleted && name == "x" && rvOf(t, ev.Object) == rvOf(t, left) {
			// The object leaving the selection is reported in its new
			// state, which no longer matches.
			if selected(ev.Object) {
				t.Errorf("DELETED for leaving the selection carries the old labels")
			}
		}
		if name == "end" {
			break
		}
	}
	want := "ADDED x,MODIFIED x,DELETED x,ADDED y,ADDED x,DELETED y,DELETED x,ADDED end"
	if strings.Join(got, ",") != want {
		t.Errorf("events\n got %s\nwant %s", strings.Join(got, ","), want)
	}
}

// expectTooOld checks that a watch from rev is refused as too old: at once,
// or (served from etcd) with an error event before any other.
func expectTooOld(t *testing.T, c *cache.Cache, rev int64) {
	t.Helper()
	w, err := c.Watch(cache.WatchOptions{From: rev})
	if errors.Is(err, cache.ErrTooOld) {
		return
	}
	if err != nil {
		t.Fatalf("watch from %d: %v, want ErrTooOld", rev, err)
	}
	defer c.Stop(w)
	if ev := nextEvent(t, w); ev.Type != watch.Error || !errors.Is(ev.Err, cache.ErrTooOld) {
		t.Errorf("watch from %d: first event %s (%v), want ErrTooOld", rev, describe(ev), ev.Err)
	}
}

// TestWatchBeyondHistory: the cache keeps History events; a watch from
// before them is served from etcd's history, and only once etcd has
// compacted that away is it too old.
func TestWatchBeyondHistory(t *testing.T) {
	const history = 4
	c := startCache(t, history)
	var revs []int64
	revs = append(revs, rvOf(t, create(t, "ns", "x", nil)))
	for i := 1; i <= 6; i++ {
		revs = append(revs, rvOf(t, update(t, "ns", "x", func(cm *corev1.ConfigMap) { cm.Data["v"] = strconv.Itoa(i) })))
	}
	waitFresh(t, c)
	expect := func(w *cache.Watcher, revs []int64) {
		t.Helper()
		for _, want := range revs {
			if ev := nextEvent(t, w); ev.Type != watch.Modified || ev.Rev != want || ev.Object.(*corev1.ConfigMap).Name != "x" {
				t.Errorf("replay: %s, want MODIFIED x@%d", describe(ev), want)
			}
		}
	}

	// Seven events, four kept (the last four updates): a watch from the
	// newest event dropped replays them from memory.
	inCache, err := c.Watch(cache.WatchOptions{From: revs[len(revs)-history-1]})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop(inCache)
	expect(inCache, revs[len(revs)-history:])

	// From the creation: further back than the cache holds.
	fromEtcd, err := c.Watch(cache.WatchOptions{From: revs[0]})
	if err != nil {
		t.Fatalf("watch from %d, before the cache's history: %v", revs[0], err)
	}
	defer c.Stop(fromEtcd)
	expect(fromEtcd, revs[1:])
	// Both go on with live events.
	last := rvOf(t, update(t, "ns", "x", func(cm *corev1.ConfigMap) { cm.Data["v"] = "7" }))
	expect(inCache, []int64{last})
	expect(fromEtcd, []int64{last})

	// From 0 is the current state, whatever the history holds.
	w0, err := c.Watch(cache.WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop(w0)
	if ev := nextEvent(t, w0); ev.Type != watch.Added || ev.Object.(*corev1.ConfigMap).Data["v"] != "7" {
		t.Errorf("watch from 0: %s %v", describe(ev), ev.Object.(*corev1.ConfigMap).Data)
	}

	// Compacted away, the events before the cache's window are gone: the
	// client must relist. The window itself still serves.
	if _, err := etcd.Compact(context.Background(), last); err != nil {
		t.Fatal(err)
	}
	expectTooOld(t, c, revs[0])
	w, err := c.Watch(cache.WatchOptions{From: revs[len(revs)-1]})
	if err != nil {
		t.Fatalf("watch from inside the window after compaction: %v", err)
	}
	defer c.Stop(w)
	expect(w, []int64{last})
}

func TestSlowWatcherIsClosed(t *testing.T) {
	c := startCache(t, 0)
	start := waitFresh(t, c)
	slow, err := c.Watch(cache.WatchOptions{From: start, Buffer: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop(slow)
	fast, err := c.Watch(cache.WatchOptions{From: start, Buffer: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop(fast)
	const n = 6
	for i := 0; i < n; i++ {
		create(t, "ns", fmt.Sprintf("o%d", i), nil)
		// fast keeps up; slow never reads.
		if ev := nextEvent(t, fast); ev.Object.(*corev1.ConfigMap).Name != fmt.Sprintf("o%d", i) {
			t.Errorf("fast watcher got %s", describe(ev))
		}
	}
	// slow holds what fitted in its buffer, then its channel is closed:
	// its client resumes from the last revision it read.
	var got []string
	for ev := range slow.Events() {
		got = append(got, describe(ev))
	}
	if len(got) != 2 {
		t.Errorf("slow watcher delivered %v before closing, want its buffer of 2", got)
	}
	create(t, "ns", "after", nil)
	if ev := nextEvent(t, fast); ev.Object.(*corev1.ConfigMap).Name != "after" {
		t.Errorf("fast watcher after the slow one was cut: %s", describe(ev))
	}
}

func TestSendInitialEventsEndsWithBookmark(t *testing.T) {
	c := startCache(t, 0)
	create(t, "ns", "b", nil)
	create(t, "ns", "a", nil)
	create(t, "other", "z", nil)
	cur := waitFresh(t, c)

	// From is ignored for the initial state: a client asking for initial
	// events gets the current state whatever version it names.
	initial := []string{"a", "b"}
	for _, from := range []int64{0, cur - 1} {
		w, err := c.Watch(cache.WatchOptions{SendInitialEvents: true, From: from, Namespace: "ns", Bookmarks: true})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		var end cache.Event
		for {
			ev := nextEvent(t, w)
			if ev.Type == watch.Bookmark {
				end = ev
				break
			}
			got = append(got, describe(ev))
		}
		var want []string
		for _, name := range initial {
			want = append(want, fmt.Sprintf("ADDED %s@%d", name, end.Rev))
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("from %d: initial events %v, want %v", from, got, want)
		}
		if !end.InitialEventsEnd || end.Rev < cur || rvOf(t, end.Object) != end.Rev {
			t.Errorf("from %d: closing bookmark %+v (object at %s), want InitialEventsEnd at >= %d", from, end, end.Object.(*corev1.ConfigMap).ResourceVersion, cur)
		}
		// Changes after the bookmark follow as ordinary events.
		later := fmt.Sprintf("later%d", from)
		create(t, "ns", later, nil)
		initial = append(initial, later)
		if ev := nextEvent(t, w); ev.Type != watch.Added || ev.Rev <= end.Rev {
			t.Errorf("from %d: after the bookmark: %s", from, describe(ev))
		}
		c.Stop(w)
	}
}

func TestWaitFreshIdleResource(t *testing.T) {
	c := startCache(t, 0)
	ctx := context.Background()
	// Revisions move on through writes elsewhere only, as they do for a
	// resource nobody writes: no event will carry this cache forward.
	// A progress notification still in flight from the cache's start-up
	// could carry it past the first writes; a second round is certain.
	var cur int64
	for round := 0; round < 2 && c.Revision() >= cur; round++ {
		for i := 0; i < 3; i++ {
			if _, err := etcd.Put(ctx, "/registry/elsewhere/"+t.Name()+strconv.Itoa(i), "x"); err != nil {
				t.Fatal(err)
			}
		}
		var err error
		if cur, err = store.CurrentRevision(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if c.Revision() >= cur {
		t.Fatalf("cache already at %d before any progress (current %d)", c.Revision(), cur)
	}
	start := time.Now()
	// etcd's own progress notifications come every ten minutes; only the
	// progress request makes this fast.
	if err := c.WaitFresh(ctx, cur, 10*time.Second); err != nil {
		t.Fatalf("WaitFresh(%d): %v (cache at %d)", cur, err, c.Revision())
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("WaitFresh on an idle resource took %v", d)
	}
	if c.Revision() < cur {
		t.Errorf("cache at %d after WaitFresh(%d)", c.Revision(), cur)
	}
	// A revision that does not exist yet times out with ErrNotFresh.
	if err := c.WaitFresh(ctx, cur+1000, 100*time.Millisecond); !errors.Is(err, cache.ErrNotFresh) {
		t.Errorf("WaitFresh on a future revision: %v, want ErrNotFresh", err)
	}
}

// TestNewCacheResumesWatchesFromBeforeItStarted is the API server restart:
// a client that last saw a revision from before the new cache existed
// resumes its watch from that revision instead of relisting.
func TestNewCacheResumesWatchesFromBeforeItStarted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := cache.New(cache.Config{
		Client: etcd, Codec: store.Codec(), Prefix: prefix(t), Name: typ, New: newCM,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	done := make(chan struct{})
	go func() { defer close(done); first.Run(ctx) }()
	<-first.Ready()
	seen := rvOf(t, create(t, "ns", "a", nil))
	cancel()
	<-done

	// While no cache runs: writes the client has not seen.
	b := create(t, "ns", "b", nil)
	a := update(t, "ns", "a", func(cm *corev1.ConfigMap) { cm.Data["v"] = "1" })
	remove(t, "ns", "b")
	deletedAt, _ := store.CurrentRevision(context.Background())

	c := startCache(t, 0)
	// Ready means caught up: it holds every write made before it started.
	if c.Revision() < deletedAt {
		t.Errorf("ready cache at %d, behind etcd's %d", c.Revision(), deletedAt)
	}
	if items, _ := c.List("", nil); listNames(items) != "ns/a" {
		t.Errorf("ready cache lists %s", listNames(items))
	}
	w, err := c.Watch(cache.WatchOptions{From: seen})
	if err != nil {
		t.Fatalf("resume from %d, before the cache started: %v", seen, err)
	}
	defer c.Stop(w)
	want := []string{
		fmt.Sprintf("ADDED b@%d", rvOf(t, b)),
		fmt.Sprintf("MODIFIED a@%d", rvOf(t, a)),
		fmt.Sprintf("DELETED b@%d", deletedAt),
	}
	for _, wv := range want {
		if ev := nextEvent(t, w); describe(ev) != wv {
			t.Errorf("resumed watch: %s, want %s", describe(ev), wv)
		}
	}

	// Once etcd has compacted that history, a new cache starts from the
	// current state, and a resume from before it is too old: the client
	// must relist.
	if _, err := etcd.Compact(context.Background(), deletedAt); err != nil {
		t.Fatal(err)
	}
	after := startCache(t, 0)
	if items, _ := after.List("", nil); listNames(items) != "ns/a" || after.Revision() < deletedAt {
		t.Errorf("cache started after compaction lists %s at %d", listNames(items), after.Revision())
	}
	expectTooOld(t, after, seen)
	w2, err := after.Watch(cache.WatchOptions{From: deletedAt})
	if err != nil {
		t.Fatalf("watch from the compaction revision: %v", err)
	}
	defer after.Stop(w2)
	update(t, "ns", "a", func(cm *corev1.ConfigMap) { cm.Data["v"] = "2" })
	if ev := nextEvent(t, w2); ev.Type != watch.Modified || ev.Object.(*corev1.ConfigMap).Data["v"] != "2" {
		t.Errorf("after compaction: %s", describe(ev))
	}
}
