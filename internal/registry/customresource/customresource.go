// Package customresource turns a CustomResourceDefinition into the
// resources it serves, one per served version: objects kept as
// unstructured JSON and checked, pruned and defaulted by the CRD's
// structural schema, with its CEL rules, status and scale subresources,
// printer columns and selectable fields. The decisions are upstream's
// (k8s.io/apiextensions-apiserver's schema, pruning, defaulting, CEL and
// custom resource strategy packages); the server only calls them.
package customresource

import (
	"context"
	"fmt"
	"strings"
	"time"

	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	crdbuilder "k8s.io/apiextensions-apiserver/pkg/controller/openapi/builder"
	"k8s.io/apiextensions-apiserver/pkg/crdserverscheme"
	crstrategy "k8s.io/apiextensions-apiserver/pkg/registry/customresource"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource/tableconvertor"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/util/jsonpath"
	"k8s.io/kube-openapi/pkg/spec3"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/apiextensions"
)

// Converter converts a custom resource's object to another version of
// its CRD; nil converts as the None strategy does (only apiVersion
// changes).
type Converter func(obj *unstructured.Unstructured, version string) (*unstructured.Unstructured, error)

// Resources returns the resources crd serves, one per served version, by
// the names the CRD's status has accepted.
func Resources(crd *apiextensionsv1.CustomResourceDefinition, convert Converter) ([]*registry.Resource, error) {
	in, err := apiextensions.ToInternal(crd)
	if err != nil {
		return nil, err
	}
	names := crd.Status.AcceptedNames
	if names.Plural == "" || names.Kind == "" {
		return nil, fmt.Errorf("CustomResourceDefinition %s has no accepted names", crd.Name)
	}
	storageVersion, err := apiextensionsinternal.GetCRDStorageVersion(in)
	if err != nil {
		return nil, err
	}
	schemas := map[string]*structuralschema.Structural{}
	for _, v := range in.Spec.Versions {
		s, err := structuralFor(in, v.Name)
		if err != nil {
			return nil, err
		}
		schemas[v.Name] = s
	}
	conv := converter(crd.Spec.Group, convert)
	tc := typeConverter(crd)
	var out []*registry.Resource
	for _, v := range crd.Spec.Versions {
		if !v.Served {
			continue
		}
		r, err := resourceFor(crd, in, v, schemas[v.Name], conv)
		if err != nil {
			return nil, fmt.Errorf("%s version %s: %w", crd.Name, v.Name, err)
		}
		r.StorageVersion = storageVersion
		r.TypeConverter = tc
		out = append(out, r)
	}
	return out, nil
}

// typeConverter gives server-side apply the CRD's schemas of all its
// versions (list types and map keys decide how lists merge), as upstream
// builds it; a CRD whose schemas cannot be built gets the converter that
// deduces types from the objects (every list atomic).
func typeConverter(crd *apiextensionsv1.CustomResourceDefinition) managedfields.TypeConverter {
	var specs []*spec3.OpenAPI
	for _, v := range crd.Spec.Versions {
		s, err := crdbuilder.BuildOpenAPIV3(crd, v.Name, crdbuilder.Options{})
		if err != nil {
			return managedfields.NewDeducedTypeConverter()
		}
		specs = append(specs, s)
	}
	merged, err := crdbuilder.MergeSpecsV3(specs...)
	if err != nil || merged.Components == nil {
		return managedfields.NewDeducedTypeConverter()
	}
	tc, err := managedfields.NewTypeConverter(merged.Components.Schemas, crd.Spec.PreserveUnknownFields)
	if err != nil {
		return managedfields.NewDeducedTypeConverter()
	}
	return tc
}

// structuralFor is a version's structural schema, its defaults pruned as
// upstream serves them; nil when the CRD preserves unknown fields
// without a schema.
func structuralFor(crd *apiextensionsinternal.CustomResourceDefinition, version string) (*structuralschema.Structural, error) {
	val, err := apiextensionsinternal.GetSchemaForVersion(crd, version)
	if err != nil || val == nil || val.OpenAPIV3Schema == nil {
		return nil, err
	}
	s, err := structuralschema.NewStructural(val.OpenAPIV3Schema)
	if err != nil {
		if p := crd.Spec.PreserveUnknownFields; p != nil && *p {
			return nil, nil
		}
		return nil, fmt.Errorf("schema of version %s is not structural: %w", version, err)
	}
	s = s.DeepCopy()
	if err := structuraldefaulting.PruneDefaults(s); err != nil {
		return nil, err
	}
	return s, nil
}

