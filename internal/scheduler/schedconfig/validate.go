package schedconfig

import (
	"fmt"
	"reflect"
	"strings"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	configv1 "k8s.io/kube-scheduler/config/v1"
)

// Validate checks a defaulted configuration with upstream's rules and
// wording; the error lists every problem, each with its field path.
func Validate(cfg *configv1.KubeSchedulerConfiguration) error {
	var errs field.ErrorList
	if le := cfg.LeaderElection; le.LeaderElect != nil && *le.LeaderElect && le.ResourceLock != "leases" {
		errs = append(errs, field.Invalid(field.NewPath("leaderElection", "resourceLock"), le.ResourceLock, `resourceLock value must be "leases"`))
	}
	if cfg.Parallelism != nil && *cfg.Parallelism <= 0 {
		errs = append(errs, field.Invalid(field.NewPath("parallelism"), *cfg.Parallelism, "should be an integer value greater than zero"))
	}
	profilesPath := field.NewPath("profiles")
	if len(cfg.Profiles) == 0 {
		errs = append(errs, field.Required(profilesPath, ""))
	}
	seen := map[string]bool{}
	for i := range cfg.Profiles {
		p := &cfg.Profiles[i]
		path := profilesPath.Index(i)
		name := ptrValue(p.SchedulerName)
		if name == "" {
			errs = append(errs, field.Required(path.Child("schedulerName"), ""))
		} else if seen[name] {
			errs = append(errs, field.Duplicate(path.Child("schedulerName"), name))
		}
		seen[name] = true
		errs = append(errs, validatePercentage(path.Child("percentageOfNodesToScore"), p.PercentageOfNodesToScore)...)
		errs = append(errs, validatePlugins(path.Child("plugins"), p.Plugins)...)
		errs = append(errs, validatePluginConfig(path.Child("pluginConfig"), p.PluginConfig)...)
	}
	if len(cfg.Profiles) > 0 {
		errs = append(errs, validateCommonQueueSort(profilesPath, cfg.Profiles)...)
	}
	errs = append(errs, validatePercentage(field.NewPath("percentageOfNodesToScore"), cfg.PercentageOfNodesToScore)...)
	if cfg.PodInitialBackoffSeconds != nil && *cfg.PodInitialBackoffSeconds <= 0 {
		errs = append(errs, field.Invalid(field.NewPath("podInitialBackoffSeconds"), *cfg.PodInitialBackoffSeconds, "must be greater than 0"))
	}
	if cfg.PodInitialBackoffSeconds != nil && cfg.PodMaxBackoffSeconds != nil && *cfg.PodMaxBackoffSeconds < *cfg.PodInitialBackoffSeconds {
		errs = append(errs, field.Invalid(field.NewPath("podMaxBackoffSeconds"), *cfg.PodMaxBackoffSeconds, "must be greater than or equal to PodInitialBackoffSeconds"))
	}
	if len(cfg.Extenders) > 0 {
		errs = append(errs, field.Forbidden(field.NewPath("extenders"), "scheduler extenders are not supported by this scheduler"))
	}
	return errs.ToAggregate()
}

func ptrValue[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func validatePercentage(path *field.Path, v *int32) field.ErrorList {
	if v != nil && (*v < 0 || *v > 100) {
		return field.ErrorList{field.Invalid(path, *v, "not in valid range [0-100]")}
	}
	return nil
}

// removedPlugins were in-tree once and are invalid in v1.
var removedPlugins = sets.New("AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits")

func validatePlugins(path *field.Path, p *configv1.Plugins) field.ErrorList {
	if p == nil {
		return nil
	}
	var errs field.ErrorList
	for _, s := range PluginSets(p) {
		for i, pl := range s.Set.Enabled {
			ep := path.Child(s.Name, "enabled").Index(i)
			if removedPlugins.Has(pl.Name) {
				errs = append(errs, field.Invalid(ep, pl.Name, fmt.Sprintf("was invalid in version %q (KubeSchedulerConfiguration is version %q)", configv1.SchemeGroupVersion, configv1.SchemeGroupVersion)))
			}
			if pl.Weight != nil && *pl.Weight < 0 {
				errs = append(errs, field.Invalid(ep.Child("weight"), *pl.Weight, "must not be negative"))
			}
		}
	}
	return errs
}

func validatePluginConfig(path *field.Path, pcs []configv1.PluginConfig) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, pc := range pcs {
		p := path.Index(i)
		if seen.Has(pc.Name) {
			errs = append(errs, field.Duplicate(p, pc.Name))
		}
		seen.Insert(pc.Name)
		if removedPlugins.Has(pc.Name) {
			errs = append(errs, field.Invalid(p, pc.Name, fmt.Sprintf("was invalid in version %q (KubeSchedulerConfiguration is version %q)", configv1.SchemeGroupVersion, configv1.SchemeGroupVersion)))
			continue
		}
		errs = append(errs, validateArgs(p.Child("args"), pc.Name, pc.Args.Object)...)
	}
	return errs
}

