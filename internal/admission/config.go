package admission

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"
)

// Configuration is upstream's AdmissionConfiguration file
// (--admission-control-config-file): a list of plugins, each with its own
// configuration inline or in a file of its own.
type Configuration struct {
	plugins []pluginConfiguration
	// dir resolves relative plugin paths, as upstream: against the
	// directory of the file that names them.
	dir string
}

// configurationFile is the file's format: upstream's
// apiserver.config.k8s.io/v1 AdmissionConfiguration, which its older
// versions share.
type configurationFile struct {
	APIVersion string                `json:"apiVersion"`
	Kind       string                `json:"kind"`
	Plugins    []pluginConfiguration `json:"plugins"`
}

type pluginConfiguration struct {
	Name          string          `json:"name"`
	Path          string          `json:"path,omitempty"`
	Configuration json.RawMessage `json:"configuration,omitempty"`
}

var configurationVersions = map[string]bool{
	"apiserver.config.k8s.io/v1":       true,
	"apiserver.config.k8s.io/v1alpha1": true,
	"apiserver.k8s.io/v1alpha1":        true,
}

// LoadConfiguration reads an AdmissionConfiguration file (YAML or JSON,
// unknown fields refused as upstream's strict decoding does); an empty
// path is a configuration that names no plugin.
func LoadConfiguration(path string) (*Configuration, error) {
	if path == "" {
		return &Configuration{}, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("unable to read admission control configuration from %q [%v]", path, err)
	}
	c, err := ParseConfiguration(data, filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("admission control configuration %s: %w", path, err)
	}
	return c, nil
}

// ParseConfiguration reads an AdmissionConfiguration whose relative
// plugin paths are under dir.
func ParseConfiguration(data []byte, dir string) (*Configuration, error) {
	var f configurationFile
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return nil, err
	}
	if f.Kind != "AdmissionConfiguration" || !configurationVersions[f.APIVersion] {
		return nil, fmt.Errorf("not an AdmissionConfiguration: apiVersion %q, kind %q (want apiserver.config.k8s.io/v1, AdmissionConfiguration)", f.APIVersion, f.Kind)
	}
	for i, p := range f.Plugins {
		if p.Name == "" {
			return nil, fmt.Errorf("plugins[%d]: name is required", i)
		}
	}
	return &Configuration{plugins: f.Plugins, dir: dir}, nil
}

// For returns the configuration of the named plugin: its inline
// configuration (as JSON), else the content of its path, else nil (the
// plugin's defaults). The first entry naming the plugin counts, as
// upstream.
func (c *Configuration) For(name string) ([]byte, error) {
	for _, p := range c.plugins {
		if p.Name != name {
			continue
		}
		switch {
		case len(p.Configuration) > 0 && string(p.Configuration) != "null":
			return p.Configuration, nil
		case p.Path != "":
			path := p.Path
			if !filepath.IsAbs(path) {
				path = filepath.Join(c.dir, path)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return nil, fmt.Errorf("%s configuration: %w", name, err)
			}
			return data, nil
		}
		return nil, nil
	}
	return nil, nil
}
