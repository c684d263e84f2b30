package profile

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/ptr"

	"github.com/orca-project/orca/internal/scheduler/framework"
	"github.com/orca-project/orca/internal/scheduler/plugins/defaultspread"
	"github.com/orca-project/orca/internal/scheduler/plugins/volumebinding"
	"github.com/orca-project/orca/internal/scheduler/schedconfig"
)

// Profile is one profile of a KubeSchedulerConfiguration, built.
type Profile struct {
	// Name is the spec.schedulerName the profile serves; its events
	// carry it as their source, as upstream's do.
	Name      string
	Framework *framework.Framework
	// Preemption: DefaultPreemption is enabled at postFilter.
	Preemption bool
	// Noop lists enabled plugins of upstream's default set that this
	// scheduler does not implement (they have no effect).
	Noop []string
}

// Build builds every profile of a defaulted, validated configuration
// (schedconfig.Load or schedconfig.Default). Errors are what upstream's
// framework reports when it instantiates a profile (a plugin that does
// not exist or does not extend an extension point, no queue sort or
// bind plugin), plus the plugins and arguments this scheduler does not
// support. volumes may be nil (no claims, volumes or classes).
func Build(cfg *configv1.KubeSchedulerConfiguration, volumes volumebinding.Lister) ([]*Profile, error) {
	if volumes == nil {
		volumes = volumebinding.Empty{}
	}
	out := make([]*Profile, 0, len(cfg.Profiles))
	for i := range cfg.Profiles {
		p := &cfg.Profiles[i]
		name := ""
		if p.SchedulerName != nil {
			name = *p.SchedulerName
		}
		built, err := build(cfg, p, volumes)
		if err != nil {
			return nil, fmt.Errorf("creating profile for scheduler name %s: %w", name, err)
		}
		built.Name = name
		out = append(out, built)
	}
	return out, nil
}

// points are the extension points this scheduler reads, in upstream's
// order. Points with no plugins here (reserve, permit, preBind,
// postBind) are accepted for the plugins upstream has there.
var points = []string{"preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore", "score", "reserve", "permit", "preBind", "bind", "postBind"}

func build(cfg *configv1.KubeSchedulerConfiguration, p *configv1.KubeSchedulerProfile, volumes volumebinding.Lister) (*Profile, error) {
	plugins := p.Plugins
	if plugins == nil {
		plugins = &configv1.Plugins{}
	}
	setAt := map[string]configv1.PluginSet{}
	for _, s := range schedconfig.PluginSets(plugins) {
		if !slices.Contains(points, s.Name) && s.Name != "multiPoint" && len(s.Set.Enabled)+len(s.Set.Disabled) > 0 {
			return nil, fmt.Errorf("extension point %s is not supported by this scheduler", s.Name)
		}
		setAt[s.Name] = *s.Set
	}
	args := map[string]runtime.Object{}
	for _, pc := range p.PluginConfig {
		args[pc.Name] = pc.Args.Object
	}
	inst := map[string]framework.Plugin{}
	res := &Profile{}
	for _, s := range schedconfig.PluginSets(plugins) {
		for _, pl := range s.Set.Enabled {
			if _, done := inst[pl.Name]; done {
				continue
			}
			e, ok := registry[pl.Name]
			if !ok {
				return nil, fmt.Errorf("plugin %q does not exist", pl.Name)
			}
			if err := checkDefaultOnly(pl.Name, args[pl.Name]); err != nil {
				return nil, err
			}
			var built framework.Plugin
			if e.new != nil {
				b, err := e.new(args[pl.Name], volumes)
				if err != nil {
					return nil, fmt.Errorf("plugin %q: %w", pl.Name, err)
				}
				built = b
			}
			inst[pl.Name] = built
			if e.noop {
				res.Noop = append(res.Noop, pl.Name)
			}
		}
	}
	supports := func(name, point string) bool {
		if slices.Contains(registry[name].points, point) {
			return true
		}
		switch pl := inst[name]; point {
		case "preFilter":
			_, ok := pl.(framework.PreFilterPlugin)
			return ok
		case "filter":
			_, ok := pl.(framework.FilterPlugin)
			return ok
		case "preScore":
			_, ok := pl.(framework.PreScorePlugin)
			return ok
		case "score":
			_, ok := pl.(framework.ScorePlugin)
			return ok
		}
		return false
	}
	at := map[string][]configv1.Plugin{}
	for _, point := range points {
		list, err := Expand(point, setAt[point], plugins.MultiPoint.Enabled, supports)
		if err != nil {
			return nil, err
		}
		at[point] = list
	}
	switch {
	case len(at["queueSort"]) == 0:
		return nil, fmt.Errorf("no queue sort plugin is enabled")
	case len(at["bind"]) == 0:
		return nil, fmt.Errorf("at least one bind plugin is needed")
	case !has(at["preEnqueue"], "SchedulingGates"):
		return nil, fmt.Errorf("plugin SchedulingGates cannot be disabled: this scheduler always waits for a pod's scheduling gates")
	}
	fw := &framework.Framework{PercentageOfNodesToScore: int(ptr.Deref(cfg.PercentageOfNodesToScore, 0))}
	if p.PercentageOfNodesToScore != nil {
		fw.PercentageOfNodesToScore = int(*p.PercentageOfNodesToScore)
	}
	if cfg.Parallelism != nil {
		fw.Parallelism = int(*cfg.Parallelism)
	}
	for _, pl := range at["preFilter"] {
		if x, ok := inst[pl.Name].(framework.PreFilterPlugin); ok {
			fw.PreFilters = append(fw.PreFilters, x)
		}
	}
	for _, pl := range at["filter"] {
		if x, ok := inst[pl.Name].(framework.FilterPlugin); ok {
			fw.Filters = append(fw.Filters, x)
		}
	}
	for _, pl := range at["preScore"] {
		if x, ok := inst[pl.Name].(framework.PreScorePlugin); ok {
			fw.PreScores = append(fw.PreScores, x)
		}
	}
	for _, pl := range at["score"] {
		if x, ok := inst[pl.Name].(framework.ScorePlugin); ok {
			fw.Scores = append(fw.Scores, framework.WeightedScore{Plugin: x, Weight: weight(pl)})
		}
	}
	if err := addSystemSpreading(fw, at, args["PodTopologySpread"]); err != nil {
		return nil, err
	}
	res.Framework = fw
	res.Preemption = has(at["postFilter"], "DefaultPreemption")
	return res, nil
}

