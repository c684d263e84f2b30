package apiserver

import (
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
)

// serveComputed answers get and list of a Computed resource from its
// source, with the same selectors, tables and metadata-only forms as a
// stored resource; every other verb is refused as upstream refuses verbs
// a resource does not implement.
func (s *Server) serveComputed(w http.ResponseWriter, r *http.Request, res *resource, ri requestInfo) {
	if ri.Subresource != "" {
		s.writeError(w, r, errNotFoundPath())
		return
	}
	if ri.Verb != "get" && ri.Verb != "list" {
		s.writeError(w, r, apierrors.NewMethodNotSupported(res.GroupResource(), ri.Verb))
		return
	}
	var objs []runtime.Object
	if source := s.cfg.Computed[res.GroupVersionResource()]; source != nil {
		objs = source(r.Context())
	}
	if ri.Verb == "get" {
		out, err := negotiate(r, "Table", "PartialObjectMetadata")
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		for _, o := range objs {
			if m, err := meta.Accessor(o); err == nil && m.GetName() == ri.Name {
				s.writeConverted(w, r, http.StatusOK, res, out, o)
				return
			}
		}
		s.writeError(w, r, apierrors.NewNotFound(res.GroupResource(), ri.Name))
		return
	}
	out, err := negotiate(r, "Table", "PartialObjectMetadataList")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	opts, err := s.parseListOptions(r, res, ri.Namespace)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	match := opts.matcher(res)
	var items []runtime.Object
	for _, o := range objs {
		if match == nil || match(o) {
			items = append(items, o)
		}
	}
	list := res.NewList()
	setListKind(list, res)
	if err := setListItems(list, items); err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeConverted(w, r, http.StatusOK, res, out, list)
}
