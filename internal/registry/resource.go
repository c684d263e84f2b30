// Package registry describes every resource the API server serves: its names
// for discovery, and the pure decisions the server makes about an object of
// that resource (defaults, validation, what an update may change, how it
// prints as a table, which fields a field selector may name).
//
// The server's shared machinery (internal/apiserver, internal/storage) knows
// nothing of particular kinds; everything kind-specific is reached through a
// Resource.
package registry

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/authentication/user"
)

// Resource is one served resource (a REST collection) and its behaviour.
// Every hook is optional; a nil hook means "nothing to do".
type Resource struct {
	Group    string // "" for the core group
	Version  string
	Name     string // plural, lower case: "deployments"
	Singular string // "deployment"
	Kind     string // "Deployment"

	Namespaced bool
	ShortNames []string
	Categories []string // "all" puts the resource in `kubectl get all`

	// New and NewList return empty typed objects of the resource.
	New     func() runtime.Object
	NewList func() runtime.Object

	// Status is true when the resource has a /status subresource. The main
	// resource then ignores changes to .status, and /status ignores
	// changes to .spec (every top-level field but .status) and to the
	// metadata listed in StatusResetsMetadata, as upstream's status
	// strategies do: labels, annotations, finalizers and owner references
	// written through /status are otherwise kept.
	Status bool
	// StatusResetsMetadata lists the metadata fields, by their JSON names
	// ("labels", "annotations", "finalizers", "ownerReferences"), that a
	// write to /status may not change.
	StatusResetsMetadata []string
	// PrepareForStatusUpdate carries over from old what a write to /status
	// may not change or clear beyond the spec and StatusResetsMetadata,
	// which the server puts back itself.
	PrepareForStatusUpdate func(obj, old runtime.Object)
	// ValidateStatusUpdate, when set, replaces ValidateUpdate for writes
	// through /status, whose rules may differ (a CSR's certificate may
	// only be written there).
	ValidateStatusUpdate func(obj, old runtime.Object) field.ErrorList
	// Subresources are further subresources that each write a part of an
	// object (a CSR's /approval writes its conditions), served like
	// /status: get, update and patch.
	Subresources map[string]*Subresource
	// Scale, when set, gives the resource a /scale subresource.
	Scale *Scale
	// TracksGeneration makes the server set metadata.generation to 1 on
	// create and bump it whenever .spec changes.
	TracksGeneration bool

	// Default fills in defaulted fields, in place, before validation.
	Default func(obj runtime.Object)
	// PrepareForCreate sets what the server decides on create (a pod's
	// initial phase, for example). It runs after Default; the server has
	// already cleared .status for kinds with a status subresource.
	PrepareForCreate func(obj runtime.Object)
	// PrepareForCreateBy records who creates the object, for kinds that
	// keep their requestor (a CertificateSigningRequest). It runs after
	// PrepareForCreate with the authenticated user, after impersonation,
	// or nil for the server's own writes.
	PrepareForCreateBy func(obj runtime.Object, requestor user.Info)
	// PrepareForUpdate carries over from old what a client may not change.
	// It runs after Default.
	PrepareForUpdate func(obj, old runtime.Object)
	// ValidateName checks metadata.name (prefix is true when checking a
	// generateName). Nil means a DNS subdomain (RFC 1123), the rule most
	// kinds use.
	ValidateName func(name string, prefix bool) []string
	// Validate checks a new object. Object metadata (name, labels,
	// annotations...) is validated by the server for every kind; Validate
	// checks the rest, with field paths from the object root
	// ("spec.containers[0].image").
	Validate func(obj runtime.Object) field.ErrorList
	// ValidateUpdate checks an update against the stored object: immutable
	// fields and transitions. Validate also runs on updates, unless
	// ValidateUpdateReplaces says ValidateUpdate checks everything (a
	// custom resource's schema lets values that were already invalid
	// stay, which needs the old object).
	ValidateUpdate         func(obj, old runtime.Object) field.ErrorList
	ValidateUpdateReplaces bool

	// CreateOnly makes the resource a review, as upstream's
	// SelfSubjectAccessReview: a create is answered with the object and
	// the server's verdict in its status; nothing is stored, no other verb
	// is served, and the resource has no table form (asking for a Table is
	// 406). The server checks no metadata: Validate does it all.
	CreateOnly bool

	// Computed makes the resource a view the server computes at each
	// request (upstream's componentstatuses): get and list only, nothing
	// stored or watched; the server's configuration supplies the objects.
	Computed bool

	// Deprecated, when set, is the warning every request for the resource
	// gets, as upstream's "v1 ComponentStatus is deprecated in v1.19+".
	Deprecated string

	// OnRead, when set, completes every object read back from storage
	// with what its stored form cannot hold: the protobuf encoding keeps
	// no apiVersion and kind for objects embedded in others, which some
	// kinds always show. Default should set the same, for the objects a
	// write returns.
	OnRead func(obj runtime.Object)

	// Unstructured marks a custom resource: its objects are
	// *unstructured.Unstructured, kept in etcd as JSON (as upstream keeps
	// them) and served as JSON and YAML only; protobuf is offered for
	// their metadata and tables alone. New and NewList must return
	// unstructured objects.
	Unstructured bool
	// ListKind is the kind of the resource's lists; Kind + "List" when
	// empty.
	ListKind string
	// Coerce, when set, completes the decoding of an Unstructured
	// resource's object from a request body or from storage: it drops the
	// fields the schema does not know and malformed metadata, and returns
	// the paths of the unknown fields, which a request's field validation
	// reports as strict decoding errors.
	Coerce func(obj runtime.Object) (unknown []string, err error)
	// Convert, when set, converts an Unstructured resource's object to
	// another version of its group (a custom resource's versions, by the
	// CRD's conversion strategy); objects are kept in etcd in
	// StorageVersion and served in Version.
	Convert        func(obj runtime.Object, version string) (runtime.Object, error)
	StorageVersion string
	// TypeConverter, when set, gives server-side apply the resource's
	// schema (list types, map keys): a custom resource's, or a built-in
	// type's that client-go does not know (CustomResourceDefinitions).
	// client-go's schemas are used otherwise.
	TypeConverter managedfields.TypeConverter
	// Terminating, when set, reports whether a custom resource's CRD is
	// being deleted: creates are then refused while its objects are
	// removed. It is asked at each create, so that the resource serves on,
	// watches and all, while its CRD terminates.
	Terminating func() bool
	// PrepareForDelete, when set, changes an object as a delete marks it,
	// before its finalizers are looked at (a CRD gets the finalizer that
	// removes its objects first).
	PrepareForDelete func(obj runtime.Object)

	// StoredAs, when set, keeps this resource's objects under another
	// resource's etcd keys and in that resource's form, so both serve the
	// same objects (events.k8s.io Events are the core Events, as upstream
	// stores them). Every other hook works on this resource's own type.
	StoredAs *StoredAs

	// Table prints the resource as kubectl's `get` does. Nil means the
	// default NAME / AGE table.
	Table *Table
	// Fields returns the fields a field selector may name, besides
	// metadata.name and metadata.namespace which every kind supports.
	Fields func(obj runtime.Object) fields.Set
}

