package server_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/orca-project/orca/internal/kubelet/server"
)

// TestRequestAttributes is upstream's table of kubelet paths to node
// subresources (pkg/kubelet/server/auth.go with KubeletFineGrainedAuthz).
func TestRequestAttributes(t *testing.T) {
	cases := []struct {
		method, path string
		verb         string
		subresources []string
	}{
		{"GET", "/stats/summary", "get", []string{"stats"}},
		{"GET", "/stats", "get", []string{"stats"}},
		{"GET", "/metrics", "get", []string{"metrics"}},
		{"GET", "/metrics/cadvisor", "get", []string{"metrics"}},
		{"GET", "/metrics/probes", "get", []string{"metrics"}},
		{"GET", "/metricsfoo", "get", []string{"proxy"}},
		{"GET", "/logs/", "get", []string{"log"}},
		{"GET", "/logs/syslog", "get", []string{"log"}},
		{"POST", "/checkpoint/ns/pod/ctr", "create", []string{"checkpoint"}},
		{"GET", "/pods", "get", []string{"pods", "proxy"}},
		{"GET", "/pods/", "get", []string{"pods", "proxy"}},
		{"GET", "/podsx", "get", []string{"proxy"}},
		{"GET", "/runningpods/", "get", []string{"pods", "proxy"}},
		{"GET", "/healthz", "get", []string{"healthz", "proxy"}},
		{"GET", "/healthz/syncloop", "get", []string{"healthz", "proxy"}},
		{"GET", "/configz", "get", []string{"configz", "proxy"}},
		{"GET", "/statusz", "get", []string{"statusz", "proxy"}},
		{"GET", "/containerLogs/ns/pod/ctr", "get", []string{"proxy"}},
		{"POST", "/exec/ns/pod/ctr", "create", []string{"proxy"}},
		{"GET", "/exec/ns/pod/ctr", "get", []string{"proxy"}},
		{"POST", "/attach/ns/pod/uid/ctr", "create", []string{"proxy"}},
		{"POST", "/portForward/ns/pod", "create", []string{"proxy"}},
		{"POST", "/run/ns/pod/ctr", "create", []string{"proxy"}},
		{"GET", "/readyz", "get", []string{"proxy"}},
		{"GET", "/", "get", []string{"proxy"}},
		{"PUT", "/debug/flags/v", "update", []string{"proxy"}},
		{"PATCH", "/x", "patch", []string{"proxy"}},
		{"DELETE", "/x", "delete", []string{"proxy"}},
		{"HEAD", "/healthz", "", []string{"healthz", "proxy"}},
	}
	u := &user.DefaultInfo{Name: "alice"}
	for _, c := range cases {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			attrs := server.RequestAttributes(u, c.method, c.path, "node-1")
			var subs []string
			for _, a := range attrs {
				subs = append(subs, a.GetSubresource())
				if a.GetVerb() != c.verb || a.GetResource() != "nodes" || a.GetName() != "node-1" || a.GetAPIGroup() != "" ||
					a.GetAPIVersion() != "v1" || a.GetNamespace() != "" || !a.IsResourceRequest() || a.GetPath() != c.path || a.GetUser() != u {
					t.Errorf("attributes %#v", a)
				}
			}
			if !slices.Equal(subs, c.subresources) {
				t.Errorf("subresources %v, want %v", subs, c.subresources)
			}
		})
	}
}

type fakeAuthn struct {
	u   user.Info
	err error
}

func (f fakeAuthn) AuthenticateRequest(*http.Request) (*authenticator.Response, bool, error) {
	if f.u == nil {
		return nil, false, f.err
	}
	return &authenticator.Response{User: f.u}, true, nil
}

// fakeAuthz allows the subresources in allow, and records what it was asked.
type fakeAuthz struct {
	allow map[string]bool
	err   error
	asked []string
}

func (f *fakeAuthz) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	f.asked = append(f.asked, a.GetVerb()+" "+a.GetResource()+"/"+a.GetSubresource()+" "+a.GetName())
	if f.err != nil {
		return authorizer.DecisionNoOpinion, "", f.err
	}
	if f.allow[a.GetSubresource()] {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
}

