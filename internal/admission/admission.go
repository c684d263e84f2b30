// Package admission defines the admission stage of the API server's
// request path: plugins that may change (mutate) an object before it is
// validated and refuse (validate) a request before it is stored, run in
// upstream's order. Plugins live in subpackages; this package holds only
// the interfaces and the chain.
package admission

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"
)

// Operation is what a request does to an object.
type Operation string

// Operations, as upstream names them.
const (
	Create  Operation = "CREATE"
	Update  Operation = "UPDATE"
	Delete  Operation = "DELETE"
	Connect Operation = "CONNECT"
)

// Attributes describe one request to admission.
type Attributes struct {
	Operation   Operation
	Resource    schema.GroupVersionResource
	Kind        schema.GroupVersionKind
	Subresource string
	Namespace   string
	Name        string
	// Object is the object to be stored (nil for DELETE). Mutating
	// plugins change it in place.
	Object runtime.Object
	// OldObject is the stored object for UPDATE and DELETE.
	OldObject runtime.Object
	UserName  string
	Groups    []string
	// User is the whole identity (UID and extra too), which webhooks
	// and admission policies are shown; nil for the server's own writes.
	User   user.Info
	DryRun bool
	// Default applies the resource's defaults, for plugins that change
	// objects the way clients do (webhook patches), as upstream defaults
	// a patched object; nil when the resource has none.
	Default func(runtime.Object)
	// Patched is set by the plugins that change objects the way clients
	// do (webhooks, mutating policies) when they changed Object, which
	// may then hold fields its schema does not know.
	Patched bool
}

// Plugin is one admission plugin.
type Plugin interface {
	Name() string
}

// Mutator changes objects before validation.
type Mutator interface {
	Plugin
	Admit(ctx context.Context, a *Attributes) error
}

// Validator refuses requests after validation, before storage. Its error
// should be a Kubernetes Status error (403 Forbidden for policy refusals).
type Validator interface {
	Plugin
	Validate(ctx context.Context, a *Attributes) error
}

// Chain runs plugins in order: every Mutator in Admit, then every
// Validator in Validate.
type Chain []Plugin

// Admit runs the chain's mutating plugins.
func (c Chain) Admit(ctx context.Context, a *Attributes) error {
	for _, p := range c {
		if m, ok := p.(Mutator); ok {
			if err := m.Admit(ctx, a); err != nil {
				return err
			}
		}
	}
	return nil
}

// Validate runs the chain's validating plugins.
func (c Chain) Validate(ctx context.Context, a *Attributes) error {
	for _, p := range c {
		if v, ok := p.(Validator); ok {
			if err := v.Validate(ctx, a); err != nil {
				return err
			}
		}
	}
	return nil
}

// Objects gives plugins the API server's own view of stored objects: reads
// from the watch caches (fresh enough for policy), writes through storage
// with optimistic concurrency (quota usage). Errors are Kubernetes Status
// errors (NotFound, Conflict...).
type Objects interface {
	Get(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (runtime.Object, error)
	List(ctx context.Context, gvr schema.GroupVersionResource, namespace string) ([]runtime.Object, error)
	// Update applies fn to the stored object and writes the result,
	// retrying on conflicting writes; it skips admission and validation.
	Update(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, fn func(runtime.Object) (runtime.Object, error)) (runtime.Object, error)
	// Create stores a new object through the full create path.
	Create(ctx context.Context, gvr schema.GroupVersionResource, namespace string, obj runtime.Object) (runtime.Object, error)
}

// NewForbidden wraps a plugin's refusal as upstream's admission does: a
// 403 naming the resource and, when known, the object. An error that is
// already Forbidden is returned as it is.
func NewForbidden(a *Attributes, err error) error {
	if apierrors.IsForbidden(err) {
		return err
	}
	name := a.Name
	if name == "" && a.Object != nil {
		if acc, aerr := meta.Accessor(a.Object); aerr == nil {
			name = acc.GetName()
		}
	}
	return apierrors.NewForbidden(a.Resource.GroupResource(), name, err)
}
