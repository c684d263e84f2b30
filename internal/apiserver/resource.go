package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/storage"
	"github.com/orca-project/orca/internal/storage/cache"
)

// resource is a served resource bound to its storage.
type resource struct {
	*registry.Resource
	prefix string // etcd key prefix, ending in "/"
	// store reads and writes the resource's objects; for a resource
	// stored as another, it converts between the two forms.
	store *storage.Store
	cache *cache.Cache
	// fieldKeys are the fields a field selector may name.
	fieldKeys map[string]bool
	managers  fieldManagers
	// goType is the Go type of the resource's objects (r.New()'s), kept
	// so that checking a decoded body's type allocates nothing.
	goType reflect.Type
	// stop ends the watch cache of a custom resource.
	stop context.CancelFunc
}

func newResource(r *registry.Resource, st *storage.Store) *resource {
	stored := r
	switch {
	case r.Unstructured:
		st = st.WithCodec(storage.NewUnstructuredCodec().ConvertingErr(unstructuredToStored(r), unstructuredFromStored(r)))
	case r.StoredAs != nil:
		stored = r.StoredAs.Resource
		st = st.WithCodec(st.Codec().Converting(r.StoredAs.ToStored, r.StoredAs.FromStored))
	case r.OnRead != nil:
		st = st.WithCodec(st.Codec().Converting(nil, func(obj runtime.Object) runtime.Object {
			r.OnRead(obj)
			return obj
		}))
	}
	p := "/registry/"
	if stored.Group != "" {
		p += stored.Group + "/"
	}
	p += stored.Name + "/"
	keys := map[string]bool{"metadata.name": true}
	if r.Namespaced {
		keys["metadata.namespace"] = true
	}
	if r.Fields != nil {
		for k := range r.Fields(r.New()) {
			keys[k] = true
		}
	}
	return &resource{Resource: r, prefix: p, store: st, fieldKeys: keys, goType: reflect.TypeOf(r.New())}
}

// key is the etcd key of one object.
func (r *resource) key(namespace, name string) string {
	if r.Namespaced {
		return r.prefix + namespace + "/" + name
	}
	return r.prefix + name
}

// typ names the resource in metrics.
func (r *resource) typ() string { return r.GroupResource().String() }

// fieldSet is what a field selector is matched against.
func (r *resource) fieldSet(obj runtime.Object) fields.Set {
	acc, err := meta.Accessor(obj)
	if err != nil {
		return nil
	}
	set := fields.Set{"metadata.name": acc.GetName()}
	if r.Namespaced {
		set["metadata.namespace"] = acc.GetNamespace()
	}
	if r.Fields != nil {
		for k, v := range r.Fields(obj) {
			set[k] = v
		}
	}
	return set
}

// translateError turns a storage error into the Status error a client
// expects for this resource and name.
func (r *resource) translateError(err error, name string) error {
	gr := r.GroupResource()
	switch {
	case err == nil:
		return nil
	case errors.Is(err, storage.ErrNotFound):
		return apierrors.NewNotFound(gr, name)
	case errors.Is(err, storage.ErrAlreadyExists):
		return apierrors.NewAlreadyExists(gr, name)
	case errors.Is(err, storage.ErrConflict):
		return apierrors.NewConflict(gr, name, errors.New(conflictMessage))
	case errors.Is(err, storage.ErrCompacted), errors.Is(err, cache.ErrTooOld):
		return apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %v", err))
	case errors.Is(err, context.DeadlineExceeded):
		return apierrors.NewTimeoutError(fmt.Sprintf("request for %s %q timed out", gr, name), 1)
	}
	var se apierrors.APIStatus
	if errors.As(err, &se) {
		return err
	}
	// etcd's own refusals (no leader, request timed out, too many
	// requests) reach the client as they are, a 500 with etcd's message,
	// as upstream's store returns them.
	var ee rpctypes.EtcdError
	if errors.As(err, &ee) {
		return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusInternalServerError, Message: ee.Error()}}
	}
	return apierrors.NewInternalError(err)
}

const conflictMessage = "the object has been modified; please apply your changes to the latest version and try again"

// Struct fields handled by the generic status rules.
func structField(obj runtime.Object, name string) reflect.Value {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return reflect.Value{}
	}
	return v.Elem().FieldByName(name)
}

// resetStatus clears .status, which clients may not set on create.
func resetStatus(obj runtime.Object) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		delete(u.Object, "status")
		return
	}
	if f := structField(obj, "Status"); f.IsValid() && f.CanSet() {
		f.Set(reflect.Zero(f.Type()))
	}
}

// copyField copies one top-level field from src to dst, by its Go name.
func copyField(dst, src runtime.Object, name string) {
	if du, ok := dst.(*unstructured.Unstructured); ok {
		su := src.(*unstructured.Unstructured)
		key := strings.ToLower(name[:1]) + name[1:]
		if v, ok := su.Object[key]; ok {
			du.Object[key] = v
		} else {
			delete(du.Object, key)
		}
		return
	}
	d, s := structField(dst, name), structField(src, name)
	if d.IsValid() && s.IsValid() && d.CanSet() {
		d.Set(s)
	}
}

