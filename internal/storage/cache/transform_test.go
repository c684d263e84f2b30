package cache_test

import (
	"bytes"
	"context"
	"crypto/aes"
	"io"
	"log/slog"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/storage/value"
	aestransformer "k8s.io/apiserver/pkg/storage/value/encrypt/aes"

	"github.com/orca-project/orca/internal/storage/cache"
)

// The cache reads encrypted values through the resource's transformer:
// its list, its own watch's events (deletions come from the previous
// value) and watches it serves from etcd.
func TestEncryptedValues(t *testing.T) {
	block, err := aes.NewCipher(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	tr := value.NewPrefixTransformers(nil, value.PrefixTransformer{Prefix: []byte("k8s:enc:aescbc:v1:k:"), Transformer: aestransformer.NewCBCTransformer(block)})
	enc := store.WithTransformer(tr)
	ctx := context.Background()
	put := func(name, v string) int64 {
		t.Helper()
		cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}, Data: map[string]string{"v": v}}
		k := key(t, "ns", name)
		if _, err := enc.Get(ctx, k, typ, newCM); err != nil {
			if err := enc.Create(ctx, k, typ, cm); err != nil {
				t.Fatal(err)
			}
			return rvOf(t, cm)
		}
		out, err := enc.GuaranteedUpdate(ctx, k, typ, newCM, nil, func(runtime.Object) (runtime.Object, error) { return cm, nil })
		if err != nil {
			t.Fatal(err)
		}
		return rvOf(t, out)
	}
	first := put("before", "1")

	c := cache.New(cache.Config{
		Client: etcd, Codec: store.Codec(), Transformer: tr,
		Prefix: prefix(t), Name: typ, New: newCM, History: 2,
		NewBookmark: func() runtime.Object { return &corev1.ConfigMap{} },
		Log:         slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); c.Run(cctx) }()
	defer func() { cancel(); <-done }()
	select {
	case <-c.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("cache not ready")
	}
	if objs, _ := c.List("", nil); len(objs) != 1 || objs[0].(*corev1.ConfigMap).Data["v"] != "1" {
		t.Fatalf("list: %v", objs)
	}
	w, err := c.Watch(cache.WatchOptions{From: first})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop(w)
	put("after", "2")
	put("after", "3")
	put("after", "4")
	if _, err := enc.Delete(ctx, key(t, "ns", "before"), typ, newCM, nil); err != nil {
		t.Fatal(err)
	}
	want := []string{"ADDED after 2", "MODIFIED after 3", "MODIFIED after 4", "DELETED before 1"}
	got := func(w *cache.Watcher) {
		t.Helper()
		for _, wnt := range want {
			ev := nextEvent(t, w)
			cm := ev.Object.(*corev1.ConfigMap)
			if s := string(ev.Type) + " " + cm.Name + " " + cm.Data["v"]; s != wnt {
				t.Errorf("event %q, want %q", s, wnt)
			}
		}
	}
	got(w)
	waitFresh(t, c)
	// Four events, two kept: this watch is served from etcd.
	old, err := c.Watch(cache.WatchOptions{From: first})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop(old)
	got(old)
}