// argsKinds pairs each plugin with the type of its arguments.
var argsKinds = map[string]reflect.Type{
	"DefaultPreemption":               reflect.TypeFor[*configv1.DefaultPreemptionArgs](),
	"InterPodAffinity":                reflect.TypeFor[*configv1.InterPodAffinityArgs](),
	"NodeAffinity":                    reflect.TypeFor[*configv1.NodeAffinityArgs](),
	"NodeResourcesBalancedAllocation": reflect.TypeFor[*configv1.NodeResourcesBalancedAllocationArgs](),
	"NodeResourcesFit":                reflect.TypeFor[*configv1.NodeResourcesFitArgs](),
	"PodTopologySpread":               reflect.TypeFor[*configv1.PodTopologySpreadArgs](),
	"VolumeBinding":                   reflect.TypeFor[*configv1.VolumeBindingArgs](),
	"DynamicResources":                reflect.TypeFor[*configv1.DynamicResourcesArgs](),
}

func validateArgs(path *field.Path, name string, obj runtime.Object) field.ErrorList {
	want, ok := argsKinds[name]
	if !ok {
		return nil
	}
	if reflect.TypeOf(obj) != want {
		return field.ErrorList{field.Invalid(path, obj, "has to match plugin args")}
	}
	switch a := obj.(type) {
	case *configv1.DefaultPreemptionArgs:
		return validatePreemptionArgs(path, a)
	case *configv1.InterPodAffinityArgs:
		if w := ptrValue(a.HardPodAffinityWeight); w < 0 || w > 100 {
			return field.ErrorList{field.Invalid(path.Child("hardPodAffinityWeight"), w, "not in valid range [0, 100]")}
		}
	case *configv1.NodeAffinityArgs:
		return validateNodeAffinityArgs(path, a)
	case *configv1.NodeResourcesBalancedAllocationArgs:
		return validateBalancedArgs(path, a)
	case *configv1.NodeResourcesFitArgs:
		return validateFitArgs(path, a)
	case *configv1.PodTopologySpreadArgs:
		return validateSpreadArgs(path, a)
	case *configv1.VolumeBindingArgs:
		var errs field.ErrorList
		if t := ptrValue(a.BindTimeoutSeconds); t < 0 {
			errs = append(errs, field.Invalid(path.Child("bindTimeoutSeconds"), t, "invalid BindTimeoutSeconds, should not be a negative value"))
		}
		if a.Shape != nil {
			errs = append(errs, field.Invalid(path.Child("shape"), a.Shape, "unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring"))
		}
		return errs
	}
	return nil
}

func validatePreemptionArgs(path *field.Path, a *configv1.DefaultPreemptionArgs) field.ErrorList {
	var errs field.ErrorList
	pct, abs := ptrValue(a.MinCandidateNodesPercentage), ptrValue(a.MinCandidateNodesAbsolute)
	pp, ap := path.Child("minCandidateNodesPercentage"), path.Child("minCandidateNodesAbsolute")
	if pct < 0 || pct > 100 {
		errs = append(errs, field.Invalid(pp, pct, "not in valid range [0, 100]"))
	}
	if abs < 0 {
		errs = append(errs, field.Invalid(ap, abs, "not in valid range [0, inf)"))
	}
	if pct == 0 && abs == 0 {
		errs = append(errs, field.Invalid(pp, pct, "cannot be zero at the same time as minCandidateNodesAbsolute"),
			field.Invalid(ap, abs, "cannot be zero at the same time as minCandidateNodesPercentage"))
	}
	return errs
}