func resourceFor(crd *apiextensionsv1.CustomResourceDefinition, in *apiextensionsinternal.CustomResourceDefinition, v apiextensionsv1.CustomResourceDefinitionVersion, s *structuralschema.Structural, conv func(runtime.Object, string) (runtime.Object, error)) (*registry.Resource, error) {
	names := crd.Status.AcceptedNames
	namespaced := crd.Spec.Scope == apiextensionsv1.NamespaceScoped
	gvk := schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: names.Kind}
	listKind := names.ListKind
	if listKind == "" {
		listKind = names.Kind + "List"
	}
	r := &registry.Resource{
		Group: crd.Spec.Group, Version: v.Name, Name: names.Plural, Singular: names.Singular, Kind: names.Kind,
		ListKind:   listKind,
		Namespaced: namespaced,
		ShortNames: names.ShortNames,
		Categories: names.Categories,
		New: func() runtime.Object {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(gvk)
			return u
		},
		NewList: func() runtime.Object {
			l := &unstructured.UnstructuredList{}
			l.SetGroupVersionKind(gvk.GroupVersion().WithKind(listKind))
			return l
		},
		Unstructured:     true,
		TracksGeneration: true,
		Convert:          conv,
	}
	if v.Deprecated {
		r.Deprecated = deprecationWarning(crd, v)
	}

	// The schema validators and strategy upstream builds for a version.
	val, err := apiextensionsinternal.GetSchemaForVersion(in, v.Name)
	if err != nil {
		return nil, err
	}
	var props *apiextensionsinternal.JSONSchemaProps
	if val != nil {
		props = val.OpenAPIV3Schema
	}
	validator, _, err := apiservervalidation.NewSchemaValidator(props)
	if err != nil {
		return nil, err
	}
	subs, err := apiextensionsinternal.GetSubresourcesForVersion(in, v.Name)
	if err != nil {
		return nil, err
	}
	var statusSpec *apiextensionsinternal.CustomResourceSubresourceStatus
	var statusValidator apiservervalidation.SchemaValidator
	var scaleSpec *apiextensionsinternal.CustomResourceSubresourceScale
	if subs != nil && subs.Status != nil {
		statusSpec = subs.Status
		if props != nil && props.Properties != nil {
			if st, ok := props.Properties["status"]; ok {
				if statusValidator, _, err = apiservervalidation.NewSchemaValidator(&st); err != nil {
					return nil, err
				}
			}
		}
	}
	if subs != nil && subs.Scale != nil {
		scaleSpec = subs.Scale
	}
	strategy := crstrategy.NewStrategy(crdserverscheme.NewUnstructuredObjectTyper(), namespaced, gvk,
		validator, statusValidator, s, statusSpec, scaleSpec, v.SelectableFields)
	statusStrategy := crstrategy.NewStatusStrategy(strategy)
	ctx := context.Background()

	r.Coerce = coercer(gvk.GroupKind(), s, crd.Spec.PreserveUnknownFields)
	if s != nil {
		r.Default = func(obj runtime.Object) {
			structuraldefaulting.Default(obj.(*unstructured.Unstructured).Object, s)
		}
		r.OnRead = reader(s, crd.Spec.PreserveUnknownFields)
	}
	r.Validate = func(obj runtime.Object) field.ErrorList { return strategy.Validate(ctx, obj) }
	r.ValidateUpdate = func(obj, old runtime.Object) field.ErrorList { return strategy.ValidateUpdate(ctx, obj, old) }
	r.ValidateUpdateReplaces = true
	if statusSpec != nil {
		r.Status = true
		r.StatusResetsMetadata = []string{"labels", "annotations", "finalizers", "ownerReferences"}
		r.ValidateStatusUpdate = func(obj, old runtime.Object) field.ErrorList { return statusStrategy.ValidateUpdate(ctx, obj, old) }
	}
	if scaleSpec != nil {
		r.Scale = scaleOf(scaleSpec)
	}
	if r.Table, err = tableOf(crd, v); err != nil {
		return nil, err
	}
	r.Fields = fieldsOf(v.SelectableFields)
	return r, nil
}

