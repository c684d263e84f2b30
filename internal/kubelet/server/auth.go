package server

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// Auth is how the kubelet's server decides who may call it: the
// authenticator names the caller, and the authorizer is asked about the
// node subresources RequestAttributes maps the request to.
type Auth struct {
	Authenticator authenticator.Request
	Authorizer    authorizer.UnconditionalAuthorizer
	// NodeName names the Node the attributes are about.
	NodeName string
	Log      *slog.Logger
}

// WithAuth puts a's checks in front of h, as upstream's kubelet filters
// every path of its secure port: 401 for a caller it cannot name, 403 for
// one the authorizer does not allow.
func WithAuth(h http.Handler, a Auth) http.Handler {
	log := a.Log
	if log == nil {
		log = slog.Default()
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		resp, ok, err := a.Authenticator.AuthenticateRequest(r)
		if err != nil || !ok {
			if err != nil {
				log.Info("kubelet request not authenticated", "path", r.URL.Path, "err", err)
			}
			writeText(w, http.StatusUnauthorized, "Unauthorized")
			return
		}
		attrs := RequestAttributes(resp.User, r.Method, r.URL.Path, a.NodeName)
		subresources := make([]string, len(attrs))
		for i, attr := range attrs {
			subresources[i] = attr.GetSubresource()
			decision, _, err := a.Authorizer.Authorize(r.Context(), attr)
			if err != nil {
				log.Error("kubelet request authorization failed", "user", attr.GetUser().GetName(), "verb", attr.GetVerb(), "subresource", attr.GetSubresource(), "err", err)
				writeText(w, http.StatusInternalServerError, fmt.Sprintf("Authorization error (user=%s, verb=%s, resource=%s, subresource=%s)",
					attr.GetUser().GetName(), attr.GetVerb(), attr.GetResource(), attr.GetSubresource()))
				return
			}
			if decision == authorizer.DecisionAllow {
				h.ServeHTTP(w, r)
				return
			}
		}
		// The attributes differ only in their subresource.
		writeText(w, http.StatusForbidden, fmt.Sprintf("Forbidden (user=%s, verb=%s, resource=%s, subresource(s)=%v)\n",
			resp.User.GetName(), attrs[0].GetVerb(), attrs[0].GetResource(), subresources))
	})
}

// writeText answers with msg as written, as go-restful's WriteErrorString
// does for upstream's kubelet (http.Error would add a newline).
func writeText(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	_, _ = io.WriteString(w, msg)
}

// The kubelet's paths that upstream authorizes as their own node
// subresources.
const (
	statsPath       = "/stats/"
	metricsPath     = "/metrics"
	logsPath        = "/logs/"
	checkpointPath  = "/checkpoint/"
	podsPath        = "/pods"
	runningPodsPath = "/runningpods/"
	healthzPath     = "/healthz"
	configzPath     = "/configz"
	statuszPath     = "/statusz"
)

// RequestAttributes are what a request to the kubelet asks of the Node
// node, as upstream's nodeAuthorizerAttributesGetter with
// KubeletFineGrainedAuthz (on in v1.37): the verb from the HTTP method,
// resource nodes, and a subresource by path. /pods, /runningpods,
// /healthz, /configz and /statusz are their own subresource with proxy as
// a fallback, so a caller allowed nodes/proxy keeps its access; stats,
// metrics, logs and checkpoint have only theirs; every other path (exec,
// attach, portForward, containerLogs, run) is nodes/proxy.
func RequestAttributes(u user.Info, method, path, node string) []authorizer.Attributes {
	var subresources []string
	switch {
	case isSubpath(path, podsPath), isSubpath(path, runningPodsPath):
		subresources = append(subresources, "pods")
	case isSubpath(path, healthzPath):
		subresources = append(subresources, "healthz")
	case isSubpath(path, configzPath):
		subresources = append(subresources, "configz")
	case isSubpath(path, statuszPath):
		subresources = append(subresources, "statusz")
	}
	switch {
	case isSubpath(path, statsPath):
		subresources = append(subresources, "stats")
	case isSubpath(path, metricsPath):
		subresources = append(subresources, "metrics")
	case isSubpath(path, logsPath):
		// "log", as pods/log.
		subresources = append(subresources, "log")
	case isSubpath(path, checkpointPath):
		subresources = append(subresources, "checkpoint")
	default:
		subresources = append(subresources, "proxy")
	}
	verb := apiVerb(method)
	attrs := make([]authorizer.Attributes, len(subresources))
	for i, s := range subresources {
		attrs[i] = authorizer.AttributesRecord{
			User: u, Verb: verb, APIVersion: "v1", Resource: "nodes", Subresource: s,
			Name: node, ResourceRequest: true, Path: path,
		}
	}
	return attrs
}

// apiVerb is upstream's mapping; other methods (HEAD, OPTIONS) have no
// verb, which no rule but "*" allows.
func apiVerb(method string) string {
	switch method {
	case http.MethodPost:
		return "create"
	case http.MethodGet:
		return "get"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		return "delete"
	}
	return ""
}

// isSubpath reports whether subpath is path or below it.
func isSubpath(subpath, path string) bool {
	path = strings.TrimSuffix(path, "/")
	return subpath == path || (strings.HasPrefix(subpath, path) && subpath[len(path)] == '/')
}