func validateNodeAffinityArgs(path *field.Path, a *configv1.NodeAffinityArgs) field.ErrorList {
	if a.AddedAffinity == nil {
		return nil
	}
	var errs field.ErrorList
	added := path.Child("addedAffinity")
	if ns := a.AddedAffinity.RequiredDuringSchedulingIgnoredDuringExecution; ns != nil {
		if _, err := nodeaffinity.NewNodeSelector(ns, field.WithPath(added.Child("requiredDuringSchedulingIgnoredDuringExecution"))); err != nil {
			errs = append(errs, asFieldErrors(added, err)...)
		}
	}
	if terms := a.AddedAffinity.PreferredDuringSchedulingIgnoredDuringExecution; len(terms) > 0 {
		if _, err := nodeaffinity.NewPreferredSchedulingTerms(terms, field.WithPath(added.Child("preferredDuringSchedulingIgnoredDuringExecution"))); err != nil {
			errs = append(errs, asFieldErrors(added, err)...)
		}
	}
	return errs
}

// asFieldErrors unpacks the helpers' aggregate of field errors.
func asFieldErrors(path *field.Path, err error) field.ErrorList {
	var out field.ErrorList
	agg, ok := err.(utilerrors.Aggregate)
	if !ok {
		return field.ErrorList{field.Invalid(path, nil, err.Error())}
	}
	for _, e := range agg.Errors() {
		if fe, ok := e.(*field.Error); ok {
			out = append(out, fe)
		} else {
			out = append(out, field.Invalid(path, nil, e.Error()))
		}
	}
	return out
}

func validateBalancedArgs(path *field.Path, a *configv1.NodeResourcesBalancedAllocationArgs) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, r := range a.Resources {
		p := path.Child("resources").Index(i)
		if seen.Has(r.Name) {
			errs = append(errs, field.Duplicate(p.Child("name"), r.Name))
		}
		seen.Insert(r.Name)
		if r.Weight != 1 {
			errs = append(errs, field.Invalid(p.Child("weight"), r.Weight, "must be 1"))
		}
	}
	return errs
}

var scoringTypes = []string{string(configv1.LeastAllocated), string(configv1.MostAllocated), string(configv1.RequestedToCapacityRatio)}

func validateFitArgs(path *field.Path, a *configv1.NodeResourcesFitArgs) field.ErrorList {
	var errs field.ErrorList
	for i, r := range a.IgnoredResources {
		errs = append(errs, metav1validation.ValidateLabelName(r, path.Child("ignoredResources").Index(i))...)
	}
	for i, g := range a.IgnoredResourceGroups {
		p := path.Child("ignoredResourceGroups").Index(i)
		if strings.Contains(g, "/") {
			errs = append(errs, field.Invalid(p, g, "resource group name can't contain '/'"))
		}
		errs = append(errs, metav1validation.ValidateLabelName(g, p)...)
	}
	sp := path.Child("scoringStrategy")
	s := a.ScoringStrategy
	if s == nil {
		return append(errs, field.Required(sp, "ScoringStrategy field is required"))
	}
	if !sets.New(scoringTypes...).Has(string(s.Type)) {
		errs = append(errs, field.NotSupported(sp.Child("type"), s.Type, scoringTypes))
	}
	for i, r := range s.Resources {
		if r.Weight <= 0 || r.Weight > 100 {
			errs = append(errs, field.Invalid(sp.Child("resources").Index(i).Child("weight"), r.Weight, fmt.Sprintf("resource weight of %v not in valid range (0, 100]", r.Name)))
		}
	}
	rp := sp.Child("requestedToCapacityRatio")
	switch {
	case s.Type == configv1.RequestedToCapacityRatio && s.RequestedToCapacityRatio == nil:
		errs = append(errs, field.Required(rp, "must be specified when type is RequestedToCapacityRatio"))
	case s.Type == configv1.RequestedToCapacityRatio:
		errs = append(errs, validateShape(rp.Child("shape"), s.RequestedToCapacityRatio.Shape)...)
	case s.RequestedToCapacityRatio != nil:
		errs = append(errs, field.Forbidden(rp, "must be nil when type is not RequestedToCapacityRatio"))
	}
	return errs
}