// ListKindName returns the kind of the resource's lists.
func (r *Resource) ListKindName() string {
	if r.ListKind != "" {
		return r.ListKind
	}
	return r.Kind + "List"
}

// GroupVersion returns the resource's group and version.
func (r *Resource) GroupVersion() schema.GroupVersion {
	return schema.GroupVersion{Group: r.Group, Version: r.Version}
}

// GroupVersionResource returns the resource's full name.
func (r *Resource) GroupVersionResource() schema.GroupVersionResource {
	return r.GroupVersion().WithResource(r.Name)
}

// GroupVersionKind returns the kind of the resource's objects.
func (r *Resource) GroupVersionKind() schema.GroupVersionKind {
	return r.GroupVersion().WithKind(r.Kind)
}

// GroupResource returns the resource's name without version, as used in
// error messages ("deployments.apps").
func (r *Resource) GroupResource() schema.GroupResource {
	return schema.GroupResource{Group: r.Group, Resource: r.Name}
}

// StoredAs names the resource whose stored objects another resource
// serves, and the conversions between the two forms. Both conversions
// return new objects carrying their kind and leave their input alone.
type StoredAs struct {
	Resource   *Resource
	ToStored   func(obj runtime.Object) runtime.Object
	FromStored func(stored runtime.Object) runtime.Object
}

