package openapi

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	openapi_v3 "github.com/google/gnostic-models/openapiv3"
	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/kube-openapi/pkg/handler3"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
	explainv2 "k8s.io/kubectl/pkg/explain/v2"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/builtin"
)

const testVersion = "v1.37.2"

// One server for the whole package: building the documents is the slow part
// and the Service builds them once.
var (
	serverOnce sync.Once
	testServer *httptest.Server
)

func server(t *testing.T) *httptest.Server {
	t.Helper()
	serverOnce.Do(func() {
		s, err := New(builtin.Resources(), testVersion)
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		mux := http.NewServeMux()
		s.RegisterRoutes(mux)
		testServer = httptest.NewServer(mux)
	})
	if testServer == nil {
		t.Fatal("test server failed to start")
	}
	return testServer
}

func get(t *testing.T, url, accept string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: reading body: %v", url, err)
	}
	return resp, body
}

func wantGVK(t *testing.T, what string, ext spec.Extensions, want schema.GroupVersionKind) {
	t.Helper()
	var got []map[string]string
	if err := ext.GetObject(extensionGVK, &got); err != nil {
		// Operations carry a single GVK, definitions a list.
		var one map[string]string
		if err := ext.GetObject(extensionGVK, &one); err != nil {
			t.Fatalf("%s: reading %s: %v", what, extensionGVK, err)
		}
		got = []map[string]string{one}
	}
	for _, g := range got {
		if g["group"] == want.Group && g["version"] == want.Version && g["kind"] == want.Kind {
			return
		}
	}
	t.Errorf("%s: %s = %v, want it to include %v", what, extensionGVK, got, want)
}

