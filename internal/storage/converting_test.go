package storage_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// A converting store serves objects kept in etcd in another form: here,
// ConfigMaps stored as Secrets.
func TestConvertingCodec(t *testing.T) {
	ctx := context.Background()
	toSecret := func(obj runtime.Object) runtime.Object {
		cm := obj.(*corev1.ConfigMap)
		s := &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}, ObjectMeta: *cm.ObjectMeta.DeepCopy(), Data: map[string][]byte{}}
		for k, v := range cm.Data {
			s.Data[k] = []byte(v)
		}
		return s
	}
	fromSecret := func(obj runtime.Object) runtime.Object {
		s := obj.(*corev1.Secret)
		cm := configMap(s.Name, nil, map[string]string{})
		cm.ObjectMeta = *s.ObjectMeta.DeepCopy()
		for k, v := range s.Data {
			cm.Data[k] = string(v)
		}
		return cm
	}
	conv := store.WithCodec(store.Codec().Converting(toSecret, fromSecret))
	key := prefix(t) + "a"
	if err := conv.Create(ctx, key, typ, configMap("a", nil, map[string]string{"v": "1"})); err != nil {
		t.Fatal(err)
	}
	raw, err := store.Get(ctx, key, "secrets", func() runtime.Object { return &corev1.Secret{} })
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := raw.(*corev1.Secret); !ok || string(s.Data["v"]) != "1" {
		t.Fatalf("stored form: %#v", raw)
	}
	got, err := conv.Get(ctx, key, typ, newCM)
	if err != nil {
		t.Fatal(err)
	}
	if cm, ok := got.(*corev1.ConfigMap); !ok || cm.Data["v"] != "1" || cm.Kind != "ConfigMap" {
		t.Fatalf("read back: %#v", got)
	}
	before, _ := store.CurrentRevision(ctx)
	if _, err := conv.GuaranteedUpdate(ctx, key, typ, newCM, nil, func(cur runtime.Object) (runtime.Object, error) { return cur, nil }); err != nil {
		t.Fatal(err)
	}
	if after, _ := store.CurrentRevision(ctx); after != before {
		t.Errorf("no-op update through a converting store wrote: revision %d -> %d", before, after)
	}
	out, err := conv.GuaranteedUpdate(ctx, key, typ, newCM, nil, func(cur runtime.Object) (runtime.Object, error) {
		cur.(*corev1.ConfigMap).Data["v"] = "2"
		return cur, nil
	})
	if err != nil || out.(*corev1.ConfigMap).Data["v"] != "2" {
		t.Fatalf("update: %v %#v", err, out)
	}
	if _, err := conv.Delete(ctx, key, typ, newCM, nil); err != nil {
		t.Fatal(err)
	}
}
