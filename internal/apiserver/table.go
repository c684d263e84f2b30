package apiserver

import (
	"net/http"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/audit"
)

// writeConverted writes obj (an object or a list) in the negotiated form.
func (s *Server) writeConverted(w http.ResponseWriter, r *http.Request, code int, res *resource, out negotiated, obj runtime.Object) {
	converted, err := s.convert(r, res, out, obj, true)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	audit.LogResponseObject(r.Context(), converted, s.codecs.json)
	s.encode(w, code, out.mediaType, converted)
}

// convert turns obj into the Table or PartialObjectMetadata a client
// asked for. withHeader controls whether a Table carries its column
// definitions (watch events after the first do not).
func (s *Server) convert(r *http.Request, res *resource, out negotiated, obj runtime.Object, withHeader bool) (runtime.Object, error) {
	switch out.as {
	case "Table":
		return s.toTable(r, res, obj, withHeader)
	case "PartialObjectMetadata":
		return partialMetadata(r, obj), nil
	case "PartialObjectMetadataList":
		if !meta.IsListType(obj) {
			return partialMetadata(r, obj), nil
		}
		objs, err := meta.ExtractList(obj)
		if err != nil {
			return nil, err
		}
		if res.Table != nil && res.Table.Less != nil {
			slices.SortStableFunc(objs, func(a, b runtime.Object) int {
				switch {
				case res.Table.Less(a, b):
					return -1
				case res.Table.Less(b, a):
					return 1
				}
				return 0
			})
		}
		lm, _ := meta.ListAccessor(obj)
		pl := &metav1.PartialObjectMetadataList{
			ListMeta: metav1.ListMeta{ResourceVersion: lm.GetResourceVersion(), Continue: lm.GetContinue(), RemainingItemCount: lm.GetRemainingItemCount()},
		}
		pl.GetObjectKind().SetGroupVersionKind(conversionGV(r, out.as).WithKind("PartialObjectMetadataList"))
		for _, o := range objs {
			pm := partialMetadata(r, o)
			pm.TypeMeta = metav1.TypeMeta{}
			pl.Items = append(pl.Items, *pm)
		}
		return pl, nil
	}
	return obj, nil
}

func partialMetadata(r *http.Request, obj runtime.Object) *metav1.PartialObjectMetadata {
	pm := &metav1.PartialObjectMetadata{}
	// Typed objects are their own accessors (ObjectMeta is embedded), so
	// the metadata is reached through GetObjectMeta, not meta.Accessor.
	if u, ok := obj.(*unstructured.Unstructured); ok {
		if m, ok := u.Object["metadata"].(map[string]any); ok {
			_ = runtime.DefaultUnstructuredConverter.FromUnstructured(m, &pm.ObjectMeta)
		}
	} else if ma, ok := obj.(metav1.ObjectMetaAccessor); ok {
		if om, ok := ma.GetObjectMeta().(*metav1.ObjectMeta); ok {
			pm.ObjectMeta = *om
		}
	}
	pm.GetObjectKind().SetGroupVersionKind(conversionGV(r, "PartialObjectMetadata").WithKind("PartialObjectMetadata"))
	return pm
}

// toTable prints obj (or each item of a list) as rows under the
// resource's columns, NAME first, as upstream's server-side printing does.
func (s *Server) toTable(r *http.Request, res *resource, obj runtime.Object, withHeader bool) (*metav1.Table, error) {
	q := r.URL.Query()
	include := metav1.IncludeMetadata
	if v := q.Get("includeObject"); v != "" {
		include = metav1.IncludeObjectPolicy(v)
	}
	t := &metav1.Table{}
	t.GetObjectKind().SetGroupVersionKind(conversionGV(r, "Table").WithKind("Table"))
	if withHeader && q.Get("noHeaders") != "true" {
		t.ColumnDefinitions = s.columns(res)
	}
	var objs []runtime.Object
	if meta.IsListType(obj) {
		var err error
		if objs, err = meta.ExtractList(obj); err != nil {
			return nil, err
		}
		if res.Table != nil && res.Table.Less != nil {
			slices.SortStableFunc(objs, func(a, b runtime.Object) int {
				switch {
				case res.Table.Less(a, b):
					return -1
				case res.Table.Less(b, a):
					return 1
				}
				return 0
			})
		}
		lm, _ := meta.ListAccessor(obj)
		t.ResourceVersion = lm.GetResourceVersion()
		t.Continue = lm.GetContinue()
		t.RemainingItemCount = lm.GetRemainingItemCount()
	} else {
		objs = []runtime.Object{obj}
		if acc, err := meta.Accessor(obj); err == nil {
			t.ResourceVersion = acc.GetResourceVersion()
		}
	}
	now := time.Now()
	for _, o := range objs {
		row := metav1.TableRow{Cells: s.cells(res, o, now)}
		switch include {
		case metav1.IncludeObject:
			row.Object.Object = withKind(o, res)
		case metav1.IncludeMetadata:
			row.Object.Object = partialMetadata(r, o)
		}
		t.Rows = append(t.Rows, row)
	}
	if t.Rows == nil {
		t.Rows = []metav1.TableRow{}
	}
	return t, nil
}

// withKind returns obj carrying its kind; list items are stored without.
func withKind(obj runtime.Object, res *resource) runtime.Object {
	if obj.GetObjectKind().GroupVersionKind().Empty() {
		obj = obj.DeepCopyObject()
		obj.GetObjectKind().SetGroupVersionKind(res.GroupVersionKind())
	}
	return obj
}

var nameColumn = metav1.TableColumnDefinition{
	Name: "Name", Type: "string", Format: "name",
	Description: "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names",
}

var ageColumn = metav1.TableColumnDefinition{
	Name: "Age", Type: "date",
	Description: "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
}

func (s *Server) columns(res *resource) []metav1.TableColumnDefinition {
	if res.Table == nil {
		return []metav1.TableColumnDefinition{nameColumn, ageColumn}
	}
	if res.Table.OwnName {
		return res.Table.Columns
	}
	return append([]metav1.TableColumnDefinition{nameColumn}, res.Table.Columns...)
}

func (s *Server) cells(res *resource, obj runtime.Object, now time.Time) []any {
	acc, _ := meta.Accessor(obj)
	if res.Table == nil {
		return []any{acc.GetName(), age(acc.GetCreationTimestamp(), now)}
	}
	if res.Table.OwnName {
		return res.Table.Row(obj, now)
	}
	return append([]any{acc.GetName()}, res.Table.Row(obj, now)...)
}