// deprecationWarning is upstream's warning for a deprecated version.
func deprecationWarning(crd *apiextensionsv1.CustomResourceDefinition, v apiextensionsv1.CustomResourceDefinitionVersion) string {
	if v.DeprecationWarning != nil {
		return *v.DeprecationWarning
	}
	msg := fmt.Sprintf("%s/%s %s is deprecated", crd.Spec.Group, v.Name, crd.Spec.Names.Kind)
	// Upstream suggests the highest-priority served version that is not
	// deprecated.
	var best string
	for _, o := range crd.Spec.Versions {
		if !o.Served || o.Deprecated {
			continue
		}
		if best == "" || compareVersions(o.Name, best) > 0 {
			best = o.Name
		}
	}
	if best != "" {
		msg += fmt.Sprintf("; use %s/%s %s", crd.Spec.Group, best, crd.Spec.Names.Kind)
	}
	return msg
}

// coercer is upstream's unstructured schema coercer: it validates and
// prunes object metadata, prunes unknown fields by the schema (unless the
// CRD preserves them), drops non-nullable nulls that have no default, and
// returns the paths of the unknown fields it dropped.
func coercer(gk schema.GroupKind, s *structuralschema.Structural, preserveUnknown bool) func(runtime.Object) ([]string, error) {
	return func(obj runtime.Object) ([]string, error) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return nil, fmt.Errorf("custom resource is a %T", obj)
		}
		kind, foundKind, err := unstructured.NestedString(u.Object, "kind")
		if err != nil {
			return nil, err
		}
		apiVersion, foundAPIVersion, err := unstructured.NestedString(u.Object, "apiVersion")
		if err != nil {
			return nil, err
		}
		objectMeta, foundMeta, unknown, err := schemaobjectmeta.GetObjectMetaWithOptions(u.Object, schemaobjectmeta.ObjectMetaOptions{ReturnUnknownFieldPaths: true})
		if err != nil {
			return nil, err
		}
		gv, err := schema.ParseGroupVersion(apiVersion)
		if err != nil {
			return nil, err
		}
		if gv.Group == gk.Group && kind == gk.Kind && s != nil {
			if !preserveUnknown {
				unknown = append(unknown, structuralpruning.PruneWithOptions(u.Object, s, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})...)
				structuraldefaulting.PruneNonNullableNullsWithoutDefaults(u.Object, s)
			}
			ferr, paths := schemaobjectmeta.CoerceWithOptions(nil, u.Object, s, false, schemaobjectmeta.CoerceOptions{ReturnUnknownFieldPaths: true})
			if ferr != nil {
				return nil, ferr
			}
			unknown = append(unknown, paths...)
		}
		if foundKind {
			u.SetKind(kind)
		}
		if foundAPIVersion {
			u.SetAPIVersion(apiVersion)
		}
		if foundMeta {
			if err := schemaobjectmeta.SetObjectMeta(u.Object, objectMeta); err != nil {
				return nil, err
			}
		}
		return unknown, nil
	}
}

// reader completes an object read back from storage: what the schema no
// longer knows pruned, non-nullable nulls dropped, defaults applied, as
// upstream's storage decoder does. Its metadata is not coerced again: the
// server validated it on the way in, and the round trip through
// ObjectMeta is the costliest part of a read.
func reader(s *structuralschema.Structural, preserveUnknown bool) func(runtime.Object) {
	return func(obj runtime.Object) {
		u := obj.(*unstructured.Unstructured).Object
		if !preserveUnknown {
			structuralpruning.Prune(u, s, true)
			structuraldefaulting.PruneNonNullableNullsWithoutDefaults(u, s)
		}
		structuraldefaulting.Default(u, s)
	}
}

