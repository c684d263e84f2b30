package profile

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/ptr"

	"github.com/orca-project/orca/internal/scheduler/framework"
	"github.com/orca-project/orca/internal/scheduler/plugins/interpodaffinity"
	naplugin "github.com/orca-project/orca/internal/scheduler/plugins/nodeaffinity"
	"github.com/orca-project/orca/internal/scheduler/plugins/nodename"
	"github.com/orca-project/orca/internal/scheduler/plugins/nodeports"
	"github.com/orca-project/orca/internal/scheduler/plugins/noderesources"
	"github.com/orca-project/orca/internal/scheduler/plugins/nodeunschedulable"
	"github.com/orca-project/orca/internal/scheduler/plugins/podtopologyspread"
	"github.com/orca-project/orca/internal/scheduler/plugins/tainttoleration"
	"github.com/orca-project/orca/internal/scheduler/plugins/volumebinding"
	"github.com/orca-project/orca/internal/scheduler/plugins/volumerestrictions"
)

// entry is what the registry knows of one upstream plugin name.
type entry struct {
	// new builds the plugin from its (defaulted) arguments; nil for a
	// plugin that lives outside the framework (the queue's sort, the
	// binder, preemption) or that this scheduler does not implement.
	new func(args runtime.Object, volumes volumebinding.Lister) (framework.Plugin, error)
	// points are extension points upstream's plugin has beyond the
	// framework interfaces the built plugin implements here: enabling
	// or disabling it there is accepted, as upstream accepts it.
	points []string
	// noop marks upstream plugins this scheduler does not implement;
	// they are in upstream's default set, so a profile may name them,
	// and they have no effect.
	noop bool
}

// registry is every plugin name a profile may use, as upstream spells
// it. DefaultPodTopologySpread is not among them: upstream folded it
// into PodTopologySpread's system defaults, and so does Build.
var registry = map[string]entry{
	"SchedulingGates":                 {points: []string{"preEnqueue"}},
	"PrioritySort":                    {points: []string{"queueSort"}},
	"DefaultBinder":                   {points: []string{"bind"}},
	"DefaultPreemption":               {points: []string{"postFilter"}},
	"NodeUnschedulable":               {new: plain(func() framework.Plugin { return &nodeunschedulable.Plugin{} })},
	"NodeName":                        {new: plain(func() framework.Plugin { return &nodename.Plugin{} })},
	"TaintToleration":                 {new: plain(func() framework.Plugin { return &tainttoleration.Plugin{} }), points: []string{"preScore"}},
	"NodeAffinity":                    {new: newNodeAffinity},
	"NodePorts":                       {new: plain(func() framework.Plugin { return &nodeports.Plugin{} }), points: []string{"preFilter"}},
	"NodeResourcesFit":                {new: newFit, points: []string{"preFilter", "preScore"}},
	"NodeResourcesBalancedAllocation": {new: newBalanced, points: []string{"preScore"}},
	"VolumeRestrictions": {new: func(_ runtime.Object, l volumebinding.Lister) (framework.Plugin, error) {
		return &volumerestrictions.Plugin{Lister: l}, nil
	}},
	"VolumeBinding": {new: func(_ runtime.Object, l volumebinding.Lister) (framework.Plugin, error) {
		return &volumebinding.Plugin{Lister: l}, nil
	}, points: []string{"reserve", "preBind", "preScore", "score"}},
	"PodTopologySpread": {new: plain(func() framework.Plugin { return &podtopologyspread.Plugin{} })},
	"InterPodAffinity":  {new: newInterPodAffinity},
	"NodeVolumeLimits":  {noop: true, points: []string{"preFilter", "filter"}},
	"VolumeZone":        {noop: true, points: []string{"preFilter", "filter", "preScore", "score"}},
	"ImageLocality":     {noop: true, points: []string{"score"}},
	"DynamicResources":  {noop: true, points: []string{"preEnqueue", "preFilter", "filter", "postFilter", "reserve", "preBind"}},
}

func plain(f func() framework.Plugin) func(runtime.Object, volumebinding.Lister) (framework.Plugin, error) {
	return func(runtime.Object, volumebinding.Lister) (framework.Plugin, error) { return f(), nil }
}

