package storage_test

import (
	"bytes"
	"context"
	"crypto/aes"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/storage/value"
	aestransformer "k8s.io/apiserver/pkg/storage/value/encrypt/aes"
	"k8s.io/apiserver/pkg/storage/value/encrypt/identity"

	"github.com/orca-project/orca/internal/storage"
)

// aescbc builds upstream's aescbc provider with the named keys (the first
// writes) and identity last, as an EncryptionConfiguration would.
func aescbc(t *testing.T, names ...string) value.Transformer {
	t.Helper()
	var keys []value.PrefixTransformer
	for _, n := range names {
		block, err := aes.NewCipher(bytes.Repeat([]byte(n[:1]), 32))
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, value.PrefixTransformer{Prefix: []byte(n + ":"), Transformer: aestransformer.NewCBCTransformer(block)})
	}
	return value.NewPrefixTransformers(nil,
		value.PrefixTransformer{Prefix: []byte("k8s:enc:aescbc:v1:"), Transformer: value.NewPrefixTransformers(nil, keys...)},
		value.PrefixTransformer{Prefix: []byte{}, Transformer: identity.NewEncryptCheckTransformer()})
}

// fenced counts the writes that held the fence.
type fenced struct {
	value.Transformer
	held, released atomic.Int64
}

func (f *fenced) HoldWrite() func() {
	f.held.Add(1)
	return func() { f.released.Add(1) }
}

func raw(t *testing.T, key string) []byte {
	t.Helper()
	resp, err := store.Client().Get(context.Background(), key)
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("raw read of %s: %v", key, err)
	}
	return resp.Kvs[0].Value
}

func TestTransformedValues(t *testing.T) {
	ctx := context.Background()
	p := prefix(t)
	key := p + "a"
	oldKey := &fenced{Transformer: aescbc(t, "old")}
	enc := store.WithTransformer(oldKey)
	if err := enc.Create(ctx, key, typ, configMap("a", nil, map[string]string{"v": "plaintext-value"})); err != nil {
		t.Fatal(err)
	}
	if v := raw(t, key); !bytes.HasPrefix(v, []byte("k8s:enc:aescbc:v1:old:")) || bytes.Contains(v, []byte("plaintext-value")) {
		t.Fatalf("stored %q", v)
	}
	if oldKey.held.Load() != 1 || oldKey.released.Load() != 1 {
		t.Errorf("fence held %d, released %d times", oldKey.held.Load(), oldKey.released.Load())
	}
	got, err := enc.Get(ctx, key, typ, newCM)
	if err != nil || got.(*corev1.ConfigMap).Data["v"] != "plaintext-value" {
		t.Fatalf("get: %v %v", got, err)
	}
	list, err := enc.List(ctx, p, typ, newCM, storage.ListOptions{})
	if err != nil || len(list.Items) != 1 || list.Items[0].(*corev1.ConfigMap).Data["v"] != "plaintext-value" {
		t.Fatalf("list: %v %v", list, err)
	}
	if _, err := store.Get(ctx, key, typ, newCM); err == nil {
		t.Error("a store without the key decoded an encrypted value")
	}

	// A new key writes; the old one still reads, and what it reads is
	// stale: a no-op update writes it again under the new key, once.
	rotated := store.WithTransformer(aescbc(t, "new", "old"))
	same := func(cur runtime.Object) (runtime.Object, error) { return cur, nil }
	before := rv(t, got)
	for _, hint := range []runtime.Object{got, nil} {
		out, err := rotated.GuaranteedUpdate(ctx, key, typ, newCM, hint, same)
		if err != nil {
			t.Fatal(err)
		}
		after := rv(t, out)
		if hint != nil && after == before {
			t.Error("a no-op update of a value under the old key did not write")
		}
		if hint == nil && after != rv(t, got) {
			t.Error("a no-op update of a current value wrote")
		}
		got = out
	}
	if v := raw(t, key); !bytes.HasPrefix(v, []byte("k8s:enc:aescbc:v1:new:")) {
		t.Fatalf("after the update: %q", v)
	}

	// Values stored before encryption was on are read by identity and
	// encrypted at their next write.
	plainKey := p + "plain"
	mustCreate(t, plainKey, configMap("plain", nil, map[string]string{"v": "x"}))
	if _, err := rotated.GuaranteedUpdate(ctx, plainKey, typ, newCM, nil, same); err != nil {
		t.Fatal(err)
	}
	if v := raw(t, plainKey); !bytes.HasPrefix(v, []byte("k8s:enc:aescbc:v1:new:")) {
		t.Fatalf("plain value after update: %q", v)
	}
}
