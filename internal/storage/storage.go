// Package storage keeps API objects in etcd. Objects are stored as
// Kubernetes protobuf under /registry/...; an object's resourceVersion is the
// etcd ModRevision of its key, so every write is ordered by etcd's revision
// and watches resume from it.
//
// Store talks to etcd. The watch cache in package cache sits on top and
// serves lists and watches from memory.
package storage

import (
	"errors"
	"fmt"
	"io"
	"strconv"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"
)

// Sentinel errors, matched with errors.Is. The API server turns them into
// Kubernetes Status errors naming the resource.
var (
	ErrNotFound      = errors.New("storage: key not found")
	ErrAlreadyExists = errors.New("storage: key already exists")
	ErrConflict      = errors.New("storage: resource version conflict")
	ErrCompacted     = errors.New("storage: revision compacted")
)

// Codec turns objects into stored bytes and back. Built-in kinds use the
// Kubernetes protobuf encoding: compact, fast, and what upstream keeps in
// etcd. Custom resources have no protobuf form; they are kept as JSON, as
// upstream keeps them.
type Codec struct {
	ser runtime.Serializer
	// toStored and fromStored, when set, convert between the objects the
	// codec's users handle and the form kept in etcd.
	toStored, fromStored func(runtime.Object) (runtime.Object, error)
}

// NewCodec returns the codec for every type in client-go's scheme.
func NewCodec() *Codec {
	return &Codec{ser: protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)}
}

// NewUnstructuredCodec returns the codec for custom resources: JSON, read
// into *unstructured.Unstructured.
func NewUnstructuredCodec() *Codec {
	return &Codec{ser: unstructuredJSON{}}
}

// unstructuredJSON is unstructured.UnstructuredJSONScheme as a Serializer.
type unstructuredJSON struct{}

func (unstructuredJSON) Encode(obj runtime.Object, w io.Writer) error {
	return unstructured.UnstructuredJSONScheme.Encode(obj, w)
}

func (unstructuredJSON) Decode(data []byte, gvk *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	if into == nil {
		into = &unstructured.Unstructured{}
	}
	return unstructured.UnstructuredJSONScheme.Decode(data, gvk, into)
}

func (unstructuredJSON) Identifier() runtime.Identifier { return "orca-unstructured-json" }

// Converting returns a codec that keeps objects in etcd in another form:
// toStored converts an object before it is encoded, fromStored after it is
// decoded; either may be nil. toStored must leave its input alone and
// return an object carrying its kind; fromStored gets a freshly decoded
// object, which it may change and return. A resource served from another's
// keys (events.k8s.io Events, stored as core Events) reads and writes
// through one, and so does one that completes what it reads back.
func (c *Codec) Converting(toStored, fromStored func(runtime.Object) runtime.Object) *Codec {
	return c.ConvertingErr(infallible(toStored), infallible(fromStored))
}

// ConvertingErr is Converting for conversions that can fail (a custom
// resource's conversion webhook); their errors fail the read or write.
func (c *Codec) ConvertingErr(toStored, fromStored func(runtime.Object) (runtime.Object, error)) *Codec {
	return &Codec{ser: c.ser, toStored: toStored, fromStored: fromStored}
}

func infallible(f func(runtime.Object) runtime.Object) func(runtime.Object) (runtime.Object, error) {
	if f == nil {
		return nil
	}
	return func(obj runtime.Object) (runtime.Object, error) { return f(obj), nil }
}

// WithCodec returns a store like s (same client and settings) that encodes
// and decodes with c.
func (s *Store) WithCodec(c *Codec) *Store {
	cp := *s
	cp.codec = c
	return &cp
}

// Encode serialises obj, which must carry its apiVersion and kind.
func (c *Codec) Encode(obj runtime.Object) ([]byte, error) {
	if c.toStored != nil {
		var err error
		if obj, err = c.toStored(obj); err != nil {
			return nil, err
		}
	}
	if obj.GetObjectKind().GroupVersionKind().Empty() {
		return nil, fmt.Errorf("encode %T: object has no kind", obj)
	}
	return runtime.Encode(c.ser, obj)
}

// Decode reads data into a fresh object from newObj (or, for a converting
// codec, into the stored type, then converts it) and sets its
// resourceVersion to rev.
func (c *Codec) Decode(data []byte, rev int64, newObj func() runtime.Object) (runtime.Object, error) {
	var into runtime.Object
	if c.fromStored == nil {
		into = newObj()
	}
	obj, _, err := c.ser.Decode(data, nil, into)
	if err != nil {
		return nil, fmt.Errorf("decode stored object: %w", err)
	}
	if c.fromStored != nil {
		if obj, err = c.fromStored(obj); err != nil {
			return nil, err
		}
	}
	// Cached objects are shared between readers, so they must already carry
	// their kind: encoders would otherwise set it in place, racing.
	if gvks, _, err := scheme.Scheme.ObjectKinds(obj); err == nil && len(gvks) > 0 {
		obj.GetObjectKind().SetGroupVersionKind(gvks[0])
	}
	if err := SetResourceVersion(obj, rev); err != nil {
		return nil, err
	}
	return obj, nil
}

// SetResourceVersion writes rev into obj's metadata (0 clears it).
func SetResourceVersion(obj runtime.Object, rev int64) error {
	acc, err := meta.Accessor(obj)
	if err != nil {
		return fmt.Errorf("set resourceVersion: %w", err)
	}
	if rev == 0 {
		acc.SetResourceVersion("")
	} else {
		acc.SetResourceVersion(strconv.FormatInt(rev, 10))
	}
	return nil
}

// ParseResourceVersion reads a client-supplied resourceVersion. An empty
// string is 0.
func ParseResourceVersion(rv string) (int64, error) {
	if rv == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(rv, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("invalid resource version %q", rv)
	}
	return n, nil
}

// SetKind stamps obj with its group, version and kind, which the protobuf
// envelope needs and which typed objects built in memory lack.
func SetKind(obj runtime.Object, gvk schema.GroupVersionKind) {
	obj.GetObjectKind().SetGroupVersionKind(gvk)
}