func newFit(args runtime.Object, _ volumebinding.Lister) (framework.Plugin, error) {
	a, _ := args.(*configv1.NodeResourcesFitArgs)
	fit := &noderesources.Fit{}
	if a == nil {
		return fit, nil
	}
	if s := a.ScoringStrategy; s != nil {
		fit.Strategy = noderesources.Strategy{Type: noderesources.StrategyType(s.Type), Resources: resourceWeights(s.Resources)}
		if r := s.RequestedToCapacityRatio; r != nil {
			for _, pt := range r.Shape {
				fit.Strategy.Shape = append(fit.Strategy.Shape, noderesources.ShapePoint{Utilization: int64(pt.Utilization), Score: int64(pt.Score)})
			}
		}
	}
	if len(a.IgnoredResources)+len(a.IgnoredResourceGroups) > 0 {
		names, groups := sets.New(a.IgnoredResources...), sets.New(a.IgnoredResourceGroups...)
		fit.Ignored = func(n v1.ResourceName) bool {
			group, _, _ := strings.Cut(string(n), "/")
			return names.Has(string(n)) || groups.Has(group)
		}
	}
	return fit, nil
}

func resourceWeights(rs []configv1.ResourceSpec) []noderesources.ResourceWeight {
	out := make([]noderesources.ResourceWeight, 0, len(rs))
	for _, r := range rs {
		out = append(out, noderesources.ResourceWeight{Name: v1.ResourceName(r.Name), Weight: r.Weight})
	}
	return out
}

func newBalanced(args runtime.Object, _ volumebinding.Lister) (framework.Plugin, error) {
	b := &noderesources.Balanced{}
	if a, ok := args.(*configv1.NodeResourcesBalancedAllocationArgs); ok {
		b.Resources = resourceWeights(a.Resources)
	}
	return b, nil
}

func newInterPodAffinity(args runtime.Object, _ volumebinding.Lister) (framework.Plugin, error) {
	p := &interpodaffinity.Plugin{}
	if a, ok := args.(*configv1.InterPodAffinityArgs); ok && a.HardPodAffinityWeight != nil {
		p.HardPodAffinityWeight = ptr.To(int64(*a.HardPodAffinityWeight))
	}
	return p, nil
}

func newNodeAffinity(args runtime.Object, _ volumebinding.Lister) (framework.Plugin, error) {
	p := &naplugin.Plugin{}
	a, ok := args.(*configv1.NodeAffinityArgs)
	if !ok || a.AddedAffinity == nil {
		return p, nil
	}
	if ns := a.AddedAffinity.RequiredDuringSchedulingIgnoredDuringExecution; ns != nil {
		sel, err := nodeaffinity.NewNodeSelector(ns)
		if err != nil {
			return nil, fmt.Errorf("addedAffinity: %w", err)
		}
		p.AddedRequired = sel
	}
	if terms := a.AddedAffinity.PreferredDuringSchedulingIgnoredDuringExecution; len(terms) > 0 {
		pref, err := nodeaffinity.NewPreferredSchedulingTerms(terms)
		if err != nil {
			return nil, fmt.Errorf("addedAffinity: %w", err)
		}
		p.AddedPreferred = pref
	}
	return p, nil
}

// checkDefaultOnly refuses arguments this scheduler would not act on
// (preemption's candidate sampling, volume binding's timeout and shape,
// dynamic resources) unless they are upstream's defaults.
func checkDefaultOnly(name string, args runtime.Object) error {
	ok := true
	switch a := args.(type) {
	case *configv1.DefaultPreemptionArgs:
		ok = ptr.Deref(a.MinCandidateNodesPercentage, 10) == 10 && ptr.Deref(a.MinCandidateNodesAbsolute, 100) == 100
	case *configv1.VolumeBindingArgs:
		ok = ptr.Deref(a.BindTimeoutSeconds, 600) == 600 && a.Shape == nil
	case *configv1.DynamicResourcesArgs:
		ok = a.FilterTimeout == nil && a.BindingTimeout == nil
	}
	if !ok {
		return fmt.Errorf("arguments for plugin %q other than the defaults are not supported by this scheduler", name)
	}
	return nil
}
