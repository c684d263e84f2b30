package apiserver

import (
	"context"
	"errors"
	"net/url"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orca-project/orca/internal/admission"
)

// attributes describes a write to the admission chain.
func (s *Server) attributes(ctx context.Context, op admission.Operation, res *resource, sub, ns, name string, obj, old runtime.Object, dryRun bool) *admission.Attributes {
	a := &admission.Attributes{
		Operation: op, Resource: res.GroupVersionResource(), Kind: res.GroupVersionKind(),
		Subresource: sub, Namespace: ns, Name: name, Object: obj, OldObject: old, DryRun: dryRun,
		Default: res.Default,
	}
	if u, ok := UserFrom(ctx); ok {
		a.UserName, a.Groups = u.Name, u.Groups
		a.User = u.Info()
	}
	return a
}

// objects gives admission plugins the server's own storage.
type objects struct{ s *Server }

var _ admission.Objects = objects{}

func (o objects) resource(gvr schema.GroupVersionResource) (*resource, error) {
	r, ok := o.s.resources[gvr]
	if !ok {
		r, ok = o.s.customResource(gvr)
	}
	if !ok || r.CreateOnly {
		return nil, apierrors.NewNotFound(gvr.GroupResource(), "")
	}
	return r, nil
}

// Get reads from the watch cache, then etcd on a miss (an object created
// a moment ago may not be cached yet).
func (o objects) Get(ctx context.Context, gvr schema.GroupVersionResource, ns, name string) (runtime.Object, error) {
	r, err := o.resource(gvr)
	if err != nil {
		return nil, err
	}
	if obj, _, ok := r.cache.Get(r.key(ns, name)); ok {
		return obj, nil
	}
	return o.s.get(ctx, r, ns, name, "")
}

func (o objects) List(_ context.Context, gvr schema.GroupVersionResource, ns string) ([]runtime.Object, error) {
	r, err := o.resource(gvr)
	if err != nil {
		return nil, err
	}
	items, _ := r.cache.List(ns, nil)
	return items, nil
}

func (o objects) Update(ctx context.Context, gvr schema.GroupVersionResource, ns, name string, fn func(runtime.Object) (runtime.Object, error)) (runtime.Object, error) {
	r, err := o.resource(gvr)
	if err != nil {
		return nil, err
	}
	out, err := r.store.GuaranteedUpdate(ctx, r.key(ns, name), r.typ(), r.New, nil, fn)
	if err != nil {
		return nil, r.translateError(err, name)
	}
	return out, nil
}

func (o objects) Create(ctx context.Context, gvr schema.GroupVersionResource, ns string, obj runtime.Object) (runtime.Object, error) {
	r, err := o.resource(gvr)
	if err != nil {
		return nil, err
	}
	if _, err := meta.Accessor(obj); err != nil {
		return nil, errors.New("object has no metadata")
	}
	return o.s.create(ctx, r, ns, obj, false)
}

// ResolveEndpoint lets admission webhooks reach their services as the
// server's own clients do.
func (o objects) ResolveEndpoint(namespace, name string, port int32) (*url.URL, error) {
	return o.s.ResolveEndpoint(namespace, name, port)
}
