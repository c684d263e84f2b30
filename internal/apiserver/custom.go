package apiserver

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"

	"github.com/orca-project/orca/internal/registry"
)

// customSet is the custom resources served at one moment. It is replaced
// as a whole whenever a CustomResourceDefinition changes, so that a
// request sees one consistent set without locking.
type customSet struct {
	byGVR map[schema.GroupVersionResource]*resource
	// byOwner lists the resources each owner (a CRD, by name) serves.
	byOwner map[string][]*resource
	// ordered is the discovery order: by group, versions by Kubernetes'
	// version priority (v1 before v1beta1), then by resource.
	ordered []*resource
}

// custom holds the Server's dynamic resources.
type custom struct {
	mu  sync.Mutex // serialises changes; readers use set
	set atomic.Pointer[customSet]
	// ctx is the server's run context, which custom caches live within.
	ctx atomic.Pointer[context.Context]
}

func (c *custom) load() *customSet {
	if s := c.set.Load(); s != nil {
		return s
	}
	return &customSet{}
}

// customResource looks up a served custom resource.
func (s *Server) customResource(gvr schema.GroupVersionResource) (*resource, bool) {
	r, ok := s.custom.load().byGVR[gvr]
	return r, ok
}

// served lists every served resource, built-in ones first, in discovery
// order.
func (s *Server) served() []*resource {
	cs := s.custom.load()
	if len(cs.ordered) == 0 {
		return s.ordered
	}
	out := make([]*resource, 0, len(s.ordered)+len(cs.ordered))
	out = append(out, s.ordered...)
	return append(out, cs.ordered...)
}

// SetServed replaces what owner serves (a CRD's versions, by its name)
// with rs; an empty rs stops serving them. New resources get watch caches
// of their own, which stop when they are replaced; watches on them end
// and clients re-establish them on the new ones. A resource whose name is
// already served by another owner or built in is refused.
func (s *Server) SetServed(owner string, rs []*registry.Resource) error {
	s.custom.mu.Lock()
	defer s.custom.mu.Unlock()
	old := s.custom.load()
	next := &customSet{byGVR: map[schema.GroupVersionResource]*resource{}, byOwner: map[string][]*resource{}}
	for o, list := range old.byOwner {
		if o == owner {
			continue
		}
		next.byOwner[o] = list
		for _, r := range list {
			next.byGVR[r.GroupVersionResource()] = r
		}
	}
	ctxp := s.custom.ctx.Load()
	var added []*resource
	for _, rr := range rs {
		gvr := rr.GroupVersionResource()
		if _, ok := s.resources[gvr]; ok {
			return fmt.Errorf("resource %s is built in", gvr)
		}
		if _, ok := next.byGVR[gvr]; ok {
			return fmt.Errorf("resource %s is served already", gvr)
		}
		r := s.bindResource(rr)
		if ctxp != nil {
			ctx, cancel := context.WithCancel(*ctxp)
			r.stop = cancel
			go r.cache.Run(ctx)
		}
		next.byGVR[gvr] = r
		added = append(added, r)
	}
	if len(added) > 0 {
		next.byOwner[owner] = added
	}
	for _, list := range next.byOwner {
		next.ordered = append(next.ordered, list...)
	}
	sortDiscovery(next.ordered)
	s.custom.set.Store(next)
	for _, r := range old.byOwner[owner] {
		if r.stop != nil {
			r.stop()
		}
	}
	return nil
}

// sortDiscovery orders custom resources as upstream's discovery lists
// them: groups by name, a group's versions by priority, resources by name.
func sortDiscovery(rs []*resource) {
	sort.SliceStable(rs, func(i, j int) bool {
		a, b := rs[i], rs[j]
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		if a.Version != b.Version {
			return version.CompareKubeAwareVersionStrings(a.Version, b.Version) > 0
		}
		return a.Name < b.Name
	})
}

// startCustom lets custom resources' caches run within ctx, starting
// those registered before the server ran.
func (s *Server) startCustom(ctx context.Context) {
	s.custom.mu.Lock()
	defer s.custom.mu.Unlock()
	s.custom.ctx.Store(&ctx)
	for _, r := range s.custom.load().ordered {
		if r.stop == nil {
			cctx, cancel := context.WithCancel(ctx)
			r.stop = cancel
			go r.cache.Run(cctx)
		}
	}
}
