package schedconfig

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/ptr"
)

// DefaultPlugins is upstream's default multiPoint set, in upstream's
// order and with its score weights.
func DefaultPlugins() *configv1.Plugins {
	w := func(n int32) *int32 { return &n }
	return &configv1.Plugins{MultiPoint: configv1.PluginSet{Enabled: []configv1.Plugin{
		{Name: "SchedulingGates"},
		{Name: "PrioritySort"},
		{Name: "NodeUnschedulable"},
		{Name: "NodeName"},
		{Name: "TaintToleration", Weight: w(3)},
		{Name: "NodeAffinity", Weight: w(2)},
		{Name: "NodePorts"},
		{Name: "NodeResourcesFit", Weight: w(1)},
		{Name: "VolumeRestrictions"},
		{Name: "NodeVolumeLimits"},
		{Name: "VolumeBinding"},
		{Name: "VolumeZone"},
		{Name: "PodTopologySpread", Weight: w(2)},
		{Name: "InterPodAffinity", Weight: w(2)},
		{Name: "DynamicResources"},
		{Name: "DefaultPreemption"},
		{Name: "NodeResourcesBalancedAllocation", Weight: w(1)},
		{Name: "ImageLocality", Weight: w(1)},
		{Name: "DefaultBinder"},
	}}}
}

// SetDefaults applies upstream's defaults. Parallelism is left unset
// when not given: the scheduler then sizes it to the machine, as it does
// without a file.
func SetDefaults(cfg *configv1.KubeSchedulerConfiguration) {
	if len(cfg.Profiles) == 0 {
		cfg.Profiles = append(cfg.Profiles, configv1.KubeSchedulerProfile{})
	}
	// Only a lone profile gets the default name; validation requires a
	// distinct name on each of several.
	if len(cfg.Profiles) == 1 && cfg.Profiles[0].SchedulerName == nil {
		cfg.Profiles[0].SchedulerName = ptr.To(v1.DefaultSchedulerName)
	}
	for i := range cfg.Profiles {
		defaultProfile(&cfg.Profiles[i])
	}
	if cfg.PercentageOfNodesToScore == nil {
		cfg.PercentageOfNodesToScore = ptr.To[int32](0)
	}
	le := &cfg.LeaderElection
	if le.LeaderElect == nil {
		le.LeaderElect = ptr.To(true)
	}
	if le.ResourceLock == "" {
		le.ResourceLock = "leases"
	}
	if le.ResourceNamespace == "" {
		le.ResourceNamespace = configv1.SchedulerDefaultLockObjectNamespace
	}
	if le.ResourceName == "" {
		le.ResourceName = configv1.SchedulerDefaultLockObjectName
	}
	if cfg.PodInitialBackoffSeconds == nil {
		cfg.PodInitialBackoffSeconds = ptr.To[int64](1)
	}
	if cfg.PodMaxBackoffSeconds == nil {
		cfg.PodMaxBackoffSeconds = ptr.To[int64](10)
	}
}

func defaultProfile(p *configv1.KubeSchedulerProfile) {
	p.Plugins = mergePlugins(DefaultPlugins(), p.Plugins)
	have := sets.New[string]()
	for i := range p.PluginConfig {
		have.Insert(p.PluginConfig[i].Name)
		defaultArgs(p.PluginConfig[i].Args.Object)
	}
	// Every enabled plugin that takes arguments gets its defaults, so the
	// profile reads the same whether or not the file spelled them out.
	for _, name := range enabledNames(p.Plugins) {
		if have.Has(name) {
			continue
		}
		gvk := configv1.SchemeGroupVersion.WithKind(name + "Args")
		args, err := scheme.New(gvk)
		if err != nil {
			continue
		}
		defaultArgs(args)
		args.GetObjectKind().SetGroupVersionKind(gvk)
		p.PluginConfig = append(p.PluginConfig, configv1.PluginConfig{Name: name, Args: runtime.RawExtension{Object: args}})
	}
}

var defaultResources = []configv1.ResourceSpec{{Name: string(v1.ResourceCPU), Weight: 1}, {Name: string(v1.ResourceMemory), Weight: 1}}