func TestV2JSON(t *testing.T) {
	srv := server(t)
	resp, body := get(t, srv.URL+"/openapi/v2", "application/json")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	var sw spec.Swagger
	if err := json.Unmarshal(body, &sw); err != nil {
		t.Fatalf("parsing v2 document: %v", err)
	}
	if sw.Info == nil || sw.Info.Title != "Kubernetes" || sw.Info.Version != testVersion {
		t.Errorf("info = %+v", sw.Info)
	}

	for name, gvk := range map[string]schema.GroupVersionKind{
		"io.k8s.api.apps.v1.Deployment":                   {Group: "apps", Version: "v1", Kind: "Deployment"},
		"io.k8s.api.core.v1.Pod":                          {Version: "v1", Kind: "Pod"},
		"io.k8s.api.rbac.v1.ClusterRole":                  {Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"},
		"io.k8s.api.autoscaling.v1.Scale":                 {Group: "autoscaling", Version: "v1", Kind: "Scale"},
		"io.k8s.apimachinery.pkg.apis.meta.v1.Status":     {Version: "v1", Kind: "Status"},
		"io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent": {Group: "apps", Version: "v1", Kind: "WatchEvent"},
	} {
		def, ok := sw.Definitions[name]
		if !ok {
			t.Errorf("definition %s missing", name)
			continue
		}
		wantGVK(t, name, def.Extensions, gvk)
	}
	for _, name := range []string{"io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "io.k8s.apimachinery.pkg.util.intstr.IntOrString", "io.k8s.apimachinery.pkg.api.resource.Quantity"} {
		if _, ok := sw.Definitions[name]; !ok {
			t.Errorf("definition %s missing", name)
		}
	}
	for name := range sw.Definitions {
		if !strings.HasPrefix(name, "io.k8s.") {
			t.Errorf("definition %q is not named like upstream's", name)
		}
	}

	deployment := sw.Paths.Paths["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]
	if deployment.Patch == nil {
		t.Fatal("no PATCH operation for a deployment")
	}
	patch := deployment.Patch
	if patch.ID != "patchAppsV1NamespacedDeployment" {
		t.Errorf("patch operationId = %q", patch.ID)
	}
	if a, _ := patch.Extensions.GetString(extensionAction); a != "patch" {
		t.Errorf("patch %s = %q", extensionAction, a)
	}
	wantGVK(t, "patch operation", patch.Extensions, schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"})
	for _, mt := range patchMediaTypes {
		if !slices.Contains(patch.Consumes, mt) {
			t.Errorf("patch does not consume %s (consumes %v)", mt, patch.Consumes)
		}
	}
	// Shared parameters are hoisted into #/parameters in v2, except the ones
	// clients look for by name.
	names := map[string]bool{}
	for _, p := range append(append([]spec.Parameter(nil), patch.Parameters...), deployment.Parameters...) {
		if ref := p.Ref.String(); ref != "" {
			shared, ok := sw.Parameters[strings.TrimPrefix(ref, "#/parameters/")]
			if !ok {
				t.Errorf("parameter reference %s dangles", ref)
			}
			p = shared
		}
		names[p.Name] = true
	}
	for _, n := range []string{"body", "dryRun", "fieldManager", "fieldValidation", "force", "pretty", "name", "namespace"} {
		if !names[n] {
			t.Errorf("patch operation lacks parameter %s (has %v)", n, names)
		}
	}
}

// TestOperations checks paths and operation IDs against upstream's.
func TestOperations(t *testing.T) {
	srv := server(t)
	_, body := get(t, srv.URL+"/openapi/v2", "application/json")
	var sw spec.Swagger
	if err := json.Unmarshal(body, &sw); err != nil {
		t.Fatalf("parsing v2 document: %v", err)
	}
	ops := map[string]string{} // operationId -> "METHOD path"
	for p, item := range sw.Paths.Paths {
		for method, op := range map[string]*spec.Operation{"GET": item.Get, "PUT": item.Put, "POST": item.Post, "PATCH": item.Patch, "DELETE": item.Delete} {
			if op != nil {
				ops[op.ID] = method + " " + p
			}
		}
	}
	for id, want := range map[string]string{
		"listCoreV1NamespacedPod":                           "GET /api/v1/namespaces/{namespace}/pods",
		"createCoreV1NamespacedPod":                         "POST /api/v1/namespaces/{namespace}/pods",
		"deleteCoreV1CollectionNamespacedPod":               "DELETE /api/v1/namespaces/{namespace}/pods",
		"readCoreV1NamespacedPod":                           "GET /api/v1/namespaces/{namespace}/pods/{name}",
		"replaceCoreV1NamespacedPod":                        "PUT /api/v1/namespaces/{namespace}/pods/{name}",
		"deleteCoreV1NamespacedPod":                         "DELETE /api/v1/namespaces/{namespace}/pods/{name}",
		"readCoreV1NamespacedPodStatus":                     "GET /api/v1/namespaces/{namespace}/pods/{name}/status",
		"listCoreV1PodForAllNamespaces":                     "GET /api/v1/pods",
		"watchCoreV1NamespacedPodList":                      "GET /api/v1/watch/namespaces/{namespace}/pods",
		"watchCoreV1NamespacedPod":                          "GET /api/v1/watch/namespaces/{namespace}/pods/{name}",
		"watchCoreV1PodListForAllNamespaces":                "GET /api/v1/watch/pods",
		"listCoreV1Node":                                    "GET /api/v1/nodes",
		"patchCoreV1NodeStatus":                             "PATCH /api/v1/nodes/{name}/status",
		"watchCoreV1NodeList":                               "GET /api/v1/watch/nodes",
		"readAppsV1NamespacedDeployment":                    "GET /apis/apps/v1/namespaces/{namespace}/deployments/{name}",
		"patchAppsV1NamespacedDeploymentScale":              "PATCH /apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale",
		"replaceCoreV1NamespacedReplicationControllerScale": "PUT /api/v1/namespaces/{namespace}/replicationcontrollers/{name}/scale",
		"listRbacAuthorizationV1ClusterRole":                "GET /apis/rbac.authorization.k8s.io/v1/clusterroles",
		"createStorageV1StorageClass":                       "POST /apis/storage.k8s.io/v1/storageclasses",
		"listCoordinationV1LeaseForAllNamespaces":           "GET /apis/coordination.k8s.io/v1/leases",
		"getCoreAPIVersions":                                "GET /api/",
		"getAPIVersions":                                    "GET /apis/",
		"getAppsAPIGroup":                                   "GET /apis/apps/",
		"getCoreV1APIResources":                             "GET /api/v1/",
		"getCodeVersion":                                    "GET /version/",
	} {
		if got := ops[id]; got != want {
			t.Errorf("operation %s is %q, want %q", id, got, want)
		}
	}

	scale := sw.Paths.Paths["/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale"].Get
	if scale == nil {
		t.Fatal("no GET of a deployment's scale")
	}
	wantGVK(t, "scale operation", scale.Extensions, schema.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"})
	if got := scale.Responses.StatusCodeResponses[http.StatusOK].Schema.Ref.String(); got != "#/definitions/io.k8s.api.autoscaling.v1.Scale" {
		t.Errorf("scale response schema = %s", got)
	}

	list := sw.Paths.Paths["/api/v1/namespaces/{namespace}/configmaps"].Get
	params := map[string]bool{}
	for _, p := range list.Parameters {
		if ref := p.Ref.String(); ref != "" {
			p = sw.Parameters[strings.TrimPrefix(ref, "#/parameters/")]
		}
		params[p.Name] = true
	}
	for _, n := range []string{"allowWatchBookmarks", "continue", "fieldSelector", "labelSelector", "limit", "resourceVersion", "resourceVersionMatch", "timeoutSeconds", "watch"} {
		if !params[n] {
			t.Errorf("list operation lacks parameter %s", n)
		}
	}
}

func TestV2Protobuf(t *testing.T) {
	srv := server(t)
	for _, accept := range []string{
		"application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
		"application/com.github.proto-openapi.spec.v2.v1.0+protobuf",
		// What kubectl's discovery client sends.
		"application/com.github.proto-openapi.spec.v2@v1.0+protobuf, application/json",
	} {
		resp, body := get(t, srv.URL+"/openapi/v2", accept)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("Accept %s: status %d: %s", accept, resp.StatusCode, body)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "application/com.github.proto-openapi.spec.v2.v1.0+protobuf" {
			t.Errorf("Accept %s: Content-Type = %q", accept, ct)
		}
		var doc openapi_v2.Document
		if err := proto.Unmarshal(body, &doc); err != nil {
			t.Fatalf("Accept %s: parsing protobuf: %v", accept, err)
		}
		found := false
		for _, d := range doc.GetDefinitions().GetAdditionalProperties() {
			if d.GetName() == "io.k8s.api.apps.v1.Deployment" {
				found = true
			}
		}
		if !found {
			t.Errorf("Accept %s: protobuf document lacks io.k8s.api.apps.v1.Deployment", accept)
		}
	}

	resp, _ := get(t, srv.URL+"/openapi/v2", "text/html")
	if resp.StatusCode != http.StatusNotAcceptable {
		t.Errorf("Accept text/html: status %d, want 406", resp.StatusCode)
	}
}

func TestV2ETag(t *testing.T) {
	srv := server(t)
	resp, _ := get(t, srv.URL+"/openapi/v2", "")
	etag := resp.Header.Get("Etag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/openapi/v2", nil)
	req.Header.Set("If-None-Match", etag)
	resp2, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp2.Body.Close()
	if resp2.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match with the current ETag: status %d, want 304", resp2.StatusCode)
	}
}

// TestUncompressed checks clients that do not accept gzip get plain JSON.
func TestUncompressed(t *testing.T) {
	srv := server(t)
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/openapi/v3", nil)
	req.Header.Set("Accept-Encoding", "identity")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if enc := resp.Header.Get("Content-Encoding"); enc != "" {
		t.Errorf("Content-Encoding = %q without gzip accepted", enc)
	}
	if !json.Valid(body) {
		t.Errorf("body is not JSON: %.100q", body)
	}
}

func v3Index(t *testing.T, srv *httptest.Server) handler3.OpenAPIV3Discovery {
	t.Helper()
	resp, body := get(t, srv.URL+"/openapi/v3", "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("index: status %d: %s", resp.StatusCode, body)
	}
	var index handler3.OpenAPIV3Discovery
	if err := json.Unmarshal(body, &index); err != nil {
		t.Fatalf("parsing index: %v", err)
	}
	return index
}

func TestV3(t *testing.T) {
	srv := server(t)
	index := v3Index(t, srv)
	for _, key := range []string{"api", "api/v1", "apis", "apis/apps", "apis/apps/v1", "apis/rbac.authorization.k8s.io/v1", "version"} {
		if _, ok := index.Paths[key]; !ok {
			t.Errorf("index lacks %s (has %v)", key, index.Paths)
		}
	}
	for key, gv := range index.Paths {
		resp, body := get(t, srv.URL+gv.ServerRelativeURL, "application/json")
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: status %d: %s", key, resp.StatusCode, body)
			continue
		}
		if cc := resp.Header.Get("Cache-Control"); cc != "public, immutable" {
			t.Errorf("%s: Cache-Control = %q", key, cc)
		}
		var doc spec3.OpenAPI
		if err := json.Unmarshal(body, &doc); err != nil {
			t.Errorf("%s: parsing document: %v", key, err)
			continue
		}
		if !strings.HasPrefix(doc.Version, "3.") || doc.Paths == nil || len(doc.Paths.Paths) == 0 {
			t.Errorf("%s: openapi %q with %d paths", key, doc.Version, len(doc.Paths.Paths))
		}
		for p := range doc.Paths.Paths {
			if !strings.HasPrefix(p, "/"+key+"/") {
				t.Errorf("%s: holds foreign path %s", key, p)
			}
		}
		// Every reference resolves within the document.
		for _, ref := range refs(body) {
			name := strings.TrimPrefix(ref, "#/components/schemas/")
			if _, ok := doc.Components.Schemas[name]; !ok || name == ref {
				t.Errorf("%s: reference %s does not resolve", key, ref)
			}
		}
	}

	apps := index.Paths["apis/apps/v1"].ServerRelativeURL
	_, body := get(t, srv.URL+apps, "application/json")
	var doc spec3.OpenAPI
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	deployment, ok := doc.Components.Schemas["io.k8s.api.apps.v1.Deployment"]
	if !ok {
		t.Fatal("apps/v1 lacks io.k8s.api.apps.v1.Deployment")
	}
	wantGVK(t, "v3 Deployment", deployment.Extensions, schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"})
	patch := doc.Paths.Paths["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"].Patch
	if patch == nil || patch.RequestBody == nil {
		t.Fatal("no PATCH operation with a body for a deployment")
	}
	for _, mt := range patchMediaTypes {
		if _, ok := patch.RequestBody.Content[mt]; !ok {
			t.Errorf("patch request body does not accept %s", mt)
		}
	}

	// Protobuf, and a stale hash redirecting to the current one.
	resp, body := get(t, srv.URL+apps, "application/com.github.proto-openapi.spec.v3@v1.0+protobuf")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("protobuf: status %d", resp.StatusCode)
	}
	var pb openapi_v3.Document
	if err := proto.Unmarshal(body, &pb); err != nil {
		t.Fatalf("parsing protobuf v3 document: %v", err)
	}
	if pb.GetComponents().GetSchemas() == nil {
		t.Error("protobuf v3 document has no schemas")
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	stale, err := noRedirect.Get(srv.URL + "/openapi/v3/apis/apps/v1?hash=0123")
	if err != nil {
		t.Fatal(err)
	}
	stale.Body.Close()
	if stale.StatusCode != http.StatusMovedPermanently || stale.Header.Get("Location") != apps {
		t.Errorf("stale hash: status %d, Location %q, want 301 to %s", stale.StatusCode, stale.Header.Get("Location"), apps)
	}
	missing, _ := get(t, srv.URL+"/openapi/v3/apis/policy/v1beta1", "")
	if missing.StatusCode != http.StatusNotFound {
		t.Errorf("unserved group-version: status %d, want 404", missing.StatusCode)
	}
}

// refs returns every "$ref" value in a JSON document.
func refs(doc []byte) []string {
	var out []string
	dec := json.NewDecoder(bytes.NewReader(doc))
	prevRef := false
	for {
		tok, err := dec.Token()
		if err != nil {
			return out
		}
		if s, ok := tok.(string); ok {
			if prevRef {
				out = append(out, s)
			}
			prevRef = s == "$ref"
		} else {
			prevRef = false
		}
	}
}

func restConfig(t *testing.T) *rest.Config {
	return &rest.Config{Host: server(t).URL}
}

// TestKubectlExplain runs `kubectl explain deployment.spec.strategy`'s own
// code against the server.
func TestKubectlExplain(t *testing.T) {
	dc, err := discovery.NewDiscoveryClientForConfig(restConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	gvr := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	if err := explainv2.PrintModelDescription([]string{"spec", "strategy"}, &out, dc.OpenAPIV3(), gvr, false, 0, "plaintext"); err != nil {
		t.Fatalf("explain deployment.spec.strategy: %v", err)
	}
	for _, want := range []string{"KIND:       Deployment", "FIELD: strategy <DeploymentStrategy>", "rollingUpdate", "RollingUpdate"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("explain output lacks %q:\n%s", want, out.String())
		}
	}
}

// TestFieldValidationSupported runs the check kubectl makes before sending
// fieldValidation to the server.
func TestFieldValidationSupported(t *testing.T) {
	cfg := restConfig(t)
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	verifier := resource.NewQueryParamVerifierV3(dyn, dc.OpenAPIV3(), resource.QueryParamFieldValidation)
	for _, gvk := range []schema.GroupVersionKind{
		{Group: "apps", Version: "v1", Kind: "Deployment"},
		{Version: "v1", Kind: "ConfigMap"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"},
	} {
		if err := verifier.HasSupport(gvk); err != nil {
			t.Errorf("fieldValidation for %v: %v", gvk, err)
		}
	}
}

func TestNewRejectsIncompleteResource(t *testing.T) {
	_, err := New([]*registry.Resource{{Version: "v1", Name: "widgets", Kind: "Widget"}}, testVersion)
	if err == nil {
		t.Fatal("New accepted a resource without New/NewList")
	}
}

func TestToValidOperationID(t *testing.T) {
	for in, want := range map[string]string{
		"rbac.authorization": "RbacAuthorization",
		"v1":                 "V1",
		"v1beta1":            "V1beta1",
		"core":               "Core",
	} {
		if got := toValidOperationID(in, true); got != want {
			t.Errorf("toValidOperationID(%q) = %q, want %q", in, got, want)
		}
	}
	if got := gvTag(schema.GroupVersion{Group: "rbac.authorization.k8s.io", Version: "v1"}); got != "rbacAuthorization_v1" {
		t.Errorf("tag = %q", got)
	}
}