// Subresource is a subresource that writes part of an object.
type Subresource struct {
	// PrepareForUpdate carries over from old everything a write through
	// the subresource may not change; the server keeps system metadata
	// itself.
	PrepareForUpdate func(obj, old runtime.Object)
	// ValidateUpdate replaces the resource's ValidateUpdate for writes
	// through the subresource.
	ValidateUpdate func(obj, old runtime.Object) field.ErrorList
	// Resets lists the field paths (["spec"], ["status", "certificate"])
	// PrepareForUpdate puts back, which a field manager must therefore
	// never come to own through the subresource.
	Resets [][]string
	// Owns, when set, replaces Resets by its complement: the only field
	// paths a write through the subresource keeps, and so the only ones a
	// field manager may come to own there. An element "*" stands for any
	// item of a list (["spec", "containers", "*", "resources"]).
	Owns [][]string
	// WritesSpec says the subresource changes the spec (a pod's
	// /ephemeralcontainers and /resize), so that a change bumps
	// metadata.generation for a resource that tracks it.
	WritesSpec bool
}

// Scale maps a resource's replica count to the autoscaling/v1 Scale
// subresource.
type Scale struct {
	// Get reads desired replicas, observed replicas and the label selector
	// (in its string form) of obj.
	Get func(obj runtime.Object) (spec, status int32, selector string)
	// Set changes the desired replicas of obj in place.
	Set func(obj runtime.Object, replicas int32)
}

// Table describes how objects of a resource print as rows.
type Table struct {
	// Columns after NAME, which the server puts first. Columns with
	// Priority 1 are shown only by `-o wide`.
	Columns []metav1.TableColumnDefinition
	// Row returns the cells for Columns (without the name), for an object
	// observed at now.
	Row func(obj runtime.Object, now time.Time) []any
	// OwnName means Columns place the name themselves, so the server adds
	// no leading NAME column (upstream's events print it last).
	OwnName bool
	// Less, when set, orders the rows of a list, as the few upstream
	// printers that sort do (FlowSchemas by matching precedence); nil
	// keeps the storage order.
	Less func(a, b runtime.Object) bool
}

// Typed adapts a hook written for one concrete type to the generic form.
func Typed[T runtime.Object](f func(T)) func(runtime.Object) {
	return func(obj runtime.Object) { f(obj.(T)) }
}

// Typed2 adapts a two-object hook written for one concrete type.
func Typed2[T runtime.Object](f func(obj, old T)) func(obj, old runtime.Object) {
	return func(obj, old runtime.Object) { f(obj.(T), old.(T)) }
}

// TypedValidate adapts a validation written for one concrete type.
func TypedValidate[T runtime.Object](f func(T) field.ErrorList) func(runtime.Object) field.ErrorList {
	return func(obj runtime.Object) field.ErrorList { return f(obj.(T)) }
}

// TypedValidateUpdate adapts an update validation written for one type.
func TypedValidateUpdate[T runtime.Object](f func(obj, old T) field.ErrorList) func(obj, old runtime.Object) field.ErrorList {
	return func(obj, old runtime.Object) field.ErrorList { return f(obj.(T), old.(T)) }
}

// TypedRow adapts a table row function written for one concrete type.
func TypedRow[T runtime.Object](f func(obj T, now time.Time) []any) func(runtime.Object, time.Time) []any {
	return func(obj runtime.Object, now time.Time) []any { return f(obj.(T), now) }
}

// TypedFields adapts a field-set function written for one concrete type.
func TypedFields[T runtime.Object](f func(T) fields.Set) func(runtime.Object) fields.Set {
	return func(obj runtime.Object) fields.Set { return f(obj.(T)) }
}
