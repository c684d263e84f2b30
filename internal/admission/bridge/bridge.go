// Package bridge adapts the server's admission attributes to those of
// k8s.io/apiserver's admission plugins (webhooks and admission policies),
// so that upstream's dispatchers run on the server's objects: the
// request's attributes and user, its warnings, and the object interfaces
// those plugins convert, create and default objects with.
package bridge

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	upstream "k8s.io/apiserver/pkg/admission"
	auditinternal "k8s.io/apiserver/pkg/apis/audit"
	"k8s.io/apiserver/pkg/warning"

	"github.com/orca-project/orca/internal/admission"
	"github.com/orca-project/orca/internal/audit"
)

// Handler is the part of an upstream plugin that says which operations
// it handles.
type Handler interface {
	Handles(upstream.Operation) bool
}

// Call runs one of an upstream plugin's admission steps (Admit or
// Validate) on a request, when the plugin handles its operation.
func Call(ctx context.Context, a *admission.Attributes, h Handler, step func(context.Context, upstream.Attributes, upstream.ObjectInterfaces) error) error {
	if !h.Handles(upstream.Operation(a.Operation)) {
		return nil
	}
	ctx, attrs := Adapt(ctx, a)
	return step(ctx, attrs, Interfaces(a))
}

// Adapt returns upstream's attributes for a request, and a context whose
// warnings reach the request's client.
func Adapt(ctx context.Context, a *admission.Attributes) (context.Context, upstream.Attributes) {
	if a.Object != nil && a.Kind.Kind != "" {
		// Objects built by the server may lack their kind, which the
		// review sent to a webhook must carry.
		a.Object.GetObjectKind().SetGroupVersionKind(a.Kind)
	}
	var obj, old runtime.Object = a.Object, a.OldObject
	attrs := upstream.NewAttributesRecord(obj, old, a.Kind, a.Namespace, a.Name, a.Resource, a.Subresource,
		upstream.Operation(a.Operation), options(a), a.DryRun, a.User)
	return warning.WithWarningRecorder(ctx, recorder{ctx}), annotated{attrs, ctx}
}

// annotated passes the audit annotations upstream's plugins add (a
// webhook's, a policy's, which mutations ran) to the request's audit
// event.
type annotated struct {
	upstream.Attributes
	ctx context.Context
}

func (a annotated) AddAnnotation(key, value string) error {
	if err := a.Attributes.AddAnnotation(key, value); err != nil {
		return err
	}
	audit.AddAnnotation(a.ctx, key, value)
	return nil
}

func (a annotated) AddAnnotationWithLevel(key, value string, level auditinternal.Level) error {
	if err := a.Attributes.AddAnnotationWithLevel(key, value, level); err != nil {
		return err
	}
	audit.AddAnnotation(a.ctx, key, value)
	return nil
}

// options are the operation's options, as a webhook's review shows them.
func options(a *admission.Attributes) runtime.Object {
	var dry []string
	if a.DryRun {
		dry = []string{metav1.DryRunAll}
	}
	var o runtime.Object
	switch a.Operation {
	case admission.Create:
		o = &metav1.CreateOptions{DryRun: dry}
	case admission.Update:
		o = &metav1.UpdateOptions{DryRun: dry}
	case admission.Delete:
		o = &metav1.DeleteOptions{DryRun: dry}
	default:
		return nil
	}
	o.GetObjectKind().SetGroupVersionKind(metav1.SchemeGroupVersion.WithKind(kindOf(o)))
	return o
}

func kindOf(o runtime.Object) string {
	switch o.(type) {
	case *metav1.CreateOptions:
		return "CreateOptions"
	case *metav1.UpdateOptions:
		return "UpdateOptions"
	}
	return "DeleteOptions"
}

// recorder passes upstream's warnings to the server's.
type recorder struct{ ctx context.Context }

func (r recorder) AddWarning(_, text string) { admission.AddWarning(r.ctx, text) }

// equivalents maps a request's resource to its kind; every resource is
// served in one version here, or, for a custom resource, its versions
// are one resource's each, so a resource is only equivalent to itself.
type equivalents struct{ a *admission.Attributes }

func (e equivalents) EquivalentResourcesFor(resource schema.GroupVersionResource, _ string) []schema.GroupVersionResource {
	return []schema.GroupVersionResource{resource}
}

func (e equivalents) KindFor(resource schema.GroupVersionResource, sub string) schema.GroupVersionKind {
	if resource == e.a.Resource && sub == e.a.Subresource {
		return e.a.Kind
	}
	return schema.GroupVersionKind{}
}
