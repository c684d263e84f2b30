// Package crds holds the Gateway API's standard-channel
// CustomResourceDefinitions, the upstream manifests of the version
// go.mod requires (hack/gateway-api-crds.sh copies them), which the
// server installs at start-up.
package crds

import (
	"embed"
	"fmt"
	"io/fs"
	"slices"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

//go:embed *.yaml
var files embed.FS

// BundleVersionAnnotation is the annotation the manifests carry their
// release in.
const BundleVersionAnnotation = "gateway.networking.k8s.io/bundle-version"

// All are the CRDs, by file name.
func All() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	names, err := fs.Glob(files, "*.yaml")
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, n := range names {
		b, err := files.ReadFile(n)
		if err != nil {
			return nil, err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(b, crd); err != nil {
			return nil, fmt.Errorf("gateway API CRD %s: %w", n, err)
		}
		out = append(out, crd)
	}
	return out, nil
}
