package apiserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path"
	"reflect"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/storage"
	"github.com/orca-project/orca/internal/storage/cache"
)

// freshTimeout bounds how long a consistent read waits for the watch
// cache before reading etcd instead.
const freshTimeout = 3 * time.Second

func (s *Server) handleGet(w http.ResponseWriter, r *http.Request, res *resource, ri requestInfo) {
	out, err := res.negotiate(r, "Table", "PartialObjectMetadata")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	obj, err := s.get(r.Context(), res, ri.Namespace, ri.Name, r.URL.Query().Get("resourceVersion"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeConverted(w, r, http.StatusOK, res, out, obj)
}

// get reads one object. resourceVersion "0" (any) is served from the
// cache; anything else is a linearizable read of etcd, as upstream.
func (s *Server) get(ctx context.Context, res *resource, ns, name, rv string) (runtime.Object, error) {
	if res.Computed {
		return s.computedGet(ctx, res, ns, name)
	}
	if rv == "0" {
		obj, _, ok := res.cache.Get(res.key(ns, name))
		if !ok {
			return nil, apierrors.NewNotFound(res.GroupResource(), name)
		}
		return obj, nil
	}
	obj, err := res.store.Get(ctx, res.key(ns, name), res.typ(), res.New)
	if err != nil {
		return nil, res.translateError(err, name)
	}
	return obj, nil
}

// listOptions are the query parameters of a list or watch.
type listOptions struct {
	labels    labels.Selector
	fields    fields.Selector
	limit     int64
	cont      string
	rv        string
	rvMatch   string
	namespace string
}

func (s *Server) parseListOptions(r *http.Request, res *resource, ns string) (*listOptions, error) {
	q := r.URL.Query()
	opts := &listOptions{rv: q.Get("resourceVersion"), rvMatch: q.Get("resourceVersionMatch"), cont: q.Get("continue"), namespace: ns}
	var err error
	if opts.labels, err = labels.Parse(q.Get("labelSelector")); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("unable to parse requirement: %v", err))
	}
	if opts.fields, err = fields.ParseSelector(q.Get("fieldSelector")); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid field selector: %v", err))
	}
	for _, req := range opts.fields.Requirements() {
		if !res.fieldKeys[req.Field] {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("field label not supported: %s", req.Field))
		}
	}
	if l := q.Get("limit"); l != "" {
		if opts.limit, err = strconv.ParseInt(l, 10, 64); err != nil || opts.limit < 0 {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid limit %q", l))
		}
	}
	if _, err := storage.ParseResourceVersion(opts.rv); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	switch opts.rvMatch {
	case "", string(metav1.ResourceVersionMatchNotOlderThan), string(metav1.ResourceVersionMatchExact):
	default:
		return nil, apierrors.NewBadRequest(fmt.Sprintf("resourceVersionMatch: unsupported value %q", opts.rvMatch))
	}
	if opts.rvMatch != "" && (opts.rv == "" || (opts.rvMatch == string(metav1.ResourceVersionMatchExact) && opts.rv == "0")) && !isTrue(q.Get("watch")) {
		return nil, apierrors.NewBadRequest("resourceVersionMatch is forbidden unless resourceVersion is provided (and not 0 for Exact)")
	}
	// A continued list reads at its token's revision; upstream lets
	// resourceVersion=0 ride along and ignores it.
	if opts.cont != "" && opts.rv != "" && opts.rv != "0" {
		return nil, apierrors.NewBadRequest("specifying resource version is not allowed when using continue")
	}
	return opts, nil
}

// match reports whether obj is in the namespace and selectors.
func (o *listOptions) matcher(res *resource) func(runtime.Object) bool {
	if o.labels.Empty() && o.fields.Empty() {
		return nil
	}
	return func(obj runtime.Object) bool {
		acc, err := meta.Accessor(obj)
		if err != nil {
			return false
		}
		if !o.labels.Matches(labels.Set(acc.GetLabels())) {
			return false
		}
		return o.fields.Empty() || o.fields.Matches(res.fieldSet(obj))
	}
}

// continueToken is upstream's continue format: base64 of a small JSON
// document holding the list's revision and the next key, relative to the
// list's own key prefix (its namespace's, for a namespaced list), so that
// a token cannot widen the range it continues. A revision of -1 continues
// at the latest revision: the token a 410 carries once the list's own
// revision has been compacted away.
type continueToken struct {
	APIVersion string `json:"v"`
	RV         int64  `json:"rv"`
	Start      string `json:"start"`
}

// latestRevision in a continue token lists the rest at the current
// revision, inconsistently with the pages before it.
const latestRevision = -1

func encodeContinue(rv int64, next, prefix string) string {
	b, _ := json.Marshal(continueToken{APIVersion: "meta.k8s.io/v1", RV: rv, Start: strings.TrimPrefix(next, prefix)})
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeContinue checks a token as upstream does, with its messages, and
// returns the revision to read at (0 for the latest) and the key to start
// from.
func decodeContinue(tok, prefix string) (int64, string, error) {
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return 0, "", fmt.Errorf("continue key is not valid: %v", err)
	}
	var c continueToken
	if err := json.Unmarshal(b, &c); err != nil {
		return 0, "", fmt.Errorf("continue key is not valid: %v", err)
	}
	if c.APIVersion != "meta.k8s.io/v1" {
		return 0, "", fmt.Errorf("continue key is not valid: server does not recognize this encoded version %v", c.APIVersion)
	}
	switch {
	case c.RV == 0:
		return 0, "", errors.New("continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)")
	case c.Start == "":
		return 0, "", errors.New("continue key is not valid: encoded start key empty (version meta.k8s.io/v1)")
	}
	// A start key that path cleaning changes ("../other-namespace")
	// could reach outside the prefix.
	key := "/" + strings.TrimPrefix(c.Start, "/")
	if path.Clean(key) != key {
		return 0, "", fmt.Errorf("continue key is not valid: %v", c.Start)
	}
	rv := c.RV
	if rv < 0 {
		rv = 0
	}
	return rv, prefix + key[1:], nil
}

