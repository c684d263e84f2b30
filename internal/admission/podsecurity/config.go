package podsecurity

import (
	"fmt"

	admissionapi "k8s.io/pod-security-admission/admission/api"
	"k8s.io/pod-security-admission/admission/api/load"
	"k8s.io/pod-security-admission/admission/api/validation"
)

// Config is upstream's PodSecurityConfiguration: the cluster-wide levels
// for namespaces without labels, and the exempt users, namespaces and
// runtime classes.
type Config = admissionapi.PodSecurityConfiguration

// DefaultConfig is upstream's default: privileged at the latest version
// for enforce, audit and warn, and no exemptions.
func DefaultConfig() *Config {
	cfg, err := load.LoadFromData(nil)
	if err != nil {
		// Defaulting an empty object cannot fail.
		panic(fmt.Sprintf("podsecurity: default configuration: %v", err))
	}
	return cfg
}

// ParseConfig reads a PodSecurityConfiguration
// (pod-security.admission.config.k8s.io/v1, v1beta1 or v1alpha1, JSON or
// YAML), defaulted and validated as upstream does at start-up; empty data
// is the default configuration.
func ParseConfig(data []byte) (*Config, error) {
	cfg, err := load.LoadFromData(data)
	if err != nil {
		return nil, fmt.Errorf("%s configuration: %w", PluginName, err)
	}
	if errs := validation.ValidatePodSecurityConfiguration(cfg); len(errs) > 0 {
		return nil, fmt.Errorf("%s invalid: %w", PluginName, errs.ToAggregate())
	}
	return cfg, nil
}
