// Package schedconfig reads the scheduler's configuration file, a
// KubeSchedulerConfiguration of kubescheduler.config.k8s.io/v1, as
// kube-scheduler does: strict decoding (an unknown field is an error
// naming it), upstream's defaults (the default plugin set merged with
// the profile's, default plugin arguments) and upstream's validation.
// It yields the upstream types; turning a profile into plugins is the
// profile package's business.
package schedconfig

import (
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	configv1 "k8s.io/kube-scheduler/config/v1"
)

var (
	scheme = runtime.NewScheme()
	codecs = serializer.NewCodecFactory(scheme, serializer.EnableStrict)
)

func init() {
	if err := configv1.AddToScheme(scheme); err != nil {
		panic(fmt.Sprintf("schedconfig: register kubescheduler.config.k8s.io/v1: %v", err))
	}
}

// Load reads, defaults and validates the file at path.
func Load(path string) (*configv1.KubeSchedulerConfiguration, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read scheduler configuration: %w", err)
	}
	cfg, err := Decode(data)
	if err != nil {
		return nil, fmt.Errorf("scheduler configuration %s: %w", path, err)
	}
	return cfg, nil
}

// Decode parses a YAML or JSON KubeSchedulerConfiguration, then defaults
// and validates it.
func Decode(data []byte) (*configv1.KubeSchedulerConfiguration, error) {
	obj, gvk, err := codecs.UniversalDeserializer().Decode(data, nil, nil)
	if err != nil {
		return nil, err
	}
	cfg, ok := obj.(*configv1.KubeSchedulerConfiguration)
	if !ok {
		return nil, fmt.Errorf("couldn't decode as KubeSchedulerConfiguration, got %s", gvk)
	}
	if err := cfg.DecodeNestedObjects(codecs.UniversalDeserializer()); err != nil {
		return nil, err
	}
	if err := checkArgsNamed(cfg); err != nil {
		return nil, err
	}
	SetDefaults(cfg)
	if err := Validate(cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

// Default is the configuration in force without a file: one
// default-scheduler profile with the default plugins.
func Default() *configv1.KubeSchedulerConfiguration {
	cfg := &configv1.KubeSchedulerConfiguration{}
	cfg.SetGroupVersionKind(configv1.SchemeGroupVersion.WithKind("KubeSchedulerConfiguration"))
	SetDefaults(cfg)
	return cfg
}

// checkArgsNamed rejects pluginConfig entries whose plugin takes no
// arguments of a registered kind (upstream keeps them for out-of-tree
// plugins; this scheduler has none, so they can only be mistakes).
func checkArgsNamed(cfg *configv1.KubeSchedulerConfiguration) error {
	for i, p := range cfg.Profiles {
		for j, pc := range p.PluginConfig {
			if pc.Args.Object == nil && !hasArgs(pc.Name) {
				return fmt.Errorf("decoding .profiles[%d].pluginConfig[%d]: plugin %q takes no arguments in this scheduler", i, j, pc.Name)
			}
		}
	}
	return nil
}

func hasArgs(name string) bool {
	_, err := scheme.New(configv1.SchemeGroupVersion.WithKind(name + "Args"))
	return err == nil
}
