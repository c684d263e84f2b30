package apiserver

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/applyconfigurations"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/storage"
)

// typeConverter maps the built-in types to structured-merge-diff's
// schema. Parsing that schema is expensive, so it happens once, on the
// first write.
var typeConverter = sync.OnceValue(func() managedfields.TypeConverter {
	return applyconfigurations.NewTypeConverter(scheme.Scheme)
})

// serverManager owns the writes the server makes on its own behalf (the
// default namespaces), where no request names a manager.
const serverManager = "orca"

// writer says who makes a write and how, for managedFields.
type writer struct {
	manager string
	// applied is set when an apply has already merged the object and
	// computed its managedFields; later stages must keep them.
	applied bool
}

type writerKey struct{}

func withWriter(ctx context.Context, w writer) context.Context {
	return context.WithValue(ctx, writerKey{}, w)
}

// writerFrom is the writer a context names (an apply's, which has
// merged already), else the request's field manager, else the server's.
func writerFrom(ctx context.Context) writer {
	if w, ok := ctx.Value(writerKey{}).(writer); ok && w.manager != "" {
		return w
	}
	if st, ok := stateOf(ctx); ok && st.manager != "" {
		return writer{manager: st.manager}
	}
	return writer{manager: serverManager}
}

// withFieldManager validates the fieldManager query parameter of a write
// and records in the request's context who writes. Without the parameter
// the manager is the client's user-agent up to its first "/", as
// upstream derives it ("kubectl", "kube-controller-manager"...).
func withFieldManager(r *http.Request, ri requestInfo) (*http.Request, error) {
	q := r.URL.Query()
	manager := q.Get("fieldManager")
	var errs field.ErrorList
	var kind string
	switch ri.Verb {
	case "create":
		kind = "CreateOptions"
		errs = metav1validation.ValidateCreateOptions(&metav1.CreateOptions{FieldManager: manager})
	case "update":
		kind = "UpdateOptions"
		errs = metav1validation.ValidateUpdateOptions(&metav1.UpdateOptions{FieldManager: manager})
	case "patch":
		kind = "PatchOptions"
		pt, _ := patchType(r)
		opts := &metav1.PatchOptions{FieldManager: manager}
		if q.Has("force") {
			force := q.Get("force") == "true"
			opts.Force = &force
		}
		errs = metav1validation.ValidatePatchOptions(opts, pt)
	default:
		return r, nil
	}
	if len(errs) > 0 {
		return r, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: kind}, "", errs)
	}
	if manager == "" {
		manager = prefixFromUserAgent(r.UserAgent())
	}
	if st, ok := stateOf(r.Context()); ok {
		st.manager = manager
		return r, nil
	}
	return r.WithContext(withWriter(r.Context(), writer{manager: manager})), nil
}

// prefixFromUserAgent is upstream's manager name for a client that names
// none: the user-agent before its first "/", printable characters only,
// cut at the length a manager name may have.
func prefixFromUserAgent(ua string) string {
	m, _, _ := strings.Cut(ua, "/")
	var buf bytes.Buffer
	for _, r := range m {
		if !unicode.IsPrint(r) {
			continue
		}
		if buf.Len()+utf8.RuneLen(r) > metav1validation.FieldManagerMaxLength {
			break
		}
		buf.WriteRune(r)
	}
	return buf.String()
}

// fieldManagers holds one field manager per subresource of a resource,
// built on first use.
type fieldManagers struct {
	mu    sync.Mutex
	bySub map[string]*managedfields.FieldManager
}

// fieldManager returns the field manager for writes to sub ("" for the
// object itself).
func (r *resource) fieldManager(sub string) (*managedfields.FieldManager, error) {
	r.managers.mu.Lock()
	defer r.managers.mu.Unlock()
	if fm, ok := r.managers.bySub[sub]; ok {
		return fm, nil
	}
	gvk := r.GroupVersionKind()
	tc := typeConverter()
	var conv runtime.ObjectConvertor = scheme.Scheme
	var creater runtime.ObjectCreater = scheme.Scheme
	if r.Unstructured {
		tc = managedfields.NewDeducedTypeConverter()
		conv, creater = unstructuredConverter{r.Resource}, unstructuredConverter{r.Resource}
	}
	if r.TypeConverter != nil {
		tc = r.TypeConverter
	}
	fm, err := managedfields.NewDefaultFieldManager(tc, conv, defaulter{r}, creater,
		gvk, gvk.GroupVersion(), sub, r.resetFields(sub))
	if err != nil {
		return nil, fmt.Errorf("field manager for %s %q: %w", r.GroupResource(), sub, err)
	}
	if r.managers.bySub == nil {
		r.managers.bySub = map[string]*managedfields.FieldManager{}
	}
	r.managers.bySub[sub] = fm
	return fm, nil
}

