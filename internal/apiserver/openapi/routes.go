package openapi

import (
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"unicode"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/kube-openapi/pkg/common"

	"github.com/orca-project/orca/internal/registry"
)

// The routes below reproduce what upstream's endpoint installer
// (k8s.io/apiserver/pkg/endpoints/installer.go) registers with go-restful,
// as plain values implementing kube-openapi's common.Route family. Feeding
// them to kube-openapi's builders then yields the same paths, operation IDs,
// parameters and responses upstream publishes, without a go-restful
// container or k8s.io/apiserver.

const (
	extensionGVK    = "x-kubernetes-group-version-kind"
	extensionAction = "x-kubernetes-action"
)

// Media types as upstream lists them for built-in resources. Watch streams
// are only produced by list and watch operations.
var (
	mediaTypes    = []string{"application/json", "application/yaml", "application/vnd.kubernetes.protobuf"}
	allMediaTypes = append(append([]string(nil), mediaTypes...),
		"application/json;stream=watch", "application/vnd.kubernetes.protobuf;stream=watch")
	// Upstream's web services consume anything; the body decoder decides.
	anyMediaType = []string{"*/*"}
	// The patch types kubectl and controllers send; the request body of a
	// patch operation advertises exactly these.
	patchMediaTypes = []string{
		"application/json-patch+json",
		"application/merge-patch+json",
		"application/strategic-merge-patch+json",
		"application/apply-patch+yaml",
	}
)

const prettyDoc = "If 'true', then the output is pretty printed. Defaults to 'false' unless the user-agent indicates a browser or command-line HTTP tool (curl and wget)."

type parameter struct {
	name, description string
	kind              common.ParameterKind
	dataType          string
	required          bool
}

func (p *parameter) Name() string               { return p.name }
func (p *parameter) Description() string        { return p.description }
func (p *parameter) Required() bool             { return p.required }
func (p *parameter) Kind() common.ParameterKind { return p.kind }
func (p *parameter) DataType() string           { return p.dataType }
func (p *parameter) AllowMultiple() bool        { return false }

type response struct {
	code    int
	message string
	model   any
}

func (r response) Code() int       { return r.code }
func (r response) Message() string { return r.message }
func (r response) Model() any      { return r.model }

type route struct {
	method, path, operation, description string
	tag                                  string // upstream's: "apps_v1", "core_v1"
	params                               []common.Parameter
	consumes, produces                   []string
	metadata                             map[string]any
	reads, writes                        any
	responses                            []common.StatusCodeResponse
}

func (r *route) Method() string                                   { return r.method }
func (r *route) Path() string                                     { return r.path }
func (r *route) OperationName() string                            { return r.operation }
func (r *route) Parameters() []common.Parameter                   { return r.params }
func (r *route) Description() string                              { return r.description }
func (r *route) Consumes() []string                               { return r.consumes }
func (r *route) Produces() []string                               { return r.produces }
func (r *route) Metadata() map[string]any                         { return r.metadata }
func (r *route) RequestPayloadSample() any                        { return r.reads }
func (r *route) ResponsePayloadSample() any                       { return r.writes }
func (r *route) StatusCodeResponses() []common.StatusCodeResponse { return r.responses }

// container is what upstream calls a web service: the routes of one
// group-version (or one discovery root), which becomes one OpenAPI v3
// document.
type container struct {
	root   string // "/apis/apps/v1"
	routes []common.Route
}

func (c *container) RootPath() string                   { return c.root }
func (c *container) PathParameters() []common.Parameter { return nil }
func (c *container) Routes() []common.Route             { return c.routes }

// v3Key is the name of the container's document in the OpenAPI v3 index,
// which is its root path without the leading slash ("apis/apps/v1").
func (c *container) v3Key() string { return strings.TrimPrefix(c.root, "/") }

func queryParam(name, description, dataType string) *parameter {
	return &parameter{name: name, description: description, kind: common.QueryParameterKind, dataType: dataType}
}

func pathParam(name, description string) *parameter {
	return &parameter{name: name, description: description, kind: common.PathParameterKind, dataType: "string", required: true}
}

func bodyParam(required bool) *parameter {
	return &parameter{name: "body", kind: common.BodyParameterKind, required: required}
}

