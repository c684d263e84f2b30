// Package admissiontest holds an in-memory admission.Objects for the
// plugins' unit tests.
package admissiontest

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orca-project/orca/internal/admission"
)

type key struct {
	gvr      schema.GroupVersionResource
	ns, name string
}

// Objects stores objects by resource, namespace and name. Update is
// serialised, as the real store's compare-and-swap makes it in effect.
type Objects struct {
	mu      sync.Mutex
	objs    map[key]runtime.Object
	rv      int
	Creates int
}

var _ admission.Objects = (*Objects)(nil)

// New returns a store holding objs, each under gvr and its own metadata.
func New() *Objects { return &Objects{objs: map[key]runtime.Object{}} }

// Add stores obj under gvr.
func (o *Objects) Add(gvr schema.GroupVersionResource, obj runtime.Object) *Objects {
	acc, err := meta.Accessor(obj)
	if err != nil {
		panic(err)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.rv++
	acc.SetResourceVersion(strconv.Itoa(o.rv))
	o.objs[key{gvr, acc.GetNamespace(), acc.GetName()}] = obj
	return o
}

func (o *Objects) Get(_ context.Context, gvr schema.GroupVersionResource, ns, name string) (runtime.Object, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	obj, ok := o.objs[key{gvr, ns, name}]
	if !ok {
		return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
	}
	return obj.DeepCopyObject(), nil
}

func (o *Objects) List(_ context.Context, gvr schema.GroupVersionResource, ns string) ([]runtime.Object, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var keys []key
	for k := range o.objs {
		if k.gvr == gvr && (ns == "" || k.ns == ns) {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].ns+"/"+keys[i].name < keys[j].ns+"/"+keys[j].name })
	out := make([]runtime.Object, 0, len(keys))
	for _, k := range keys {
		out = append(out, o.objs[k].DeepCopyObject())
	}
	return out, nil
}

func (o *Objects) Update(_ context.Context, gvr schema.GroupVersionResource, ns, name string, fn func(runtime.Object) (runtime.Object, error)) (runtime.Object, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	k := key{gvr, ns, name}
	cur, ok := o.objs[k]
	if !ok {
		return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
	}
	out, err := fn(cur.DeepCopyObject())
	if err != nil {
		return nil, err
	}
	acc, err := meta.Accessor(out)
	if err != nil {
		return nil, fmt.Errorf("updated object: %w", err)
	}
	o.rv++
	acc.SetResourceVersion(strconv.Itoa(o.rv))
	o.objs[k] = out
	return out.DeepCopyObject(), nil
}

func (o *Objects) Create(_ context.Context, gvr schema.GroupVersionResource, ns string, obj runtime.Object) (runtime.Object, error) {
	acc, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	k := key{gvr, ns, acc.GetName()}
	if _, ok := o.objs[k]; ok {
		return nil, apierrors.NewAlreadyExists(gvr.GroupResource(), acc.GetName())
	}
	o.Creates++
	o.rv++
	acc.SetResourceVersion(strconv.Itoa(o.rv))
	o.objs[k] = obj
	return obj, nil
}
