package apiserver

import (
	"net/http/httptest"
	"testing"
)

func TestParseRequestInfo(t *testing.T) {
	cases := []struct {
		method, url string
		want        requestInfo
		ok          bool
	}{
		{"GET", "/api/v1/pods", requestInfo{Version: "v1", Resource: "pods", Verb: "list"}, true},
		{"GET", "/api/v1/pods?watch=true", requestInfo{Version: "v1", Resource: "pods", Verb: "watch"}, true},
		{"GET", "/api/v1/namespaces/ns1/pods/p", requestInfo{Version: "v1", Namespace: "ns1", Resource: "pods", Name: "p", Verb: "get"}, true},
		{"PUT", "/api/v1/namespaces/ns1/pods/p/status", requestInfo{Version: "v1", Namespace: "ns1", Resource: "pods", Name: "p", Subresource: "status", Verb: "update"}, true},
		{"GET", "/api/v1/namespaces/ns1", requestInfo{Version: "v1", Resource: "namespaces", Name: "ns1", Verb: "get"}, true},
		{"GET", "/api/v1/namespaces", requestInfo{Version: "v1", Resource: "namespaces", Verb: "list"}, true},
		{"PUT", "/api/v1/namespaces/ns1/finalize", requestInfo{Version: "v1", Resource: "namespaces", Name: "ns1", Subresource: "finalize", Verb: "update"}, true},
		{"POST", "/apis/apps/v1/namespaces/d/deployments", requestInfo{Group: "apps", Version: "v1", Namespace: "d", Resource: "deployments", Verb: "create"}, true},
		{"DELETE", "/apis/apps/v1/namespaces/d/deployments", requestInfo{Group: "apps", Version: "v1", Namespace: "d", Resource: "deployments", Verb: "deletecollection"}, true},
		{"DELETE", "/apis/apps/v1/namespaces/d/deployments/x", requestInfo{Group: "apps", Version: "v1", Namespace: "d", Resource: "deployments", Name: "x", Verb: "delete"}, true},
		{"PATCH", "/apis/apps/v1/namespaces/d/deployments/x/scale", requestInfo{Group: "apps", Version: "v1", Namespace: "d", Resource: "deployments", Name: "x", Subresource: "scale", Verb: "patch"}, true},
		{"GET", "/api/v1/namespaces/ns1/pods/p:8080/proxy/a/b/", requestInfo{Version: "v1", Namespace: "ns1", Resource: "pods", Name: "p:8080", Subresource: "proxy", ProxyPath: "/a/b/", Verb: "get"}, true},
		{"POST", "/api/v1/namespaces/ns1/pods/p/proxy", requestInfo{Version: "v1", Namespace: "ns1", Resource: "pods", Name: "p", Subresource: "proxy", Verb: "create"}, true},
		// The proxy subresources take their verb from the method, as
		// upstream's; methods without a verb get none.
		{"HEAD", "/api/v1/namespaces/ns1/services/https:s:443/proxy/x", requestInfo{Version: "v1", Namespace: "ns1", Resource: "services", Name: "https:s:443", Subresource: "proxy", ProxyPath: "/x", Verb: "get"}, true},
		{"OPTIONS", "/api/v1/namespaces/ns1/services/s/proxy", requestInfo{Version: "v1", Namespace: "ns1", Resource: "services", Name: "s", Subresource: "proxy", Verb: ""}, true},
		{"DELETE", "/api/v1/namespaces/ns1/services/s:http/proxy/", requestInfo{Version: "v1", Namespace: "ns1", Resource: "services", Name: "s:http", Subresource: "proxy", Verb: "delete"}, true},
		{"PUT", "/api/v1/nodes/n1:10250/proxy/logs/", requestInfo{Version: "v1", Resource: "nodes", Name: "n1:10250", Subresource: "proxy", ProxyPath: "/logs/", Verb: "update"}, true},
		{"PATCH", "/api/v1/nodes/n1/proxy/pods", requestInfo{Version: "v1", Resource: "nodes", Name: "n1", Subresource: "proxy", ProxyPath: "/pods", Verb: "patch"}, true},
		{"GET", "/api/v1/namespaces/ns1/pods/p/log/more", requestInfo{}, false},
		{"GET", "/apis/apps", requestInfo{}, false},
		{"GET", "/api", requestInfo{}, false},
		{"GET", "/healthz", requestInfo{}, false},
	}
	for _, c := range cases {
		got, ok := parseRequestInfo(httptest.NewRequest(c.method, c.url, nil))
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("%s %s: got %+v ok=%v, want %+v ok=%v", c.method, c.url, got, ok, c.want, c.ok)
		}
	}
}