// optionParams turns the fields of an options struct (metav1.ListOptions,
// metav1.PatchOptions...) into query parameters, documented by the struct's
// SwaggerDoc, as upstream's AddObjectParams does. Deriving them from the
// structs keeps new upstream parameters (fieldValidation was one) appearing
// without edits here.
func optionParams(obj interface{ SwaggerDoc() map[string]string }, exclude ...string) []common.Parameter {
	docs := obj.SwaggerDoc()
	t := reflect.TypeOf(obj)
	var params []common.Parameter
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || slices.Contains(exclude, name) {
			continue
		}
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		var dataType string
		switch ft.Kind() {
		case reflect.Bool:
			dataType = "boolean"
		case reflect.Int, reflect.Int32, reflect.Int64, reflect.Uint32, reflect.Uint64:
			dataType = "integer"
		case reflect.String:
			dataType = "string"
		case reflect.Slice:
			// Repeated query parameters are documented by their element
			// type, as upstream does for dryRun.
			if ft.Elem().Kind() != reflect.String {
				continue
			}
			dataType = "string"
		default:
			// Nested structs (preconditions) cannot be query parameters.
			continue
		}
		params = append(params, queryParam(name, docs[name], dataType))
	}
	return params
}

// gvkValue is the x-kubernetes-group-version-kind of an operation. A map, not
// metav1.GroupVersionKind, so that it serializes with sorted keys exactly like
// upstream's documents.
func gvkValue(gvk schema.GroupVersionKind) map[string]any {
	return map[string]any{"group": gvk.Group, "version": gvk.Version, "kind": gvk.Kind}
}

// toValidOperationID is upstream's ToValidOperationID: it drops characters
// that cannot appear in an identifier and capitalizes the letter after each
// dropped one ("rbac.authorization" becomes "rbacAuthorization").
func toValidOperationID(s string, capitalizeFirst bool) string {
	var b strings.Builder
	capitalize := capitalizeFirst
	for i, r := range s {
		if unicode.IsLetter(r) || r == '_' || (i != 0 && unicode.IsDigit(r)) {
			if capitalize {
				b.WriteRune(unicode.ToUpper(r))
				capitalize = false
			} else {
				b.WriteRune(r)
			}
		} else {
			capitalize = true
		}
	}
	return b.String()
}

// groupIdent returns how a group appears in operation IDs and tags: the core
// group is "core" and a ".k8s.io" suffix is dropped.
func groupIdent(group string) string {
	if group == "" {
		return "core"
	}
	return strings.TrimSuffix(group, ".k8s.io")
}

// gvInfix is the group-version part upstream inserts after the verb of every
// operation ID ("CoreV1", "RbacAuthorizationV1").
func gvInfix(gv schema.GroupVersion) string {
	return toValidOperationID(groupIdent(gv.Group), true) + toValidOperationID(gv.Version, true)
}

func gvTag(gv schema.GroupVersion) string {
	return toValidOperationID(groupIdent(gv.Group), false) + "_" + toValidOperationID(gv.Version, false)
}

func gvRoot(gv schema.GroupVersion) string {
	if gv.Group == "" {
		return "/api/" + gv.Version
	}
	return "/apis/" + gv.Group + "/" + gv.Version
}

// operationIDAndTags is the builders' GetOperationIDAndTagsFromRoute. Upstream
// derives operation ID and tag from each route's path at this point; ours are
// computed when the route is made, so this only hands them over.
func operationIDAndTags(r common.Route) (string, []string, error) {
	rt, ok := r.(*route)
	if !ok {
		return "", nil, fmt.Errorf("unexpected route type %T for %s %s", r, r.Method(), r.Path())
	}
	return rt.operation, []string{rt.tag}, nil
}