// converter converts between versions of one CRD's group; without a
// webhook only apiVersion changes.
func converter(group string, convert Converter) func(runtime.Object, string) (runtime.Object, error) {
	return func(obj runtime.Object, version string) (runtime.Object, error) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return nil, fmt.Errorf("custom resource is a %T", obj)
		}
		if u.GroupVersionKind().Version == version {
			return u, nil
		}
		if convert != nil {
			return convert(u, version)
		}
		out := u.DeepCopy()
		out.SetAPIVersion(schema.GroupVersion{Group: group, Version: version}.String())
		return out, nil
	}
}

// scaleOf maps the CRD's replica paths onto the Scale subresource.
func scaleOf(sc *apiextensionsinternal.CustomResourceSubresourceScale) *registry.Scale {
	specPath := splitPath(sc.SpecReplicasPath)
	statusPath := splitPath(sc.StatusReplicasPath)
	var selectorPath []string
	if sc.LabelSelectorPath != nil {
		selectorPath = splitPath(*sc.LabelSelectorPath)
	}
	return &registry.Scale{
		Get: func(obj runtime.Object) (int32, int32, string) {
			u := obj.(*unstructured.Unstructured)
			spec, _, _ := unstructured.NestedInt64(u.Object, specPath...)
			status, _, _ := unstructured.NestedInt64(u.Object, statusPath...)
			var selector string
			if selectorPath != nil {
				selector, _, _ = unstructured.NestedString(u.Object, selectorPath...)
			}
			return int32(spec), int32(status), selector
		},
		Set: func(obj runtime.Object, replicas int32) {
			u := obj.(*unstructured.Unstructured)
			_ = unstructured.SetNestedField(u.Object, int64(replicas), specPath...)
		},
	}
}

// splitPath turns ".spec.replicas" into its field names.
func splitPath(p string) []string {
	return strings.Split(strings.TrimPrefix(p, "."), ".")
}

// tableOf prints the version's additionalPrinterColumns (Age when it has
// none) as upstream's table convertor does, NAME first.
func tableOf(crd *apiextensionsv1.CustomResourceDefinition, v apiextensionsv1.CustomResourceDefinitionVersion) (*registry.Table, error) {
	cols := v.AdditionalPrinterColumns
	if len(cols) == 0 {
		cols = []apiextensionsv1.CustomResourceColumnDefinition{{
			Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp",
			Description: "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
		}}
	}
	tc, err := tableconvertor.New(cols)
	if err != nil {
		// As upstream: an invalid printer specification falls back to
		// the default table.
		return nil, nil
	}
	head, err := tc.ConvertToTable(context.Background(), &unstructured.UnstructuredList{}, nil)
	if err != nil {
		return nil, err
	}
	return &registry.Table{
		Columns: head.ColumnDefinitions,
		OwnName: true,
		Row: func(obj runtime.Object, _ time.Time) []any {
			t, err := tc.ConvertToTable(context.Background(), obj, &metav1.TableOptions{NoHeaders: true})
			if err != nil || len(t.Rows) == 0 {
				return make([]any, len(head.ColumnDefinitions))
			}
			return t.Rows[0].Cells
		},
	}, nil
}

// fieldsOf returns the selectable fields' values, by the names field
// selectors use ("spec.color").
func fieldsOf(selectable []apiextensionsv1.SelectableField) func(runtime.Object) fields.Set {
	if len(selectable) == 0 {
		return nil
	}
	type field struct {
		name string
		path *jsonpath.JSONPath
	}
	var fs []field
	for _, sf := range selectable {
		p := jsonpath.New("selectableField")
		p.AllowMissingKeys(true)
		if err := p.Parse("{" + sf.JSONPath + "}"); err != nil {
			continue
		}
		fs = append(fs, field{name: strings.TrimPrefix(sf.JSONPath, "."), path: p})
	}
	return func(obj runtime.Object) fields.Set {
		set := fields.Set{}
		u, _ := obj.(*unstructured.Unstructured)
		for _, f := range fs {
			set[f.name] = ""
			if u == nil {
				continue
			}
			res, err := f.path.FindResults(u.Object)
			if err != nil || len(res) == 0 || len(res[0]) == 0 {
				continue
			}
			switch v := res[0][0].Interface().(type) {
			case string:
				set[f.name] = v
			case bool, int64, float64:
				set[f.name] = fmt.Sprint(v)
			}
		}
		return set
	}
}
