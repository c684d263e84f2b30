package apiserver

import (
	"context"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
)

// serveComputed answers a Computed resource: get and list go through the
// same handlers as a stored resource's (selectors, tables and
// metadata-only forms), which read from its source; every other verb is
// refused as upstream refuses verbs a resource does not implement.
func (s *Server) serveComputed(w http.ResponseWriter, r *http.Request, res *resource, ri requestInfo) {
	if ri.Subresource != "" {
		s.writeError(w, r, errNotFoundPath())
		return
	}
	switch ri.Verb {
	case "get":
		s.handleGet(w, r, res, ri)
	case "list":
		s.handleList(w, r, res, ri)
	default:
		s.writeError(w, r, apierrors.NewMethodNotSupported(res.GroupResource(), ri.Verb))
	}
}

// computed returns the objects of a Computed resource in namespace (every
// namespace when empty) that match (all, for a nil match), as its source
// makes them now.
func (s *Server) computed(ctx context.Context, res *resource, namespace string, match func(runtime.Object) bool) []runtime.Object {
	source := s.cfg.Computed[res.GroupVersionResource()]
	if source == nil {
		return nil
	}
	var out []runtime.Object
	for _, o := range source(ctx) {
		if namespace != "" {
			if m, err := meta.Accessor(o); err != nil || m.GetNamespace() != namespace {
				continue
			}
		}
		if match == nil || match(o) {
			out = append(out, o)
		}
	}
	return out
}

// computedGet is get for a Computed resource.
func (s *Server) computedGet(ctx context.Context, res *resource, namespace, name string) (runtime.Object, error) {
	for _, o := range s.computed(ctx, res, namespace, nil) {
		if m, err := meta.Accessor(o); err == nil && m.GetName() == name {
			return o, nil
		}
	}
	return nil, apierrors.NewNotFound(res.GroupResource(), name)
}
