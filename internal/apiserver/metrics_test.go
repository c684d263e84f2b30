package apiserver

import (
	"net/http/httptest"
	"testing"
)

// TestMetricLabels: the verb and scope labels of the request metrics are
// upstream's, which its SLO dashboards select on.
func TestMetricLabels(t *testing.T) {
	for _, tc := range []struct {
		name, method, contentType string
		ri                        requestInfo
		verb, scope               string
	}{
		{"create", "POST", "", requestInfo{Verb: "create", Resource: "pods", Namespace: "ns"}, "POST", "namespace"},
		{"update", "PUT", "", requestInfo{Verb: "update", Resource: "pods", Namespace: "ns", Name: "p"}, "PUT", "resource"},
		{"merge patch", "PATCH", "application/merge-patch+json", requestInfo{Verb: "patch", Resource: "nodes", Name: "n"}, "PATCH", "resource"},
		{"server-side apply", "PATCH", "application/apply-patch+yaml", requestInfo{Verb: "patch", Resource: "nodes", Name: "n"}, "APPLY", "resource"},
		{"list across the cluster", "GET", "", requestInfo{Verb: "list", Resource: "pods"}, "LIST", "cluster"},
		{"list in a namespace", "GET", "", requestInfo{Verb: "list", Resource: "pods", Namespace: "ns"}, "LIST", "namespace"},
		{"watch", "GET", "", requestInfo{Verb: "watch", Resource: "pods"}, "WATCH", "cluster"},
		{"delete collection", "DELETE", "", requestInfo{Verb: "deletecollection", Resource: "pods", Namespace: "ns"}, "DELETECOLLECTION", "namespace"},
		{"exec", "POST", "", requestInfo{Verb: "create", Resource: "pods", Subresource: "exec", Namespace: "ns", Name: "p"}, "CONNECT", "resource"},
		{"binding", "POST", "", requestInfo{Verb: "create", Resource: "pods", Subresource: "binding", Namespace: "ns", Name: "p"}, "POST", "resource"},
	} {
		r := httptest.NewRequest(tc.method, "/", nil)
		if tc.contentType != "" {
			r.Header.Set("Content-Type", tc.contentType)
		}
		if got := verbLabel(tc.ri, r); got != tc.verb {
			t.Errorf("%s: verb %q, want %q", tc.name, got, tc.verb)
		}
		if got := scopeLabel(tc.ri); got != tc.scope {
			t.Errorf("%s: scope %q, want %q", tc.name, got, tc.scope)
		}
	}
}
