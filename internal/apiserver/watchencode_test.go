package apiserver

import (
	"bytes"
	"errors"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSharedEncodingsEncodeOncePerObjectAndFormat(t *testing.T) {
	c := newSharedEncodings()
	a := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}
	b := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}} // equal, but another object
	var wg sync.WaitGroup
	for i := 0; i < 100; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			data, err := c.encode(encodingKey{obj: a, media: mediaJSON}, func(buf *bytes.Buffer) error {
				buf.WriteString("a-json")
				return nil
			})
			if err != nil || string(data) != "a-json" {
				t.Errorf("encode = %q, %v", data, err)
			}
		}()
	}
	wg.Wait()
	if c.encodes != 1 {
		t.Fatalf("100 watchers of one event: %d encodings, want 1", c.encodes)
	}
	for _, k := range []encodingKey{{obj: a, media: mediaProtobuf}, {obj: b, media: mediaJSON}, {obj: a, media: mediaJSON, as: "PartialObjectMetadata/meta.k8s.io/v1"}} {
		if _, err := c.encode(k, func(buf *bytes.Buffer) error { buf.WriteString("other"); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	if c.encodes != 4 {
		t.Fatalf("another format, another object and a converted form: %d encodings, want 4", c.encodes)
	}
	boom := errors.New("boom")
	bad := &corev1.ConfigMap{}
	if _, err := c.encode(encodingKey{obj: bad, media: mediaJSON}, func(*bytes.Buffer) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("a failed encoding: %v, want %v", err, boom)
	}
}

func TestSharedEncodingsForgetOldestObjects(t *testing.T) {
	c := newSharedEncodings()
	first := &corev1.ConfigMap{}
	enc := func(buf *bytes.Buffer) error { buf.WriteString("x"); return nil }
	_, _ = c.encode(encodingKey{obj: first, media: mediaJSON}, enc)
	for i := 0; i < sharedEncodingSlots; i++ {
		_, _ = c.encode(encodingKey{obj: &corev1.ConfigMap{}, media: mediaJSON}, enc)
	}
	if len(c.index) != sharedEncodingSlots {
		t.Fatalf("%d encodings kept, want at most %d", len(c.index), sharedEncodingSlots)
	}
	if _, ok := c.index[encodingKey{obj: first, media: mediaJSON}]; ok {
		t.Fatal("the oldest object's encoding is still kept after the ring went round")
	}
}
