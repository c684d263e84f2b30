package storage_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/storage"
	"github.com/orca-project/orca/internal/storage/embedded"
)

// One etcd member serves the whole package: starting one is the slow part.
// Each test works under its own key prefix.
var store *storage.Store

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	// A short path: the member listens on unix sockets inside it.
	dir, err := os.MkdirTemp("", "orca-storage-")
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
	store = storage.NewStore(e.Client(), storage.NewCodec())
	return m.Run()
}

const typ = "configmaps"

func newCM() runtime.Object { return &corev1.ConfigMap{} }

func configMap(name string, labels map[string]string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: labels},
		Data:       data,
	}
}

var (
	prefixes  sync.Map // *testing.T -> string
	prefixSeq atomic.Int64
)

// prefix is a key prefix no other test uses, new on every run (-count).
func prefix(t *testing.T) string {
	p, _ := prefixes.LoadOrStore(t, fmt.Sprintf("/registry/configmaps/%s-%d/", strings.ToLower(t.Name()), prefixSeq.Add(1)))
	return p.(string)
}

func rv(t *testing.T, obj runtime.Object) int64 {
	t.Helper()
	cm := obj.(*corev1.ConfigMap)
	n, err := strconv.ParseInt(cm.ResourceVersion, 10, 64)
	if err != nil || n <= 0 {
		t.Fatalf("%s has resourceVersion %q", cm.Name, cm.ResourceVersion)
	}
	return n
}

func mustCreate(t *testing.T, key string, cm *corev1.ConfigMap) *corev1.ConfigMap {
	t.Helper()
	if err := store.Create(context.Background(), key, typ, cm); err != nil {
		t.Fatalf("create %s: %v", key, err)
	}
	return cm
}

func TestCreateConflict(t *testing.T) {
	ctx := context.Background()
	key := prefix(t) + "a"
	first := mustCreate(t, key, configMap("a", nil, map[string]string{"v": "first"}))
	got, err := store.Get(ctx, key, typ, newCM)
	if err != nil {
		t.Fatal(err)
	}
	if rv(t, got) != rv(t, first) {
		t.Errorf("create returned resourceVersion %d, stored %d", rv(t, first), rv(t, got))
	}

	before, _ := store.CurrentRevision(ctx)
	err = store.Create(ctx, key, typ, configMap("a", nil, map[string]string{"v": "second"}))
	if !errors.Is(err, storage.ErrAlreadyExists) {
		t.Fatalf("second create: %v, want ErrAlreadyExists", err)
	}
	got, _ = store.Get(ctx, key, typ, newCM)
	if v := got.(*corev1.ConfigMap).Data["v"]; v != "first" || rv(t, got) != rv(t, first) {
		t.Errorf("refused create changed the object: %q at %d", v, rv(t, got))
	}
	if after, _ := store.CurrentRevision(ctx); after != before {
		t.Errorf("refused create wrote: revision %d -> %d", before, after)
	}
	if _, err := store.Get(ctx, prefix(t)+"missing", typ, newCM); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("get of a missing key: %v, want ErrNotFound", err)
	}
}

func TestGuaranteedUpdateConcurrentIncrements(t *testing.T) {
	ctx := context.Background()
	key := prefix(t) + "counter"
	initial := mustCreate(t, key, configMap("counter", nil, map[string]string{"n": "0"}))
	const workers, each = 8, 25
	var (
		wg    sync.WaitGroup
		calls atomic.Int64
		mu    sync.Mutex
		revs  = map[int64]int{}
	)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				// Half the workers pass the creation as a hint, which is
				// stale for all but the first update: it must cost a
				// retry, never an update lost.
				var hint runtime.Object
				if w%2 == 0 {
					hint = initial
				}
				out, err := store.GuaranteedUpdate(ctx, key, typ, newCM, hint, func(cur runtime.Object) (runtime.Object, error) {
					calls.Add(1)
					cm := cur.(*corev1.ConfigMap)
					n, err := strconv.Atoi(cm.Data["n"])
					if err != nil {
						return nil, err
					}
					cm.Data["n"] = strconv.Itoa(n + 1)
					return cm, nil
				})
				if err != nil {
					t.Errorf("update: %v", err)
					return
				}
				// Not rv(): t.Fatal may not be called from this goroutine.
				n, _ := strconv.ParseInt(out.(*corev1.ConfigMap).ResourceVersion, 10, 64)
				mu.Lock()
				revs[n]++
				mu.Unlock()
			}
		}(w)
	}
	wg.Wait()
	got, err := store.Get(ctx, key, typ, newCM)
	if err != nil {
		t.Fatal(err)
	}
	if n := got.(*corev1.ConfigMap).Data["n"]; n != strconv.Itoa(workers*each) {
		t.Errorf("counter is %s after %d increments: updates were lost", n, workers*each)
	}
	// Every update that reported success wrote a revision of its own.
	if len(revs) != workers*each {
		t.Errorf("%d distinct revisions for %d updates", len(revs), workers*each)
	}
	t.Logf("%d update attempts for %d updates", calls.Load(), workers*each)
}

