package apiserver

import (
	"net/http"
	"sort"
	"strings"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// verbs every resource supports, as discovery lists them.
var resourceVerbs = metav1.Verbs{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}

// groupOrder is the order upstream's discovery lists groups in.
func (s *Server) groupVersions() []schema.GroupVersion {
	seen := map[schema.GroupVersion]bool{}
	var out []schema.GroupVersion
	for _, r := range s.served() {
		gv := r.GroupVersion()
		if !seen[gv] {
			seen[gv] = true
			out = append(out, gv)
		}
	}
	return out
}

func (s *Server) resourcesOf(gv schema.GroupVersion) []*resource {
	var out []*resource
	for _, r := range s.served() {
		if r.GroupVersion() == gv {
			out = append(out, r)
		}
	}
	return out
}

// apiResourceList is /api/v1 or /apis/G/V.
func (s *Server) apiResourceList(gv schema.GroupVersion) *metav1.APIResourceList {
	list := &metav1.APIResourceList{GroupVersion: gv.String()}
	list.Kind, list.APIVersion = "APIResourceList", "v1"
	rs := s.resourcesOf(gv)
	sort.Slice(rs, func(i, j int) bool { return rs[i].Name < rs[j].Name })
	for _, r := range rs {
		list.APIResources = append(list.APIResources, metav1.APIResource{
			Name: r.Name, SingularName: r.Singular, Namespaced: r.Namespaced, Kind: r.Kind,
			Verbs: verbsOf(r), ShortNames: r.ShortNames, Categories: r.Categories,
		})
		for _, sub := range subresourcesOf(r) {
			list.APIResources = append(list.APIResources, metav1.APIResource{
				Name: r.Name + "/" + sub.name, Namespaced: r.Namespaced, Kind: sub.kind,
				Group: sub.group, Version: sub.version, Verbs: sub.verbs,
			})
		}
	}
	return list
}

// verbsOf is what discovery lists for a resource: reviews are only
// created, computed views only read.
func verbsOf(r *resource) metav1.Verbs {
	if r.CreateOnly {
		return metav1.Verbs{"create"}
	}
	if r.Computed {
		return metav1.Verbs{"get", "list"}
	}
	return resourceVerbs
}

type subresourceInfo struct {
	name, kind, group, version string
	verbs                      metav1.Verbs
}

func subresourcesOf(r *resource) []subresourceInfo {
	var out []subresourceInfo
	if r.Name == "pods" {
		out = append(out,
			subresourceInfo{name: "binding", kind: "Binding", verbs: metav1.Verbs{"create"}},
			subresourceInfo{name: "eviction", kind: "Eviction", group: "policy", version: "v1", verbs: metav1.Verbs{"create"}},
			subresourceInfo{name: "attach", kind: "PodAttachOptions", verbs: metav1.Verbs{"create", "get"}},
			subresourceInfo{name: "exec", kind: "PodExecOptions", verbs: metav1.Verbs{"create", "get"}},
			subresourceInfo{name: "log", kind: "Pod", verbs: metav1.Verbs{"get"}},
			subresourceInfo{name: "portforward", kind: "PodPortForwardOptions", verbs: metav1.Verbs{"create", "get"}},
			subresourceInfo{name: "proxy", kind: "PodProxyOptions", verbs: metav1.Verbs{"create", "delete", "get", "patch", "update"}},
		)
	}
	switch r.GroupVersionResource() {
	case servicesGVR:
		out = append(out, subresourceInfo{name: "proxy", kind: "ServiceProxyOptions", verbs: metav1.Verbs{"create", "delete", "get", "patch", "update"}})
	case nodesGVR:
		out = append(out, subresourceInfo{name: "proxy", kind: "NodeProxyOptions", verbs: metav1.Verbs{"create", "delete", "get", "patch", "update"}})
	}
	if r.Name == "serviceaccounts" {
		out = append(out, subresourceInfo{name: "token", kind: "TokenRequest", group: "authentication.k8s.io", version: "v1", verbs: metav1.Verbs{"create"}})
	}
	if r.Name == "namespaces" {
		out = append(out, subresourceInfo{name: "finalize", kind: "Namespace", verbs: metav1.Verbs{"update"}})
	}
	if r.Scale != nil {
		out = append(out, subresourceInfo{name: "scale", kind: "Scale", group: "autoscaling", version: "v1", verbs: metav1.Verbs{"get", "patch", "update"}})
	}
	if r.Status {
		out = append(out, subresourceInfo{name: "status", kind: r.Kind, verbs: metav1.Verbs{"get", "patch", "update"}})
	}
	for name := range r.Subresources {
		out = append(out, subresourceInfo{name: name, kind: r.Kind, verbs: metav1.Verbs{"get", "patch", "update"}})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// aggregated builds the apidiscovery.k8s.io/v2 document for the core
// group (legacy=true) or for all named groups.
func (s *Server) aggregated(legacy bool) *apidiscoveryv2.APIGroupDiscoveryList {
	out := &apidiscoveryv2.APIGroupDiscoveryList{}
	out.Kind, out.APIVersion = "APIGroupDiscoveryList", apidiscoveryv2.SchemeGroupVersion.String()
	for _, gv := range s.groupVersions() {
		if (gv.Group == "") != legacy {
			continue
		}
		ver := apidiscoveryv2.APIVersionDiscovery{Version: gv.Version, Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent}
		rs := s.resourcesOf(gv)
		sort.Slice(rs, func(i, j int) bool { return rs[i].Name < rs[j].Name })
		for _, r := range rs {
			scope := apidiscoveryv2.ScopeCluster
			if r.Namespaced {
				scope = apidiscoveryv2.ScopeNamespace
			}
			d := apidiscoveryv2.APIResourceDiscovery{
				Resource: r.Name, SingularResource: r.Singular, Scope: scope,
				ResponseKind: &metav1.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind},
				Verbs:        verbsOf(r), ShortNames: r.ShortNames, Categories: r.Categories,
			}
			for _, sub := range subresourcesOf(r) {
				g, v := sub.group, sub.version
				if g == "" && v == "" {
					g, v = r.Group, r.Version
				}
				d.Subresources = append(d.Subresources, apidiscoveryv2.APISubresourceDiscovery{
					Subresource:  sub.name,
					ResponseKind: &metav1.GroupVersionKind{Group: g, Version: v, Kind: sub.kind},
					Verbs:        sub.verbs,
				})
			}
			ver.Resources = append(ver.Resources, d)
		}
		// Versions of one group are merged into one entry.
		merged := false
		for i := range out.Items {
			if out.Items[i].Name == gv.Group {
				out.Items[i].Versions = append(out.Items[i].Versions, ver)
				merged = true
			}
		}
		if !merged {
			g := apidiscoveryv2.APIGroupDiscovery{Versions: []apidiscoveryv2.APIVersionDiscovery{ver}}
			g.Name = gv.Group
			out.Items = append(out.Items, g)
		}
	}
	if !legacy {
		out.Items = append(out.Items, s.remoteDiscovery()...)
	}
	return out
}

// remoteDiscovery is the aggregated discovery of the extension servers'
// groups, from what each last listed; a server that did not answer its
// last check is listed as stale, as upstream marks it.
func (s *Server) remoteDiscovery() []apidiscoveryv2.APIGroupDiscovery {
	rms := s.remotes()
	var out []apidiscoveryv2.APIGroupDiscovery
	for _, g := range s.remoteGroups() {
		gd := apidiscoveryv2.APIGroupDiscovery{}
		gd.Name = g.Name
		for _, v := range g.Versions {
			rm := rms[schema.GroupVersion{Group: g.Name, Version: v.Version}]
			vd := apidiscoveryv2.APIVersionDiscovery{Version: v.Version, Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent}
			if rm == nil || !rm.available || rm.discovery == nil {
				vd.Freshness = apidiscoveryv2.DiscoveryFreshnessStale
			} else {
				vd.Resources = toResourceDiscovery(g.Name, v.Version, rm.discovery.APIResources)
			}
			gd.Versions = append(gd.Versions, vd)
		}
		out = append(out, gd)
	}
	return out
}

// toResourceDiscovery turns a group version's resource list into its
// aggregated form, subresources under their resources.
func toResourceDiscovery(group, version string, list []metav1.APIResource) []apidiscoveryv2.APIResourceDiscovery {
	var out []apidiscoveryv2.APIResourceDiscovery
	index := map[string]int{}
	for _, r := range list {
		if strings.Contains(r.Name, "/") {
			continue
		}
		scope := apidiscoveryv2.ScopeCluster
		if r.Namespaced {
			scope = apidiscoveryv2.ScopeNamespace
		}
		g, v := r.Group, r.Version
		if g == "" && v == "" {
			g, v = group, version
		}
		index[r.Name] = len(out)
		out = append(out, apidiscoveryv2.APIResourceDiscovery{
			Resource: r.Name, SingularResource: r.SingularName, Scope: scope,
			ResponseKind: &metav1.GroupVersionKind{Group: g, Version: v, Kind: r.Kind},
			Verbs:        r.Verbs, ShortNames: r.ShortNames, Categories: r.Categories,
		})
	}
	for _, r := range list {
		parent, sub, ok := strings.Cut(r.Name, "/")
		i, found := index[parent]
		if !ok || !found {
			continue
		}
		g, v := r.Group, r.Version
		if g == "" && v == "" {
			g, v = group, version
		}
		out[i].Subresources = append(out[i].Subresources, apidiscoveryv2.APISubresourceDiscovery{
			Subresource: sub, ResponseKind: &metav1.GroupVersionKind{Group: g, Version: v, Kind: r.Kind}, Verbs: r.Verbs,
		})
	}
	return out
}

// wantsAggregated reports whether the client asked for aggregated
// discovery, which it lists before the plain documents.
func wantsAggregated(r *http.Request) (string, bool) {
	for _, m := range parseAccept(r.Header.Get("Accept")) {
		out := outputType(m.Type)
		if out == "" {
			continue
		}
		if m.As() == "APIGroupDiscoveryList" && m.Params["g"] == apidiscoveryv2.SchemeGroupVersion.Group && m.Params["v"] == "v2" {
			return out, true
		}
		if m.As() == "" {
			return out, false
		}
	}
	return mediaJSON, false
}

// serveDiscovery answers /api, /apis and their group and version paths.
// It reports false for paths that are not discovery.
func (s *Server) serveDiscovery(w http.ResponseWriter, r *http.Request) bool {
	parts := splitPath(r.URL.Path)
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	var obj runtime.Object
	mt, agg := wantsAggregated(r)
	switch {
	case len(parts) == 1 && parts[0] == "api":
		if agg {
			s.writeDiscovery(w, mt, s.aggregated(true))
			return true
		}
		v := &metav1.APIVersions{Versions: []string{"v1"}, ServerAddressByClientCIDRs: []metav1.ServerAddressByClientCIDR{{ClientCIDR: "0.0.0.0/0", ServerAddress: r.Host}}}
		v.Kind = "APIVersions"
		obj = v
	case len(parts) == 2 && parts[0] == "api" && parts[1] == "v1":
		obj = s.apiResourceList(schema.GroupVersion{Version: "v1"})
	case len(parts) == 1 && parts[0] == "apis":
		if agg {
			s.writeDiscovery(w, mt, s.aggregated(false))
			return true
		}
		list := &metav1.APIGroupList{}
		list.Kind, list.APIVersion = "APIGroupList", "v1"
		for _, g := range s.apiGroups() {
			list.Groups = append(list.Groups, g)
		}
		obj = list
	case len(parts) == 2 && parts[0] == "apis":
		for _, g := range s.apiGroups() {
			if g.Name == parts[1] {
				g.Kind, g.APIVersion = "APIGroup", "v1"
				obj = &g
			}
		}
	case len(parts) == 3 && parts[0] == "apis":
		gv := schema.GroupVersion{Group: parts[1], Version: parts[2]}
		if len(s.resourcesOf(gv)) > 0 {
			obj = s.apiResourceList(gv)
		}
	default:
		return false
	}
	if obj == nil {
		s.writeError(w, r, errNotFoundPath())
		return true
	}
	s.encode(w, http.StatusOK, mt, obj)
	return true
}

func (s *Server) writeDiscovery(w http.ResponseWriter, mt string, obj runtime.Object) {
	w.Header().Set("Vary", "Accept")
	var buf strings.Builder
	if err := s.codecs.encoderFor(mt).Encode(obj, &buf); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", mt+";g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")
	_, _ = w.Write([]byte(buf.String()))
}

func (s *Server) apiGroups() []metav1.APIGroup {
	out := s.localGroups()
	local := map[string]bool{}
	for _, g := range out {
		local[g.Name] = true
	}
	for _, g := range s.remoteGroups() {
		if !local[g.Name] {
			out = append(out, g)
		}
	}
	return out
}

// localGroups are the groups the server serves itself.
func (s *Server) localGroups() []metav1.APIGroup {
	var out []metav1.APIGroup
	for _, gv := range s.groupVersions() {
		if gv.Group == "" {
			continue
		}
		found := false
		for i := range out {
			if out[i].Name == gv.Group {
				out[i].Versions = append(out[i].Versions, metav1.GroupVersionForDiscovery{GroupVersion: gv.String(), Version: gv.Version})
				found = true
			}
		}
		if !found {
			v := metav1.GroupVersionForDiscovery{GroupVersion: gv.String(), Version: gv.Version}
			out = append(out, metav1.APIGroup{Name: gv.Group, Versions: []metav1.GroupVersionForDiscovery{v}, PreferredVersion: v})
		}
	}
	return out
}
