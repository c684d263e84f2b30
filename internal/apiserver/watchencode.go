package apiserver

import (
	"bytes"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
)

// sharedEncodings keeps the objects of the most recent watch events
// encoded, so that an event going to many watchers is encoded once per
// format rather than once per watcher. The watch cache never modifies an
// object once it has published it, so the object's identity names its
// encoding; a few hundred recent objects cover the events in flight to
// every watcher.
type sharedEncodings struct {
	mu      sync.Mutex
	index   map[encodingKey]*encoded
	ring    []encodingKey
	next    int
	encodes int // encodings made, for tests
}

// encodingKey names one encoding of one object: the format, and for a
// metadata-only watcher the version of PartialObjectMetadata it reads.
type encodingKey struct {
	obj   runtime.Object
	media string
	as    string
}

type encoded struct {
	once sync.Once
	data []byte
	err  error
}

const sharedEncodingSlots = 512

func newSharedEncodings() *sharedEncodings {
	return &sharedEncodings{index: map[encodingKey]*encoded{}, ring: make([]encodingKey, sharedEncodingSlots)}
}

// encode returns the bytes encode writes for key, calling it only for the
// first watcher that asks; the others wait for that one.
func (c *sharedEncodings) encode(key encodingKey, encode func(*bytes.Buffer) error) ([]byte, error) {
	c.mu.Lock()
	e, ok := c.index[key]
	if !ok {
		e = &encoded{}
		if old := c.ring[c.next]; old.obj != nil {
			delete(c.index, old)
		}
		c.ring[c.next] = key
		c.next = (c.next + 1) % len(c.ring)
		c.index[key] = e
	}
	c.mu.Unlock()
	e.once.Do(func() {
		var buf bytes.Buffer
		e.err = encode(&buf)
		e.data = buf.Bytes()
		c.mu.Lock()
		c.encodes++
		c.mu.Unlock()
	})
	return e.data, e.err
}
