package apiserver

import (
	"net/http"
	"strings"
)

// requestInfo is what a resource request asks for, read off its path,
// method and query.
type requestInfo struct {
	Group, Version string
	Resource       string
	Subresource    string
	Namespace      string
	Name           string
	// Verb is the Kubernetes verb: get, list, watch, create, update, patch,
	// delete, deletecollection, or empty for other methods.
	Verb string
	// ProxyPath is the path a proxy subresource passes on
	// (pods/NAME/proxy/PATH); empty for other requests.
	ProxyPath string
}

// parseRequestInfo reads a resource path:
//
//	/api/v1/RESOURCE[/NAME[/SUB]]
//	/api/v1/namespaces/NS/RESOURCE[/NAME[/SUB]]
//	/api/v1/namespaces/NS/RESOURCE/NAME/proxy/PATH...
//	/apis/GROUP/VERSION/... (the same)
//
// It returns ok=false for paths that are not resource requests.
func parseRequestInfo(r *http.Request) (requestInfo, bool) {
	var ri requestInfo
	parts := splitPath(r.URL.Path)
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		ri.Version = parts[1]
		parts = parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		ri.Group, ri.Version = parts[1], parts[2]
		parts = parts[3:]
	default:
		return ri, false
	}
	// "namespaces/NS/RESOURCE..." addresses a namespaced resource; plain
	// "namespaces/NS[/status|/finalize]" is the namespace object itself.
	if parts[0] == "namespaces" && len(parts) >= 3 && !(len(parts) == 3 && (parts[2] == "status" || parts[2] == "finalize")) {
		ri.Namespace = parts[1]
		parts = parts[2:]
	}
	ri.Resource = parts[0]
	if len(parts) > 1 {
		ri.Name = parts[1]
	}
	if len(parts) > 2 {
		ri.Subresource = parts[2]
	}
	if len(parts) > 3 {
		if ri.Subresource != "proxy" {
			return ri, false
		}
		ri.ProxyPath = "/" + strings.Join(parts[3:], "/")
		if strings.HasSuffix(r.URL.Path, "/") {
			ri.ProxyPath += "/"
		}
	}
	q := r.URL.Query()
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		switch {
		case ri.Name != "":
			ri.Verb = "get"
		case isTrue(q.Get("watch")):
			ri.Verb = "watch"
		default:
			ri.Verb = "list"
		}
	case http.MethodPost:
		ri.Verb = "create"
	case http.MethodPut:
		ri.Verb = "update"
	case http.MethodPatch:
		ri.Verb = "patch"
	case http.MethodDelete:
		if ri.Name == "" {
			ri.Verb = "deletecollection"
		} else {
			ri.Verb = "delete"
		}
	default:
		// Upstream gives other methods (OPTIONS, which the proxy
		// subresources pass on) no verb; only a "*" rule allows them.
		ri.Verb = ""
	}
	return ri, true
}

func splitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

func isTrue(s string) bool { return s == "true" || s == "1" }
