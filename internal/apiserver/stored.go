package apiserver

import "k8s.io/apimachinery/pkg/runtime/schema"

// StoredResource is where a served resource keeps its objects.
type StoredResource struct {
	schema.GroupResource
	// Prefix is the etcd key prefix, ending in "/".
	Prefix string
}

// StoredResources lists the served resources by the resource their
// objects are stored as, once each (events.k8s.io Events are core Events),
// for tools that work on stored values, such as encryption at rest.
func (s *Server) StoredResources() []StoredResource {
	var out []StoredResource
	seen := map[string]bool{}
	for _, r := range s.ordered {
		if r.Computed {
			continue
		}
		if seen[r.prefix] {
			continue
		}
		seen[r.prefix] = true
		out = append(out, StoredResource{GroupResource: r.storedGroupResource(), Prefix: r.prefix})
	}
	return out
}

// storedGroupResource names the resource whose keys and form r's objects
// are stored in: r itself unless it is served as another's.
func (r *resource) storedGroupResource() schema.GroupResource {
	if r.StoredAs != nil {
		return r.StoredAs.Resource.GroupResource()
	}
	return r.GroupResource()
}
