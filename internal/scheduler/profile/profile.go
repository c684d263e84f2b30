// Package profile builds scheduling frameworks from the profiles of a
// KubeSchedulerConfiguration: which plugins run at which extension point,
// with which arguments and score weights, as upstream's framework reads
// them. It is the only place that knows every plugin; the plugins do not
// know they are registered.
package profile

import (
	"fmt"

	"github.com/orca-project/orca/internal/scheduler/framework"
	"github.com/orca-project/orca/internal/scheduler/plugins/volumebinding"
	"github.com/orca-project/orca/internal/scheduler/schedconfig"
)

// Default returns the default-scheduler profile without a view of
// storage: a pod with a persistentVolumeClaim fits nowhere, its claim
// not found. percentageOfNodesToScore 0 selects the adaptive value.
func Default(percentageOfNodesToScore int) *framework.Framework {
	return WithVolumes(percentageOfNodesToScore, nil)
}

// WithVolumes is the default-scheduler profile (upstream's default
// plugins and weights) reading claims, volumes and storage classes
// through volumes (VolumeRestrictions reads claims through it too).
func WithVolumes(percentageOfNodesToScore int, volumes volumebinding.Lister) *framework.Framework {
	ps, err := Build(schedconfig.Default(), volumes)
	if err != nil {
		// The default configuration is fixed: failing to build it is a
		// broken registry, not bad input.
		panic(fmt.Sprintf("profile: default configuration: %v", err))
	}
	fw := ps[0].Framework
	fw.PercentageOfNodesToScore = percentageOfNodesToScore
	return fw
}