// resourceRoutes returns the routes of one resource, its subresources and
// its deprecated watch paths, as upstream installs them.
func resourceRoutes(r *registry.Resource) ([]common.Route, error) {
	if r.New == nil || (r.NewList == nil && !r.CreateOnly) {
		return nil, fmt.Errorf("resource %s has no New or NewList", r.GroupResource())
	}
	gv := r.GroupVersion()
	gvk := r.GroupVersionKind()
	root := gvRoot(gv)
	infix := gvInfix(gv)
	tag := gvTag(gv)
	obj := r.New()

	namespaced := ""
	var scopeParams []common.Parameter
	collectionPath := root + "/" + r.Name
	if r.Namespaced {
		namespaced = "Namespaced"
		scopeParams = []common.Parameter{pathParam("namespace", "object name and auth scope, such as for teams and projects")}
		collectionPath = root + "/namespaces/{namespace}/" + r.Name
	}
	itemPath := collectionPath + "/{name}"
	watchPrefix := root + "/watch" + strings.TrimPrefix(collectionPath, root)

	listParams := optionParams(metav1.ListOptions{})
	deleteParams := optionParams(metav1.DeleteOptions{})

	var routes []common.Route
	add := func(rt *route, action string, kind schema.GroupVersionKind, params ...common.Parameter) {
		rt.params = append(append([]common.Parameter{queryParam("pretty", prettyDoc, "string")}, params...), rt.params...)
		if rt.consumes == nil {
			rt.consumes = anyMediaType
		}
		rt.tag = tag
		rt.metadata = map[string]any{extensionAction: action, extensionGVK: gvkValue(kind)}
		routes = append(routes, rt)
	}
	opID := func(verb, rest string) string { return verb + infix + rest }
	ok := func(model any) []common.StatusCodeResponse {
		return []common.StatusCodeResponse{response{http.StatusOK, "OK", model}}
	}
	written := func(model any, codes ...int) []common.StatusCodeResponse {
		resps := ok(model)
		for _, c := range codes {
			resps = append(resps, response{c, http.StatusText(c), model})
		}
		return resps
	}

	kind := r.Kind
	nameParam := pathParam("name", "name of the "+kind)
	itemParams := append(append([]common.Parameter(nil), scopeParams...), nameParam)
	article := articleFor(kind)

	create := &route{method: "POST", path: collectionPath, operation: opID("create", namespaced+kind),
		description: "create" + article + kind, produces: mediaTypes,
		reads: obj, writes: obj, responses: written(obj, http.StatusCreated, http.StatusAccepted),
		params: append([]common.Parameter{bodyParam(true)}, optionParams(metav1.CreateOptions{})...)}
	if r.CreateOnly {
		// Reviews are only created, as upstream installs them.
		add(create, "post", gvk, scopeParams...)
		return routes, nil
	}
	list := r.NewList()
	if r.Computed {
		// Computed views are only read, as upstream's componentstatuses.
		add(&route{method: "GET", path: collectionPath, operation: opID("list", namespaced+kind),
			description: "list objects of kind " + kind, produces: allMediaTypes,
			writes: list, responses: ok(list)},
			"list", gvk, append(append([]common.Parameter(nil), scopeParams...), listParams...)...)
		add(&route{method: "GET", path: itemPath, operation: opID("read", namespaced+kind),
			description: "read the specified " + kind, produces: mediaTypes, writes: obj, responses: ok(obj)},
			"get", gvk, itemParams...)
		return routes, nil
	}

	// Collection: list, create, delete collection.
	add(&route{method: "GET", path: collectionPath, operation: opID("list", namespaced+kind),
		description: "list or watch objects of kind " + kind, produces: allMediaTypes,
		writes: list, responses: ok(list)},
		"list", gvk, append(append([]common.Parameter(nil), scopeParams...), listParams...)...)
	add(create, "post", gvk, scopeParams...)
	add(&route{method: "DELETE", path: collectionPath, operation: opID("delete", "Collection"+namespaced+kind),
		description: "delete collection of " + kind, produces: mediaTypes,
		reads: &metav1.DeleteOptions{}, writes: &metav1.Status{}, responses: ok(&metav1.Status{}),
		params: append(append([]common.Parameter{bodyParam(false)}, deleteParams...),
			optionParams(metav1.ListOptions{}, "watch", "allowWatchBookmarks")...)},
		"deletecollection", gvk, scopeParams...)

	// Item: read, replace, patch, delete.
	add(&route{method: "GET", path: itemPath, operation: opID("read", namespaced+kind),
		description: "read the specified " + kind, produces: mediaTypes, writes: obj, responses: ok(obj)},
		"get", gvk, itemParams...)
	add(&route{method: "PUT", path: itemPath, operation: opID("replace", namespaced+kind),
		description: "replace the specified " + kind, produces: mediaTypes,
		reads: obj, writes: obj, responses: written(obj, http.StatusCreated),
		params: append([]common.Parameter{bodyParam(true)}, optionParams(metav1.UpdateOptions{})...)},
		"put", gvk, itemParams...)
	add(patchRoute(itemPath, opID("patch", namespaced+kind), "partially update the specified "+kind, obj),
		"patch", gvk, itemParams...)
	add(&route{method: "DELETE", path: itemPath, operation: opID("delete", namespaced+kind),
		description: "delete" + article + kind, produces: mediaTypes,
		reads: &metav1.DeleteOptions{}, writes: &metav1.Status{},
		responses: written(&metav1.Status{}, http.StatusAccepted),
		params:    append([]common.Parameter{bodyParam(false)}, deleteParams...)},
		"delete", gvk, itemParams...)

	// Deprecated watch paths, still published by upstream and still used by
	// older clients.
	add(&route{method: "GET", path: watchPrefix, operation: opID("watch", namespaced+kind+"List"),
		description: "watch individual changes to a list of " + kind + ". deprecated: use the 'watch' parameter with a list operation instead.",
		produces:    allMediaTypes, writes: &metav1.WatchEvent{}, responses: ok(&metav1.WatchEvent{})},
		"watchlist", gvk, append(append([]common.Parameter(nil), scopeParams...), listParams...)...)
	add(&route{method: "GET", path: watchPrefix + "/{name}", operation: opID("watch", namespaced+kind),
		description: "watch changes to an object of kind " + kind + ". deprecated: use the 'watch' parameter with a list operation instead, filtered to a single item with the 'fieldSelector' parameter.",
		produces:    allMediaTypes, writes: &metav1.WatchEvent{}, responses: ok(&metav1.WatchEvent{})},
		"watch", gvk, append(append([]common.Parameter(nil), itemParams...), listParams...)...)

	// Namespaced resources can also be listed and watched across all
	// namespaces.
	if r.Namespaced {
		add(&route{method: "GET", path: root + "/" + r.Name, operation: opID("list", kind+"ForAllNamespaces"),
			description: "list or watch objects of kind " + kind, produces: allMediaTypes,
			writes: list, responses: ok(list)},
			"list", gvk, listParams...)
		add(&route{method: "GET", path: root + "/watch/" + r.Name, operation: opID("watch", kind+"ListForAllNamespaces"),
			description: "watch individual changes to a list of " + kind + ". deprecated: use the 'watch' parameter with a list operation instead.",
			produces:    allMediaTypes, writes: &metav1.WatchEvent{}, responses: ok(&metav1.WatchEvent{})},
			"watchlist", gvk, listParams...)
	}

	// Subresources: get, replace and patch of the parent's status, or of
	// its autoscaling/v1 Scale. The operation IDs name the parent's kind;
	// the GVK extension names the subresource's own.
	type sub struct {
		name string
		obj  any
		gvk  schema.GroupVersionKind
	}
	var subs []sub
	if r.Status {
		subs = append(subs, sub{"status", obj, gvk})
	}
	if r.Scale != nil {
		subs = append(subs, sub{"scale", &autoscalingv1.Scale{}, autoscalingv1.SchemeGroupVersion.WithKind("Scale")})
	}
	for _, name := range slices.Sorted(maps.Keys(r.Subresources)) {
		subs = append(subs, sub{name, obj, gvk})
	}
	for _, s := range subs {
		path := itemPath + "/" + s.name
		title := strings.ToUpper(s.name[:1]) + s.name[1:]
		params := append(append([]common.Parameter(nil), scopeParams...), pathParam("name", "name of the "+s.gvk.Kind))
		add(&route{method: "GET", path: path, operation: opID("read", namespaced+kind+title),
			description: "read " + s.name + " of the specified " + kind, produces: mediaTypes,
			writes: s.obj, responses: ok(s.obj)},
			"get", s.gvk, params...)
		add(&route{method: "PUT", path: path, operation: opID("replace", namespaced+kind+title),
			description: "replace " + s.name + " of the specified " + kind, produces: mediaTypes,
			reads: s.obj, writes: s.obj, responses: written(s.obj, http.StatusCreated),
			params: append([]common.Parameter{bodyParam(true)}, optionParams(metav1.UpdateOptions{})...)},
			"put", s.gvk, params...)
		add(patchRoute(path, opID("patch", namespaced+kind+title), "partially update "+s.name+" of the specified "+kind, s.obj),
			"patch", s.gvk, params...)
	}
	return routes, nil
}