func validateShape(path *field.Path, shape []configv1.UtilizationShapePoint) field.ErrorList {
	if len(shape) == 0 {
		return field.ErrorList{field.Required(path, "at least one point must be specified")}
	}
	var errs field.ErrorList
	for i := 1; i < len(shape); i++ {
		if shape[i-1].Utilization >= shape[i].Utilization {
			errs = append(errs, field.Invalid(path.Index(i).Child("utilization"), shape[i].Utilization, "values must be sorted in increasing order"))
			break
		}
	}
	for i, pt := range shape {
		if pt.Utilization < 0 || pt.Utilization > 100 {
			errs = append(errs, field.Invalid(path.Index(i).Child("utilization"), pt.Utilization, "not in valid range [0, 100]"))
		}
		if pt.Score < 0 || pt.Score > 10 {
			errs = append(errs, field.Invalid(path.Index(i).Child("score"), pt.Score, "not in valid range [0, 10]"))
		}
	}
	return errs
}

func validateSpreadArgs(path *field.Path, a *configv1.PodTopologySpreadArgs) field.ErrorList {
	var errs field.ErrorList
	dp := path.Child("defaultingType")
	switch {
	case a.DefaultingType != configv1.SystemDefaulting && a.DefaultingType != configv1.ListDefaulting:
		errs = append(errs, field.NotSupported(dp, a.DefaultingType, []string{string(configv1.SystemDefaulting), string(configv1.ListDefaulting)}))
	case a.DefaultingType == configv1.SystemDefaulting && len(a.DefaultConstraints) > 0:
		errs = append(errs, field.Invalid(dp, a.DefaultingType, "when .defaultConstraints are not empty"))
	}
	cp := path.Child("defaultConstraints")
	whens := []string{string(v1.DoNotSchedule), string(v1.ScheduleAnyway)}
	for i, c := range a.DefaultConstraints {
		p := cp.Index(i)
		if c.MaxSkew <= 0 {
			errs = append(errs, field.Invalid(p.Child("maxSkew"), c.MaxSkew, "not in valid range (0, inf)"))
		}
		if c.TopologyKey == "" {
			errs = append(errs, field.Required(p.Child("topologyKey"), "can not be empty"))
		} else {
			errs = append(errs, metav1validation.ValidateLabelName(c.TopologyKey, p.Child("topologyKey"))...)
		}
		switch {
		case c.WhenUnsatisfiable == "":
			errs = append(errs, field.Required(p.Child("whenUnsatisfiable"), "can not be empty"))
		case !sets.New(whens...).Has(string(c.WhenUnsatisfiable)):
			errs = append(errs, field.NotSupported(p.Child("whenUnsatisfiable"), c.WhenUnsatisfiable, whens))
		}
		if c.LabelSelector != nil {
			errs = append(errs, field.Forbidden(p.Child("labelSelector"), "constraint must not define a selector, as they deduced for each pod"))
		}
		for _, o := range a.DefaultConstraints[:i] {
			if o.TopologyKey == c.TopologyKey && o.WhenUnsatisfiable == c.WhenUnsatisfiable {
				errs = append(errs, field.Duplicate(p, fmt.Sprintf("{%v, %v}", c.TopologyKey, c.WhenUnsatisfiable)))
				break
			}
		}
	}
	return errs
}

// validateCommonQueueSort: one queue serves every profile, so they must
// agree on how it is sorted.
func validateCommonQueueSort(path *field.Path, profiles []configv1.KubeSchedulerProfile) field.ErrorList {
	var errs field.ErrorList
	var canon configv1.PluginSet
	if profiles[0].Plugins != nil {
		canon = profiles[0].Plugins.QueueSort
		if n := len(canon.Enabled); n > 1 {
			errs = append(errs, field.Invalid(path.Index(0).Child("plugins", "queueSort", "Enabled"), n, "only one queue sort plugin can be enabled"))
		}
	}
	for i := 1; i < len(profiles); i++ {
		var cur configv1.PluginSet
		if profiles[i].Plugins != nil {
			cur = profiles[i].Plugins.QueueSort
		}
		if !apiequality.Semantic.DeepEqual(canon, cur) {
			errs = append(errs, field.Invalid(path.Index(i).Child("plugins", "queueSort"), cur, "must be the same for all profiles"))
		}
	}
	return errs
}
