package main

import (
	"fmt"

	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/orca-project/orca/internal/scheduler/profile"
	"github.com/orca-project/orca/internal/scheduler/schedconfig"
)

// loadSchedulerConfig reads a KubeSchedulerConfiguration file and builds
// its profiles once, so that a bad file stops the command before anything
// starts; "" is no file (the default profile).
func loadSchedulerConfig(path string) (*configv1.KubeSchedulerConfiguration, error) {
	if path == "" {
		return nil, nil
	}
	cfg, err := schedconfig.Load(path)
	if err != nil {
		return nil, err
	}
	if _, err := profile.Build(cfg, nil); err != nil {
		return nil, fmt.Errorf("scheduler configuration %s: %w", path, err)
	}
	return cfg, nil
}