// patchRoute is a PATCH operation. Its fieldValidation query parameter is
// what kubectl looks for (in the v3 document) before it sends server-side
// field validation requests; without it kubectl falls back to validating on
// the client.
func patchRoute(path, operation, description string, obj any) *route {
	return &route{method: "PATCH", path: path, operation: operation, description: description,
		consumes: patchMediaTypes, produces: mediaTypes,
		reads: &metav1.Patch{}, writes: obj,
		responses: []common.StatusCodeResponse{
			response{http.StatusOK, "OK", obj},
			// Server-side apply creates objects that do not exist yet.
			response{http.StatusCreated, "Created", obj},
		},
		params: append([]common.Parameter{bodyParam(true)}, optionParams(metav1.PatchOptions{})...)}
}

// articleFor is upstream's GetArticleForNoun with a padding of one space, so
// that descriptions read "create a Pod", "create an Event" and, for plural
// kinds, "create Endpoints".
func articleFor(noun string) string {
	if noun == "" || (strings.HasSuffix(noun, "s") && !strings.HasSuffix(noun, "ss")) {
		return " "
	}
	if strings.ContainsRune("AEIOUaeiou", rune(noun[0])) {
		return " an "
	}
	return " a "
}

// discoveryRoute is a GET of a discovery or version endpoint.
func discoveryRoute(path, operation, description, tag string, produces []string, model any) *route {
	return &route{method: "GET", path: path, operation: operation, description: description,
		consumes: produces, produces: produces, writes: model,
		responses: []common.StatusCodeResponse{response{http.StatusOK, "OK", model}},
		tag:       tag}
}

