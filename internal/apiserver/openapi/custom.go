package openapi

import (
	"encoding/json"
	"fmt"
	"sort"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdbuilder "k8s.io/apiextensions-apiserver/pkg/controller/openapi/builder"
	"k8s.io/kube-openapi/pkg/aggregator"
	"k8s.io/kube-openapi/pkg/handler"
	"k8s.io/kube-openapi/pkg/handler3"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// customDocs are the documents of one set of CustomResourceDefinitions
// and extension API servers, built on first request as the built-in ones
// are, and replaced as a whole when either changes.
type customDocs struct {
	crds    []*apiextensionsv1.CustomResourceDefinition
	remotes []Remote

	v2Once sync.Once
	v2     *document
	v2Err  error

	v3Once sync.Once
	v3     *v3Documents
	v3Err  error
}

// Remote is what an extension API server publishes of one group
// version: its OpenAPI v2 document and its v3 document of the group
// version, as JSON (either may be missing).
type Remote struct {
	Group, Version string
	V2, V3         []byte
}

// SetCustomResources makes the documents describe crds too: the v2
// document merges their schemas into the built-in ones, and each group
// version they serve gets a v3 document of its own, as upstream's
// apiextensions server publishes them. Only the versions a CRD serves
// appear; a CRD not yet Established appears not at all.
func (s *Service) SetCustomResources(crds []*apiextensionsv1.CustomResourceDefinition) {
	sorted := append([]*apiextensionsv1.CustomResourceDefinition(nil), crds...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	s.customMu.Lock()
	defer s.customMu.Unlock()
	next := &customDocs{crds: sorted}
	if c := s.custom.Load(); c != nil {
		next.remotes = c.remotes
	}
	s.custom.Store(next)
}

// SetRemotes makes the documents describe the group versions extension
// API servers serve, as upstream's aggregator merges their documents: the
// v2 documents merged into the server's (a definition of the same name
// renamed), the v3 documents served as they are.
func (s *Service) SetRemotes(remotes []Remote) {
	s.customMu.Lock()
	defer s.customMu.Unlock()
	next := &customDocs{remotes: remotes}
	if c := s.custom.Load(); c != nil {
		next.crds = c.crds
	}
	s.custom.Store(next)
}

func (s *Service) customDocuments() *customDocs {
	if c := s.custom.Load(); c != nil && (len(c.crds) > 0 || len(c.remotes) > 0) {
		return c
	}
	return nil
}

// buildCustomV2 merges the CRDs' v2 schemas and paths into the built-in
// document.
func (s *Service) buildCustomV2(static *document, c *customDocs) (*document, error) {
	data, err := decompress(static.gzJSON)
	if err != nil {
		return nil, err
	}
	merged := &spec.Swagger{}
	if err := json.Unmarshal(data, merged); err != nil {
		return nil, fmt.Errorf("reading the built-in OpenAPI v2 document: %w", err)
	}
	for _, crd := range c.crds {
		for _, v := range crd.Spec.Versions {
			if !v.Served {
				continue
			}
			sw, err := crdbuilder.BuildOpenAPIV2(crd, v.Name, crdbuilder.Options{V2: true, IncludeSelectableFields: true})
			if err != nil {
				return nil, fmt.Errorf("OpenAPI v2 of %s version %s: %w", crd.Name, v.Name, err)
			}
			sw.Definitions = handler.PruneDefaults(sw.Definitions)
			if merged, err = crdbuilder.MergeSpecs(merged, sw); err != nil {
				return nil, fmt.Errorf("merging OpenAPI v2 of %s: %w", crd.Name, err)
			}
		}
	}
	for _, r := range c.remotes {
		if len(r.V2) == 0 {
			continue
		}
		sw := &spec.Swagger{}
		if err := json.Unmarshal(r.V2, sw); err != nil {
			// One server's bad document leaves the others'.
			continue
		}
		if err := aggregator.MergeSpecsIgnorePathConflictRenamingDefinitionsAndParameters(merged, sw); err != nil {
			continue
		}
	}
	out, err := merged.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("serializing OpenAPI v2 document: %w", err)
	}
	return newDocument(out, v2ToProto)
}

// buildCustomV3 adds a document for each group version the CRDs serve to
// the built-in ones (a CRD's group version is never a built-in one).
func (s *Service) buildCustomV3(static *v3Documents, c *customDocs) (*v3Documents, error) {
	byKey := map[string][]*spec3.OpenAPI{}
	for _, crd := range c.crds {
		for _, v := range crd.Spec.Versions {
			if !v.Served {
				continue
			}
			doc, err := crdbuilder.BuildOpenAPIV3(crd, v.Name, crdbuilder.Options{IncludeSelectableFields: true})
			if err != nil {
				return nil, fmt.Errorf("OpenAPI v3 of %s version %s: %w", crd.Name, v.Name, err)
			}
			key := "apis/" + crd.Spec.Group + "/" + v.Name
			byKey[key] = append(byKey[key], doc)
		}
	}
	out := &v3Documents{byKey: make(map[string]*document, len(static.byKey)+len(byKey)), paths: map[string]handler3.OpenAPIV3DiscoveryGroupVersion{}}
	for k, d := range static.byKey {
		out.byKey[k] = d
	}
	for k, p := range static.paths {
		out.paths[k] = p
	}
	for key, docs := range byKey {
		merged, err := crdbuilder.MergeSpecsV3(docs...)
		if err != nil {
			return nil, fmt.Errorf("merging OpenAPI v3 document %s: %w", key, err)
		}
		if err := out.add(key, merged); err != nil {
			return nil, err
		}
	}
	for _, r := range c.remotes {
		key := "apis/" + r.Group + "/" + r.Version
		if len(r.V3) == 0 || out.byKey[key] != nil {
			continue
		}
		if err := out.addJSON(key, r.V3); err != nil {
			return nil, err
		}
	}
	if err := out.buildIndex(); err != nil {
		return nil, err
	}
	return out, nil
}