func defaultArgs(obj runtime.Object) {
	switch a := obj.(type) {
	case *configv1.DefaultPreemptionArgs:
		if a.MinCandidateNodesPercentage == nil {
			a.MinCandidateNodesPercentage = ptr.To[int32](10)
		}
		if a.MinCandidateNodesAbsolute == nil {
			a.MinCandidateNodesAbsolute = ptr.To[int32](100)
		}
	case *configv1.InterPodAffinityArgs:
		if a.HardPodAffinityWeight == nil {
			a.HardPodAffinityWeight = ptr.To[int32](1)
		}
	case *configv1.VolumeBindingArgs:
		if a.BindTimeoutSeconds == nil {
			a.BindTimeoutSeconds = ptr.To[int64](600)
		}
	case *configv1.NodeResourcesBalancedAllocationArgs:
		if len(a.Resources) == 0 {
			a.Resources = append([]configv1.ResourceSpec(nil), defaultResources...)
		}
		for i := range a.Resources {
			if a.Resources[i].Weight == 0 {
				a.Resources[i].Weight = 1
			}
		}
	case *configv1.PodTopologySpreadArgs:
		if a.DefaultingType == "" {
			a.DefaultingType = configv1.SystemDefaulting
		}
	case *configv1.NodeResourcesFitArgs:
		if a.ScoringStrategy == nil {
			a.ScoringStrategy = &configv1.ScoringStrategy{Type: configv1.LeastAllocated}
		}
		if len(a.ScoringStrategy.Resources) == 0 {
			a.ScoringStrategy.Resources = append([]configv1.ResourceSpec(nil), defaultResources...)
		}
		for i := range a.ScoringStrategy.Resources {
			if a.ScoringStrategy.Resources[i].Weight == 0 {
				a.ScoringStrategy.Resources[i].Weight = 1
			}
		}
	}
}

// PluginSets lists a Plugins' extension points by their field names in
// the file, multiPoint first.
func PluginSets(p *configv1.Plugins) []NamedSet {
	return []NamedSet{
		{"multiPoint", &p.MultiPoint}, {"preEnqueue", &p.PreEnqueue}, {"queueSort", &p.QueueSort},
		{"preFilter", &p.PreFilter}, {"filter", &p.Filter}, {"postFilter", &p.PostFilter},
		{"preScore", &p.PreScore}, {"score", &p.Score}, {"reserve", &p.Reserve}, {"permit", &p.Permit},
		{"preBind", &p.PreBind}, {"bind", &p.Bind}, {"postBind", &p.PostBind},
		{"placementGenerate", &p.PlacementGenerate}, {"placementScore", &p.PlacementScore},
		{"podGroupPostFilter", &p.PodGroupPostFilter},
	}
}

// NamedSet is one extension point's set and its name in the file.
type NamedSet struct {
	Name string
	Set  *configv1.PluginSet
}

func enabledNames(p *configv1.Plugins) []string {
	n := sets.New[string]()
	for _, s := range PluginSets(p) {
		for _, pl := range s.Set.Enabled {
			n.Insert(pl.Name)
		}
	}
	return sets.List(n)
}

// mergePlugins merges the profile's sets into the defaults as upstream
// does: per extension point, a disabled default is dropped ("*" drops
// them all), a default enabled again keeps its place with the new
// settings, and the rest of the custom ones follow.
func mergePlugins(defaults, custom *configv1.Plugins) *configv1.Plugins {
	if custom == nil {
		return defaults
	}
	out := custom.DeepCopy()
	ds, cs := PluginSets(defaults), PluginSets(out)
	for i := range cs {
		*cs[i].Set = mergeSet(*ds[i].Set, *cs[i].Set)
	}
	return out
}

func mergeSet(def, custom configv1.PluginSet) configv1.PluginSet {
	disabled := sets.New[string]()
	var out configv1.PluginSet
	for _, p := range append(append([]configv1.Plugin(nil), custom.Disabled...), def.Disabled...) {
		out.Disabled = append(out.Disabled, configv1.Plugin{Name: p.Name})
		disabled.Insert(p.Name)
	}
	customAt := map[string]int{}
	for i, p := range custom.Enabled {
		customAt[p.Name] = i
	}
	replaced := sets.New[int]()
	if !disabled.Has("*") {
		for _, p := range def.Enabled {
			if disabled.Has(p.Name) {
				continue
			}
			if i, ok := customAt[p.Name]; ok {
				p = custom.Enabled[i]
				replaced.Insert(i)
			}
			out.Enabled = append(out.Enabled, p)
		}
	}
	for i, p := range custom.Enabled {
		if !replaced.Has(i) {
			out.Enabled = append(out.Enabled, p)
		}
	}
	return out
}