// containers groups the routes of every resource by group-version and adds
// the discovery roots upstream publishes alongside: /api/, /apis/,
// /apis/<group>/, /<group-version>/ and /version/. Groups and versions keep
// the order of resources.
func containers(resources []*registry.Resource) ([]*container, error) {
	discoveryTypes := mediaTypes
	var (
		out     []*container
		byGV    = map[schema.GroupVersion]*container{}
		groups  = map[string]bool{}
		opIDs   = map[string]string{}
		hasCore bool
	)
	for _, r := range resources {
		gv := r.GroupVersion()
		c := byGV[gv]
		if c == nil {
			c = &container{root: gvRoot(gv)}
			c.routes = append(c.routes, discoveryRoute(c.root+"/", "get"+gvInfix(gv)+"APIResources",
				"get available resources", gvTag(gv), discoveryTypes, &metav1.APIResourceList{}))
			byGV[gv] = c
			if gv.Group == "" {
				hasCore = true
			} else if !groups[gv.Group] {
				groups[gv.Group] = true
				ident := groupIdent(gv.Group)
				out = append(out, &container{root: "/apis/" + gv.Group, routes: []common.Route{
					discoveryRoute("/apis/"+gv.Group+"/", "get"+toValidOperationID(ident, true)+"APIGroup",
						"get information of a group", toValidOperationID(ident, false), discoveryTypes, &metav1.APIGroup{}),
				}})
			}
			out = append(out, c)
		}
		rs, err := resourceRoutes(r)
		if err != nil {
			return nil, err
		}
		for _, rt := range rs {
			id := rt.OperationName()
			if prev, dup := opIDs[id]; dup {
				return nil, fmt.Errorf("operation %s of %s clashes with %s", id, r.GroupResource(), prev)
			}
			opIDs[id] = r.GroupResource().String()
		}
		c.routes = append(c.routes, rs...)
	}
	roots := []*container{{root: "/apis", routes: []common.Route{
		discoveryRoute("/apis/", "getAPIVersions", "get available API versions", "apis", discoveryTypes, &metav1.APIGroupList{}),
	}}}
	if hasCore {
		roots = append(roots, &container{root: "/api", routes: []common.Route{
			discoveryRoute("/api/", "getCoreAPIVersions", "get available API versions", "core", discoveryTypes, &metav1.APIVersions{}),
		}})
	}
	roots = append(roots, &container{root: "/version", routes: []common.Route{
		discoveryRoute("/version/", "getCodeVersion", "get the code version", "version", []string{"application/json"}, &version.Info{}),
	}})
	return append(roots, out...), nil
}