// addSystemSpreading gives PodTopologySpread its system defaults: pods
// without constraints of their own spread by owner over nodes and zones
// (defaultspread), scored with PodTopologySpread's weight. List
// defaulting with no constraints turns that off.
func addSystemSpreading(fw *framework.Framework, at map[string][]configv1.Plugin, args runtime.Object) error {
	i := index(at["score"], "PodTopologySpread")
	if i < 0 {
		return nil
	}
	if a, ok := args.(*configv1.PodTopologySpreadArgs); ok && a.DefaultingType == configv1.ListDefaulting {
		if len(a.DefaultConstraints) > 0 {
			return fmt.Errorf("plugin %q: defaultConstraints are not supported by this scheduler (use defaultingType System, or List without constraints)", "PodTopologySpread")
		}
		return nil
	}
	ds := &defaultspread.Plugin{}
	fw.PreScores = append(fw.PreScores, ds)
	fw.Scores = append(fw.Scores, framework.WeightedScore{Plugin: ds, Weight: weight(at["score"][i])})
	return nil
}

// Expand lists the plugins enabled at one extension point, as upstream's
// framework expands multiPoint: plugins enabled explicitly at the point
// and also in multiPoint keep their explicit place and settings and come
// first, then the rest of multiPoint's that extend the point and are not
// disabled there, then the other explicit ones. "*" disabled at the
// point keeps only the explicit ones.
func Expand(point string, set configv1.PluginSet, multi []configv1.Plugin, supports func(name, point string) bool) ([]configv1.Plugin, error) {
	explicit := sets.New[string]()
	for _, pl := range set.Enabled {
		if !supports(pl.Name, point) {
			return nil, fmt.Errorf("plugin %q does not extend %s", pl.Name, point)
		}
		if explicit.Has(pl.Name) {
			return nil, fmt.Errorf("plugin %q already registered at %s", pl.Name, point)
		}
		explicit.Insert(pl.Name)
	}
	disabled := sets.New[string]()
	for _, pl := range set.Disabled {
		disabled.Insert(pl.Name)
	}
	if disabled.Has("*") {
		return set.Enabled, nil
	}
	overrides, fromMulti := sets.New[string](), sets.New[string]()
	var out []configv1.Plugin
	var multiList []configv1.Plugin
	for _, pl := range multi {
		if !supports(pl.Name, point) || disabled.Has(pl.Name) {
			continue
		}
		if explicit.Has(pl.Name) {
			overrides.Insert(pl.Name)
			continue
		}
		if fromMulti.Has(pl.Name) {
			return nil, fmt.Errorf("plugin %q already registered at %s", pl.Name, point)
		}
		fromMulti.Insert(pl.Name)
		multiList = append(multiList, pl)
	}
	for _, pl := range set.Enabled {
		if overrides.Has(pl.Name) {
			out = append(out, pl)
		}
	}
	out = append(out, multiList...)
	for _, pl := range set.Enabled {
		if !overrides.Has(pl.Name) {
			out = append(out, pl)
		}
	}
	return out, nil
}

// weight is a score plugin's weight; 0 or unset is 1, as upstream.
func weight(pl configv1.Plugin) int64 {
	if pl.Weight == nil || *pl.Weight == 0 {
		return 1
	}
	return int64(*pl.Weight)
}

func index(list []configv1.Plugin, name string) int {
	for i, pl := range list {
		if pl.Name == name {
			return i
		}
	}
	return -1
}

func has(list []configv1.Plugin, name string) bool { return index(list, name) >= 0 }