func (s *Server) handleList(w http.ResponseWriter, r *http.Request, res *resource, ri requestInfo) {
	out, err := res.negotiate(r, "Table", "PartialObjectMetadataList")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	opts, err := s.parseListOptions(r, res, ri.Namespace)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	items, rev, next, remaining, err := s.list(r.Context(), res, opts)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	list := res.NewList()
	setListKind(list, res)
	if err := setListItems(list, items); err != nil {
		s.writeError(w, r, err)
		return
	}
	lm, _ := meta.ListAccessor(list)
	if rev != 0 {
		// A computed list has no revision; a stored one always has one.
		lm.SetResourceVersion(strconv.FormatInt(rev, 10))
	}
	lm.SetContinue(next)
	lm.SetRemainingItemCount(remaining)
	s.writeConverted(w, r, http.StatusOK, res, out, list)
}

// list serves a list from the watch cache where upstream semantics allow
// and from etcd otherwise (pages, exact revisions, a cache that lags).
func (s *Server) list(ctx context.Context, res *resource, o *listOptions) ([]runtime.Object, int64, string, *int64, error) {
	match := o.matcher(res)
	if res.Computed {
		// Made at the request: no revision, no pages.
		return s.computed(ctx, res, o.namespace, match), 0, "", nil, nil
	}
	prefix := res.prefix
	if o.namespace != "" {
		prefix += o.namespace + "/"
	}
	fromEtcd := func(rev int64, start string) ([]runtime.Object, int64, string, *int64, error) {
		lr, err := res.store.List(ctx, prefix, res.typ(), res.New, storage.ListOptions{Revision: rev, Start: start, Limit: o.limit, Match: match})
		if errors.Is(err, storage.ErrCompacted) {
			// Only a continued list starts at a key.
			if start != "" {
				return nil, 0, "", nil, expiredContinue(start, prefix)
			}
			return nil, 0, "", nil, apierrors.NewResourceExpired("The resourceVersion for the provided list is too old.")
		}
		if err != nil {
			return nil, 0, "", nil, res.translateError(err, "")
		}
		next := ""
		if lr.Next != "" {
			next = encodeContinue(lr.Revision, lr.Next, prefix)
		}
		return lr.Items, lr.Revision, next, lr.Remaining, nil
	}
	if o.cont != "" {
		rev, start, err := decodeContinue(o.cont, prefix)
		if err != nil {
			return nil, 0, "", nil, apierrors.NewBadRequest("invalid continue token: " + err.Error())
		}
		return fromEtcd(rev, start)
	}
	rv, _ := storage.ParseResourceVersion(o.rv)
	if o.rvMatch == string(metav1.ResourceVersionMatchExact) {
		return fromEtcd(rv, "")
	}
	if o.limit > 0 && o.rv != "0" {
		return fromEtcd(rv, "")
	}
	if o.rv != "0" {
		want := rv
		if o.rv == "" {
			cur, err := s.cfg.Store.CurrentRevision(ctx)
			if err != nil {
				return nil, 0, "", nil, apierrors.NewInternalError(err)
			}
			want = cur
		}
		if err := res.cache.WaitFresh(ctx, want, freshTimeout); err != nil {
			if errors.Is(err, cache.ErrStopped) {
				return nil, 0, "", nil, errNotFoundPath()
			}
			if errors.Is(err, cache.ErrNotFresh) && o.rv == "" {
				return fromEtcd(0, "")
			}
			return nil, 0, "", nil, apierrors.NewTimeoutError(fmt.Sprintf("Too large resource version: %s, current: %d", o.rv, res.cache.Revision()), 1)
		}
	}
	items, rev := res.cache.List(o.namespace, match)
	return items, rev, "", nil, nil
}

// expiredContinue is upstream's 410 for a continue token whose revision
// etcd has compacted away: it carries a token that lists the rest from
// the same key at the latest revision, for clients that accept an
// inconsistent list.
func expiredContinue(start, prefix string) error {
	err := apierrors.NewResourceExpired("The provided continue parameter is too old to display a consistent list result. " +
		"You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. " +
		"Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.")
	err.ErrStatus.ListMeta.Continue = encodeContinue(latestRevision, start, prefix)
	return err
}

// setListItems fills a typed list's Items with copies of objs. The copies
// drop apiVersion and kind, which list items do not carry on the wire.
func setListItems(list runtime.Object, objs []runtime.Object) error {
	items := reflect.ValueOf(list).Elem().FieldByName("Items")
	if !items.IsValid() {
		return fmt.Errorf("%T has no Items", list)
	}
	slice := reflect.MakeSlice(items.Type(), len(objs), len(objs))
	for i, o := range objs {
		v := reflect.ValueOf(o).Elem()
		slice.Index(i).Set(v)
		if tm := slice.Index(i).FieldByName("TypeMeta"); tm.IsValid() {
			tm.Set(reflect.Zero(tm.Type()))
		}
	}
	items.Set(slice)
	return nil
}

func setListKind(list runtime.Object, res *resource) {
	list.GetObjectKind().SetGroupVersionKind(res.GroupVersion().WithKind(res.ListKindName()))
}

// newWithKind returns an empty object of the resource carrying its kind.
func (r *resource) newWithKind() runtime.Object {
	obj := r.New()
	obj.GetObjectKind().SetGroupVersionKind(r.GroupVersionKind())
	return obj
}