func TestWithAuth(t *testing.T) {
	bob := &user.DefaultInfo{Name: "bob", Groups: []string{"system:authenticated"}}
	cases := []struct {
		name        string
		authn       fakeAuthn
		authz       *fakeAuthz
		method      string
		path        string
		code        int
		body        string
		asked       []string
		reachedNext bool
	}{
		{
			name: "no credentials", authn: fakeAuthn{}, authz: &fakeAuthz{}, method: "GET", path: "/healthz",
			code: 401, body: "Unauthorized",
		},
		{
			name: "a refused token", authn: fakeAuthn{err: errors.New("invalid bearer token")}, authz: &fakeAuthz{}, method: "GET", path: "/pods",
			code: 401, body: "Unauthorized",
		},
		{
			name: "allowed proxy", authn: fakeAuthn{u: bob}, authz: &fakeAuthz{allow: map[string]bool{"proxy": true}}, method: "POST", path: "/exec/ns/p/c",
			code: 200, asked: []string{"create nodes/proxy node-1"}, reachedNext: true,
		},
		{
			name: "healthz allowed by itself", authn: fakeAuthn{u: bob}, authz: &fakeAuthz{allow: map[string]bool{"healthz": true}}, method: "GET", path: "/healthz",
			code: 200, asked: []string{"get nodes/healthz node-1"}, reachedNext: true,
		},
		{
			name: "healthz allowed through proxy", authn: fakeAuthn{u: bob}, authz: &fakeAuthz{allow: map[string]bool{"proxy": true}}, method: "GET", path: "/healthz",
			code: 200, asked: []string{"get nodes/healthz node-1", "get nodes/proxy node-1"}, reachedNext: true,
		},
		{
			name: "healthz refused", authn: fakeAuthn{u: bob}, authz: &fakeAuthz{}, method: "GET", path: "/healthz",
			code: 403, body: "Forbidden (user=bob, verb=get, resource=nodes, subresource(s)=[healthz proxy])\n",
			asked: []string{"get nodes/healthz node-1", "get nodes/proxy node-1"},
		},
		{
			name: "metrics are not proxy", authn: fakeAuthn{u: bob}, authz: &fakeAuthz{allow: map[string]bool{"proxy": true}}, method: "GET", path: "/metrics",
			code: 403, body: "Forbidden (user=bob, verb=get, resource=nodes, subresource(s)=[metrics])\n",
			asked: []string{"get nodes/metrics node-1"},
		},
		{
			name: "logs refused", authn: fakeAuthn{u: bob}, authz: &fakeAuthz{allow: map[string]bool{"metrics": true}}, method: "GET", path: "/containerLogs/ns/p/c",
			code: 403, body: "Forbidden (user=bob, verb=get, resource=nodes, subresource(s)=[proxy])\n",
			asked: []string{"get nodes/proxy node-1"},
		},
		{
			name: "authorizer error", authn: fakeAuthn{u: bob}, authz: &fakeAuthz{err: errors.New("connection refused")}, method: "GET", path: "/pods",
			code: 500, body: "Authorization error (user=bob, verb=get, resource=nodes, subresource=pods)",
			asked: []string{"get nodes/pods node-1"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			reached := false
			next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached = true })
			h := server.WithAuth(next, server.Auth{Authenticator: c.authn, Authorizer: c.authz, NodeName: "node-1"})
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(c.method, "https://node-1:10250"+c.path, nil))
			body, _ := io.ReadAll(rec.Result().Body)
			if rec.Code != c.code || (c.body != "" && string(body) != c.body) {
				t.Errorf("got %d %q, want %d %q", rec.Code, body, c.code, c.body)
			}
			if !slices.Equal(c.authz.asked, c.asked) {
				t.Errorf("asked %q, want %q", c.authz.asked, c.asked)
			}
			if reached != c.reachedNext {
				t.Errorf("handler reached: %v", reached)
			}
		})
	}
}
