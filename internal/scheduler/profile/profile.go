// Package profile assembles the default set of plugins, in upstream's
// order and with upstream's score weights. It is the only place that knows
// every plugin; the plugins do not know they are registered.
package profile

import (
	"github.com/orca-project/orca/internal/scheduler/framework"
	"github.com/orca-project/orca/internal/scheduler/plugins/defaultspread"
	"github.com/orca-project/orca/internal/scheduler/plugins/interpodaffinity"
	"github.com/orca-project/orca/internal/scheduler/plugins/nodeaffinity"
	"github.com/orca-project/orca/internal/scheduler/plugins/nodename"
	"github.com/orca-project/orca/internal/scheduler/plugins/nodeports"
	"github.com/orca-project/orca/internal/scheduler/plugins/noderesources"
	"github.com/orca-project/orca/internal/scheduler/plugins/nodeunschedulable"
	"github.com/orca-project/orca/internal/scheduler/plugins/podtopologyspread"
	"github.com/orca-project/orca/internal/scheduler/plugins/tainttoleration"
	"github.com/orca-project/orca/internal/scheduler/plugins/volumebinding"
	"github.com/orca-project/orca/internal/scheduler/plugins/volumerestrictions"
)

// Default returns the default-scheduler profile without a view of
// storage: a pod with a persistentVolumeClaim fits nowhere, its claim
// not found. percentageOfNodesToScore 0 selects the adaptive value.
func Default(percentageOfNodesToScore int) *framework.Framework {
	return WithVolumes(percentageOfNodesToScore, nil)
}

// WithVolumes is the default-scheduler profile reading claims, volumes
// and storage classes through volumes (VolumeRestrictions reads claims
// through it too).
func WithVolumes(percentageOfNodesToScore int, volumes volumebinding.Lister) *framework.Framework {
	if volumes == nil {
		volumes = volumebinding.Empty{}
	}
	var (
		unsched  = &nodeunschedulable.Plugin{}
		name     = &nodename.Plugin{}
		taints   = &tainttoleration.Plugin{}
		affinity = &nodeaffinity.Plugin{}
		ports    = &nodeports.Plugin{}
		fit      = &noderesources.Fit{}
		balanced = &noderesources.Balanced{}
		spread   = &podtopologyspread.Plugin{}
		podAff   = &interpodaffinity.Plugin{}
		defSprd  = &defaultspread.Plugin{}
		rwop     = &volumerestrictions.Plugin{Lister: volumes}
		vols     = &volumebinding.Plugin{Lister: volumes}
	)
	return &framework.Framework{
		PreFilters: []framework.PreFilterPlugin{affinity, rwop, vols, spread, podAff},
		// Cheap, decisive filters first: a node rejected early costs less.
		Filters:   []framework.FilterPlugin{unsched, name, taints, affinity, ports, fit, rwop, vols, spread, podAff},
		PreScores: []framework.PreScorePlugin{affinity, spread, podAff, defSprd},
		Scores: []framework.WeightedScore{
			{Plugin: taints, Weight: 3},
			{Plugin: affinity, Weight: 2},
			{Plugin: spread, Weight: 2},
			{Plugin: podAff, Weight: 2},
			{Plugin: fit, Weight: 1},
			{Plugin: balanced, Weight: 1},
			{Plugin: defSprd, Weight: 2},
		},
		PercentageOfNodesToScore: percentageOfNodesToScore,
	}
}
