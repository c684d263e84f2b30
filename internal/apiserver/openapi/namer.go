package openapi

import (
	"reflect"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/kube-openapi/pkg/util"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// definitionNamer does what upstream's openapinamer.DefinitionNamer
// (k8s.io/apiserver/pkg/endpoints/openapi) does, which we may not import:
// it names each definition in the reversed-domain form clients expect
// ("io.k8s.api.apps.v1.Deployment") and marks every type the scheme knows as
// a kind with x-kubernetes-group-version-kind. kubectl finds a kind's schema
// only through that extension, so a missing or wrong entry breaks explain,
// apply and client-side validation for the kind.
type definitionNamer struct {
	gvks map[string][]any // definition name -> JSON-ready GVK list
}

func newDefinitionNamer(scheme *runtime.Scheme) *definitionNamer {
	type gvk struct{ group, version, kind string }
	byName := map[string][]gvk{}
	for k, t := range scheme.AllKnownTypes() {
		// The internal version never appears on the wire.
		if k.Version == runtime.APIVersionInternal {
			continue
		}
		name := friendlyName(util.GetCanonicalTypeName(reflect.New(t).Interface()))
		byName[name] = append(byName[name], gvk{k.Group, k.Version, k.Kind})
	}
	n := &definitionNamer{gvks: make(map[string][]any, len(byName))}
	for name, list := range byName {
		// Upstream sorts by group, version, kind; the order is visible in
		// the documents and so in their hashes.
		sort.Slice(list, func(i, j int) bool {
			a, b := list[i], list[j]
			if a.group != b.group {
				return a.group < b.group
			}
			if a.version != b.version {
				return a.version < b.version
			}
			return a.kind < b.kind
		})
		values := make([]any, len(list))
		for i, g := range list {
			values[i] = map[string]any{"group": g.group, "version": g.version, "kind": g.kind}
		}
		n.gvks[name] = values
	}
	return n
}

// friendlyName maps a definition's key to its published name. Types from
// packages tagged +k8s:openapi-model-package already carry the final name
// (their generated OpenAPIModelName); older types are keyed by Go package
// path ("k8s.io/api/core/v1.Pod") and go through upstream's
// ToRESTFriendlyName, which would mangle an already friendly name.
func friendlyName(name string) string {
	if !strings.Contains(name, "/") {
		return name
	}
	return util.ToRESTFriendlyName(name)
}

// name is the builders' GetDefinitionName.
func (n *definitionNamer) name(key string) (string, spec.Extensions) {
	name := friendlyName(key)
	if gvks, ok := n.gvks[name]; ok {
		return name, spec.Extensions{extensionGVK: gvks}
	}
	return name, nil
}