func TestNoOpUpdateKeepsRevision(t *testing.T) {
	ctx := context.Background()
	key := prefix(t) + "a"
	created := mustCreate(t, key, configMap("a", nil, map[string]string{"v": "1"}))
	same := func(cur runtime.Object) (runtime.Object, error) { return cur, nil }

	before, _ := store.CurrentRevision(ctx)
	for _, hint := range []runtime.Object{nil, created} {
		out, err := store.GuaranteedUpdate(ctx, key, typ, newCM, hint, same)
		if err != nil {
			t.Fatal(err)
		}
		if rv(t, out) != rv(t, created) {
			t.Errorf("no-op update (hint %v) returned resourceVersion %d, want %d", hint != nil, rv(t, out), rv(t, created))
		}
	}
	if after, _ := store.CurrentRevision(ctx); after != before {
		t.Errorf("no-op updates wrote: revision %d -> %d", before, after)
	}

	// A no-op against a stale hint must not report the stale object as
	// current: the store re-reads before claiming nothing changed.
	changed, err := store.GuaranteedUpdate(ctx, key, typ, newCM, nil, func(cur runtime.Object) (runtime.Object, error) {
		cur.(*corev1.ConfigMap).Data["v"] = "2"
		return cur, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	out, err := store.GuaranteedUpdate(ctx, key, typ, newCM, created, same)
	if err != nil {
		t.Fatal(err)
	}
	if rv(t, out) != rv(t, changed) || out.(*corev1.ConfigMap).Data["v"] != "2" {
		t.Errorf("no-op with a stale hint returned %q at %d, want the current object at %d", out.(*corev1.ConfigMap).Data["v"], rv(t, out), rv(t, changed))
	}

	// An update function's error aborts without writing.
	boom := errors.New("boom")
	if _, err := store.GuaranteedUpdate(ctx, key, typ, newCM, nil, func(runtime.Object) (runtime.Object, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Errorf("update error: %v, want boom", err)
	}
	if _, err := store.GuaranteedUpdate(ctx, prefix(t)+"missing", typ, newCM, nil, same); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("update of a missing key: %v, want ErrNotFound", err)
	}
}

func TestDeleteWithFailingCheck(t *testing.T) {
	ctx := context.Background()
	key := prefix(t) + "a"
	created := mustCreate(t, key, configMap("a", nil, map[string]string{"v": "1"}))
	refused := errors.New("not now")
	if _, err := store.Delete(ctx, key, typ, newCM, func(runtime.Object) error { return refused }); !errors.Is(err, refused) {
		t.Fatalf("delete with a failing check: %v, want the check's error", err)
	}
	got, err := store.Get(ctx, key, typ, newCM)
	if err != nil {
		t.Fatalf("object gone after a refused delete: %v", err)
	}
	if rv(t, got) != rv(t, created) {
		t.Errorf("refused delete changed the object: %d -> %d", rv(t, created), rv(t, got))
	}

	var checked runtime.Object
	deleted, err := store.Delete(ctx, key, typ, newCM, func(cur runtime.Object) error { checked = cur.DeepCopyObject(); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if rv(t, checked) != rv(t, created) {
		t.Errorf("check saw resourceVersion %d, want %d", rv(t, checked), rv(t, created))
	}
	cur, _ := store.CurrentRevision(ctx)
	if rv(t, deleted) != cur || deleted.(*corev1.ConfigMap).Data["v"] != "1" {
		t.Errorf("delete returned %+v at %d; want the last state at the deletion's revision %d", deleted.(*corev1.ConfigMap).Data, rv(t, deleted), cur)
	}
	if _, err := store.Get(ctx, key, typ, newCM); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("get after delete: %v", err)
	}
	if _, err := store.Delete(ctx, key, typ, newCM, nil); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("second delete: %v, want ErrNotFound", err)
	}
}

func names(items []runtime.Object) []string {
	var out []string
	for _, it := range items {
		out = append(out, it.(*corev1.ConfigMap).Name)
	}
	return out
}

func TestListPages(t *testing.T) {
	ctx := context.Background()
	p := prefix(t)
	for i := 0; i < 10; i++ {
		parity := map[string]string{"even": strconv.FormatBool(i%2 == 0)}
		mustCreate(t, p+fmt.Sprintf("ns/o%02d", i), configMap(fmt.Sprintf("o%02d", i), parity, nil))
	}
	even := func(obj runtime.Object) bool { return obj.(*corev1.ConfigMap).Labels["even"] == "true" }

	type page struct {
		names     string
		remaining int64 // -1: nil
		more      bool
	}
	// collect reads every page of a list, pinned to the first page's
	// revision as continue tokens are.
	collect := func(limit int64, match func(runtime.Object) bool, between func()) []page {
		t.Helper()
		var out []page
		opts := storage.ListOptions{Limit: limit, Match: match}
		for {
			res, err := store.List(ctx, p, typ, newCM, opts)
			if err != nil {
				t.Fatal(err)
			}
			pg := page{names: strings.Join(names(res.Items), ","), remaining: -1, more: res.Next != ""}
			if res.Remaining != nil {
				pg.remaining = *res.Remaining
			}
			out = append(out, pg)
			if res.Next == "" || len(out) > 20 {
				return out
			}
			if opts.Revision != 0 && res.Revision != opts.Revision {
				t.Errorf("page at revision %d, continued from %d", res.Revision, opts.Revision)
			}
			opts.Revision, opts.Start = res.Revision, res.Next
			if between != nil {
				between()
				between = nil
			}
		}
	}
	for _, tc := range []struct {
		name  string
		limit int64
		match func(runtime.Object) bool
		want  []page
	}{
		{"limit 3", 3, nil, []page{
			{"o00,o01,o02", 7, true}, {"o03,o04,o05", 4, true}, {"o06,o07,o08", 1, true}, {"o09", -1, false},
		}},
		// The last page ends exactly at the last key: no continue, and no
		// empty page after it.
		{"limit 5", 5, nil, []page{{"o00,o01,o02,o03,o04", 5, true}, {"o05,o06,o07,o08,o09", -1, false}}},
		{"no limit", 0, nil, []page{{"o00,o01,o02,o03,o04,o05,o06,o07,o08,o09", -1, false}}},
		// With a filter, pages are full although most keys do not match,
		// and nothing can say how many matching keys remain.
		{"limit 2 even", 2, even, []page{{"o00,o02", -1, true}, {"o04,o06", -1, true}, {"o08", -1, false}}},
		{"limit 2 one match", 2, func(o runtime.Object) bool { return o.(*corev1.ConfigMap).Name == "o09" }, []page{{"o09", -1, false}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := collect(tc.limit, tc.match, nil)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("pages\n got %v\nwant %v", got, tc.want)
			}
		})
	}

	t.Run("pages are one snapshot", func(t *testing.T) {
		got := collect(4, nil, func() {
			mustCreate(t, p+"ns/o055", configMap("o055", nil, nil))
			if _, err := store.Delete(ctx, p+"ns/o07", typ, newCM, nil); err != nil {
				t.Fatal(err)
			}
		})
		want := []page{{"o00,o01,o02,o03", 6, true}, {"o04,o05,o06,o07", 2, true}, {"o08,o09", -1, false}}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("pages\n got %v\nwant %v", got, want)
		}
		res, err := store.List(ctx, p, typ, newCM, storage.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(names(res.Items), ","); got != "o00,o01,o02,o03,o04,o05,o055,o06,o08,o09" {
			t.Errorf("list at the latest revision: %s", got)
		}
	})
}

// TestListFilterAcrossBatches covers a filter whose matches lie further
// apart than the store's read batch.
func TestListFilterAcrossBatches(t *testing.T) {
	ctx := context.Background()
	p := prefix(t)
	const n = 230
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				name := fmt.Sprintf("o%03d", i)
				if err := store.Create(ctx, p+name, typ, configMap(name, nil, nil)); err != nil {
					t.Error(err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	every50 := func(o runtime.Object) bool {
		i, _ := strconv.Atoi(strings.TrimPrefix(o.(*corev1.ConfigMap).Name, "o"))
		return i%50 == 0
	}
	var all []string
	opts := storage.ListOptions{Limit: 2, Match: every50}
	for pages := 0; ; pages++ {
		if pages > 10 {
			t.Fatal("list does not end")
		}
		res, err := store.List(ctx, p, typ, newCM, opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Items) > 2 || (res.Next != "" && len(res.Items) != 2) {
			t.Errorf("page %d holds %v with continue %v", pages, names(res.Items), res.Next != "")
		}
		all = append(all, names(res.Items)...)
		if res.Next == "" {
			break
		}
		opts.Revision, opts.Start = res.Revision, res.Next
	}
	if !sort.StringsAreSorted(all) || strings.Join(all, ",") != "o000,o050,o100,o150,o200" {
		t.Errorf("filtered pages hold %v", all)
	}
}