// defaulter lets an apply's merged result get the resource's defaults, as
// upstream defaults it before comparing with the live object.
type defaulter struct{ r *resource }

func (d defaulter) Default(obj runtime.Object) {
	if d.r.Default != nil {
		d.r.Default(obj)
	}
}

// resetFields are the fields a write to sub cannot change (the server
// puts back the stored values), so a manager must not come to own them:
// .status through the object; through /status, every other top-level
// field and the metadata the resource does not let status writers change;
// through another subresource, what it declares it resets, or all but
// what it declares it owns.
func (r *resource) resetFields(sub string) map[fieldpath.APIVersion]fieldpath.Filter {
	var set *fieldpath.Set
	switch {
	case r.Subresources[sub] != nil && len(r.Subresources[sub].Owns) > 0:
		var matchers []*fieldpath.SetMatcher
		for _, p := range r.Subresources[sub].Owns {
			elems := make([]any, len(p))
			for i, e := range p {
				elems[i] = e
				if e == "*" {
					elems[i] = fieldpath.MatchAnyPathElement()
				}
			}
			matchers = append(matchers, fieldpath.MakePrefixMatcherOrDie(elems...))
		}
		return map[fieldpath.APIVersion]fieldpath.Filter{
			fieldpath.APIVersion(r.GroupVersion().String()): fieldpath.NewIncludeMatcherFilter(matchers...),
		}
	case r.Subresources[sub] != nil:
		set = fieldpath.NewSet()
		for _, p := range r.Subresources[sub].Resets {
			elems := make([]any, len(p))
			for i, e := range p {
				elems[i] = e
			}
			set.Insert(fieldpath.MakePathOrDie(elems...))
		}
	case sub == "status":
		set = fieldpath.NewSet()
		for _, name := range r.StatusResetsMetadata {
			set.Insert(fieldpath.MakePathOrDie("metadata", name))
		}
		for _, name := range topLevelFields(r.New()) {
			if name != "status" {
				set.Insert(fieldpath.MakePathOrDie(name))
			}
		}
	case sub == "" && r.Status && r.Name != "nodes":
		set = fieldpath.NewSet(fieldpath.MakePathOrDie("status"))
	default:
		return nil
	}
	return map[fieldpath.APIVersion]fieldpath.Filter{
		fieldpath.APIVersion(r.GroupVersion().String()): fieldpath.NewExcludeSetFilter(set),
	}
}

// topLevelFields lists the JSON names of an object's fields other than
// its type and object metadata.
func topLevelFields(obj runtime.Object) []string {
	if _, ok := obj.(*unstructured.Unstructured); ok {
		// A custom resource's status writers may not own its spec, as
		// upstream's status strategy declares (other fields are reset
		// all the same).
		return []string{"spec"}
	}
	t := reflect.TypeOf(obj).Elem()
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Name == "TypeMeta" || f.Name == "ObjectMeta" {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}

// trackUpdate records in next's managedFields what the writer in ctx
// changed from live (an empty object on create). An apply has done that
// already. As upstream, a failure here never fails the write: the live
// object's managedFields are kept.
func (s *Server) trackUpdate(ctx context.Context, res *resource, sub string, live, next runtime.Object) (runtime.Object, error) {
	w := writerFrom(ctx)
	if w.applied {
		return next, nil
	}
	fm, err := res.fieldManager(sub)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	storage.SetKind(live, res.GroupVersionKind())
	storage.SetKind(next, res.GroupVersionKind())
	return fm.UpdateNoErrors(live, next, w.manager), nil
}

// unstructuredConverter converts and creates a custom resource's objects
// for its field managers, which compare versions of the object in the
// version they are served in.
type unstructuredConverter struct{ r *registry.Resource }

func (c unstructuredConverter) Convert(in, out, _ any) error {
	return fmt.Errorf("convert %T to %T: not supported for custom resources", in, out)
}

func (c unstructuredConverter) ConvertToVersion(in runtime.Object, gv runtime.GroupVersioner) (runtime.Object, error) {
	kind, ok := gv.KindForGroupVersionKinds([]schema.GroupVersionKind{in.GetObjectKind().GroupVersionKind()})
	if !ok {
		return nil, fmt.Errorf("%s cannot be converted to %v", in.GetObjectKind().GroupVersionKind(), gv)
	}
	if kind.Version == in.GetObjectKind().GroupVersionKind().Version || c.r.Convert == nil {
		return in, nil
	}
	return c.r.Convert(in, kind.Version)
}

func (c unstructuredConverter) ConvertFieldLabel(_ schema.GroupVersionKind, label, value string) (string, string, error) {
	return label, value, nil
}

func (c unstructuredConverter) New(kind schema.GroupVersionKind) (runtime.Object, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(kind)
	return u, nil
}