// keepAllButStatus makes dst equal to src except for .status and the
// metadata a status writer may change, for writes to the /status
// subresource. As upstream's status strategies, labels, annotations,
// finalizers and owner references come from the request unless the
// resource names them in resetMeta.
func keepAllButStatus(dst, src runtime.Object, resetMeta []string) {
	if du, ok := dst.(*unstructured.Unstructured); ok {
		keepAllButStatusUnstructured(du.Object, src.(*unstructured.Unstructured).Object)
	} else {
		dv, sv := reflect.ValueOf(dst).Elem(), reflect.ValueOf(src).Elem()
		for i := 0; i < dv.NumField(); i++ {
			name := dv.Type().Field(i).Name
			if name == "Status" || name == "TypeMeta" || name == "ObjectMeta" {
				continue
			}
			dv.Field(i).Set(sv.Field(i))
		}
	}
	dm, _ := meta.Accessor(dst)
	sm, _ := meta.Accessor(src)
	for _, f := range resetMeta {
		switch f {
		case "labels":
			dm.SetLabels(sm.GetLabels())
		case "annotations":
			dm.SetAnnotations(sm.GetAnnotations())
		case "finalizers":
			dm.SetFinalizers(sm.GetFinalizers())
		case "ownerReferences":
			dm.SetOwnerReferences(sm.GetOwnerReferences())
		}
	}
	dm.SetDeletionTimestamp(sm.GetDeletionTimestamp())
	dm.SetGeneration(sm.GetGeneration())
}

// keepAllButStatusUnstructured is keepAllButStatus for custom resources:
// every top-level field but metadata and status comes from src.
func keepAllButStatusUnstructured(dst, src map[string]any) {
	for k := range dst {
		if _, ok := src[k]; !ok && !keepsOwn(k) {
			delete(dst, k)
		}
	}
	for k, v := range src {
		if !keepsOwn(k) {
			dst[k] = v
		}
	}
}

func keepsOwn(key string) bool {
	return key == "status" || key == "metadata" || key == "apiVersion" || key == "kind"
}

// specOf returns .spec for comparisons; invalid when the kind has none.
// A custom resource's spec is every top-level field but its metadata, as
// upstream counts a change of generation for them (a status kept apart by
// a status subresource never differs here).
func specOf(obj runtime.Object) reflect.Value {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		spec := make(map[string]any, len(u.Object))
		for k, v := range u.Object {
			if k != "metadata" && k != "apiVersion" && k != "kind" {
				spec[k] = v
			}
		}
		return reflect.ValueOf(spec)
	}
	return structField(obj, "Spec")
}

// namespaceScoped reports the validation mode of metadata.namespace.
func (r *resource) namespaceScoped() bool { return r.Namespaced }

// kindMismatch checks the body's apiVersion/kind against the endpoint.
func (r *resource) kindMismatch(obj runtime.Object) error {
	gvk := obj.GetObjectKind().GroupVersionKind()
	want := r.GroupVersionKind()
	// A body naming another kind without its apiVersion ({"kind":"Pod"})
	// decodes into that kind's type with its type information cleared.
	if reflect.TypeOf(obj) != r.goType {
		return apierrors.NewBadRequest(fmt.Sprintf("the kind in the data does not match the expected kind (%s)", want.Kind))
	}
	if gvk.Empty() {
		return nil
	}
	if gvk.Kind != want.Kind || gvk.GroupVersion() != want.GroupVersion() {
		return apierrors.NewBadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%s)",
			strings.TrimPrefix(gvk.GroupVersion().String(), "/"), want.GroupVersion().String()))
	}
	return nil
}

// deletedStatus is what a DELETE of an object that is gone returns.
func (r *resource) deletedStatus(acc metav1.Object) *metav1.Status {
	return &metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusSuccess,
		Details: &metav1.StatusDetails{
			Name:  acc.GetName(),
			Group: r.Group,
			Kind:  r.Name,
			UID:   acc.GetUID(),
		},
	}
}

// unstructuredToStored converts a custom resource's object to its storage
// version before it is written.
func unstructuredToStored(r *registry.Resource) func(runtime.Object) (runtime.Object, error) {
	if r.Convert == nil || r.StorageVersion == "" || r.StorageVersion == r.Version {
		return nil
	}
	return func(obj runtime.Object) (runtime.Object, error) {
		return r.Convert(obj, r.StorageVersion)
	}
}

// unstructuredFromStored completes a custom resource's object read back
// from etcd: converted to the served version, pruned of what its schema
// does not know and defaulted, as upstream reads them (by OnRead when
// the resource has one, else by Coerce and Default).
func unstructuredFromStored(r *registry.Resource) func(runtime.Object) (runtime.Object, error) {
	return func(obj runtime.Object) (runtime.Object, error) {
		if r.Convert != nil && obj.GetObjectKind().GroupVersionKind().Version != r.Version {
			var err error
			if obj, err = r.Convert(obj, r.Version); err != nil {
				return nil, err
			}
		}
		switch {
		case r.OnRead != nil:
			r.OnRead(obj)
		case r.Coerce != nil:
			if _, err := r.Coerce(obj); err != nil {
				return nil, err
			}
			fallthrough
		default:
			if r.Default != nil {
				r.Default(obj)
			}
		}
		return obj, nil
	}
}
