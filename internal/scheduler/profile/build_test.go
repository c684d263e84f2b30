package profile

import (
	"fmt"
	"strings"
	"testing"

	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/orca-project/orca/internal/scheduler/framework"
	"github.com/orca-project/orca/internal/scheduler/plugins/noderesources"
	"github.com/orca-project/orca/internal/scheduler/schedconfig"
)

const header = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"

// describe prints a framework's plugins per extension point.
func describe(fw *framework.Framework) string {
	var pre, fil, ps, sc []string
	for _, p := range fw.PreFilters {
		pre = append(pre, p.Name())
	}
	for _, p := range fw.Filters {
		fil = append(fil, p.Name())
	}
	for _, p := range fw.PreScores {
		ps = append(ps, p.Name())
	}
	for _, s := range fw.Scores {
		sc = append(sc, fmt.Sprintf("%s=%d", s.Plugin.Name(), s.Weight))
	}
	return fmt.Sprintf("preFilter: %s\nfilter: %s\npreScore: %s\nscore: %s",
		strings.Join(pre, ","), strings.Join(fil, ","), strings.Join(ps, ","), strings.Join(sc, ","))
}

const defaultDescription = `preFilter: NodeAffinity,VolumeRestrictions,VolumeBinding,PodTopologySpread,InterPodAffinity
filter: NodeUnschedulable,NodeName,TaintToleration,NodeAffinity,NodePorts,NodeResourcesFit,VolumeRestrictions,VolumeBinding,PodTopologySpread,InterPodAffinity
preScore: NodeAffinity,PodTopologySpread,InterPodAffinity,DefaultPodTopologySpread
score: TaintToleration=3,NodeAffinity=2,NodeResourcesFit=1,PodTopologySpread=2,InterPodAffinity=2,NodeResourcesBalancedAllocation=1,DefaultPodTopologySpread=2`

func TestBuild(t *testing.T) {
	for _, tc := range []struct {
		name string
		file string
		// want is the description of each profile, by name.
		want map[string]string
		// preempt lists the profiles with preemption.
		preempt []string
		wantErr string
		check   func(t *testing.T, ps []*Profile)
	}{
		{
			name:    "default",
			file:    header,
			want:    map[string]string{"default-scheduler": defaultDescription},
			preempt: []string{"default-scheduler"},
			check: func(t *testing.T, ps []*Profile) {
				if got := strings.Join(ps[0].Noop, ","); got != "NodeVolumeLimits,VolumeZone,DynamicResources,ImageLocality" {
					t.Errorf("noop = %s", got)
				}
			},
		},
		{
			name: "packing profile beside the default",
			file: header + `profiles:
- schedulerName: default-scheduler
- schedulerName: packing-scheduler
  plugins:
    score:
      enabled: [{name: NodeResourcesFit, weight: 5}]
      disabled: [{name: NodeResourcesBalancedAllocation}]
    postFilter:
      disabled: [{name: DefaultPreemption}]
  pluginConfig:
  - name: NodeResourcesFit
    args: {scoringStrategy: {type: MostAllocated}}
`,
			want: map[string]string{
				"default-scheduler": defaultDescription,
				// An explicit score entry comes first, with its weight.
				"packing-scheduler": strings.Replace(defaultDescription,
					"score: TaintToleration=3,NodeAffinity=2,NodeResourcesFit=1,PodTopologySpread=2,InterPodAffinity=2,NodeResourcesBalancedAllocation=1,DefaultPodTopologySpread=2",
					"score: NodeResourcesFit=5,TaintToleration=3,NodeAffinity=2,PodTopologySpread=2,InterPodAffinity=2,DefaultPodTopologySpread=2", 1),
			},
			preempt: []string{"default-scheduler"},
			check: func(t *testing.T, ps []*Profile) {
				fit := ps[1].Framework.Scores[0].Plugin.(*noderesources.Fit)
				if fit.Strategy.Type != noderesources.MostAllocated {
					t.Errorf("packing strategy = %q", fit.Strategy.Type)
				}
				if ps[0].Framework.Scores[2].Plugin.(*noderesources.Fit).Strategy.Type != noderesources.LeastAllocated {
					t.Error("default profile's Fit changed")
				}
			},
		},
		{
			name: "disabled star at score, one score enabled",
			file: header + `profiles:
- plugins:
    score:
      enabled: [{name: NodeResourcesFit}]
      disabled: [{name: "*"}]
    filter:
      disabled: [{name: NodePorts}, {name: TaintToleration}]
`,
			want: map[string]string{"default-scheduler": `preFilter: NodeAffinity,VolumeRestrictions,VolumeBinding,PodTopologySpread,InterPodAffinity
filter: NodeUnschedulable,NodeName,NodeAffinity,NodeResourcesFit,VolumeRestrictions,VolumeBinding,PodTopologySpread,InterPodAffinity
preScore: NodeAffinity,PodTopologySpread,InterPodAffinity
score: NodeResourcesFit=1`},
			preempt: []string{"default-scheduler"},
		},
		{
			name: "everything off but the essentials",
			file: header + `profiles:
- schedulerName: bare
  percentageOfNodesToScore: 30
  plugins:
    multiPoint:
      enabled: [{name: SchedulingGates}, {name: PrioritySort}, {name: NodeName}, {name: DefaultBinder}]
      disabled: [{name: "*"}]
`,
			want: map[string]string{"bare": "preFilter: \nfilter: NodeName\npreScore: \nscore: "},
			check: func(t *testing.T, ps []*Profile) {
				if ps[0].Framework.PercentageOfNodesToScore != 30 {
					t.Errorf("percentage = %d", ps[0].Framework.PercentageOfNodesToScore)
				}
			},
		},
		{
			name: "list defaulting without constraints drops system spreading",
			file: header + `percentageOfNodesToScore: 40
parallelism: 4
profiles:
- pluginConfig:
  - name: PodTopologySpread
    args: {defaultingType: List}
`,
			want:    map[string]string{"default-scheduler": strings.NewReplacer(",DefaultPodTopologySpread=2", "", ",DefaultPodTopologySpread", "").Replace(defaultDescription)},
			preempt: []string{"default-scheduler"},
			check: func(t *testing.T, ps []*Profile) {
				if fw := ps[0].Framework; fw.PercentageOfNodesToScore != 40 || fw.Parallelism != 4 {
					t.Errorf("percentage %d parallelism %d", fw.PercentageOfNodesToScore, fw.Parallelism)
				}
			},
		},
		{name: "unknown plugin", file: header + "profiles:\n- plugins:\n    filter:\n      enabled: [{name: Frobnicate}]\n", wantErr: `creating profile for scheduler name default-scheduler: plugin "Frobnicate" does not exist`},
		{name: "old DefaultPodTopologySpread name", file: header + "profiles:\n- plugins:\n    score:\n      enabled: [{name: DefaultPodTopologySpread}]\n", wantErr: `plugin "DefaultPodTopologySpread" does not exist`},
		{name: "plugin at a point it does not extend", file: header + "profiles:\n- plugins:\n    score:\n      enabled: [{name: NodeName}]\n", wantErr: `plugin "NodeName" does not extend score`},
		{name: "enabled twice", file: header + "profiles:\n- plugins:\n    filter:\n      enabled: [{name: NodeName}, {name: NodeName}]\n", wantErr: `plugin "NodeName" already registered at filter`},
		{name: "no queue sort", file: header + "profiles:\n- plugins:\n    queueSort:\n      disabled: [{name: \"*\"}]\n", wantErr: "no queue sort plugin is enabled"},
		{name: "no binder", file: header + "profiles:\n- plugins:\n    bind:\n      disabled: [{name: DefaultBinder}]\n", wantErr: "at least one bind plugin is needed"},
		{name: "scheduling gates", file: header + "profiles:\n- plugins:\n    multiPoint:\n      disabled: [{name: SchedulingGates}]\n", wantErr: "SchedulingGates cannot be disabled"},
		{name: "default constraints", file: header + "profiles:\n- pluginConfig:\n  - name: PodTopologySpread\n    args:\n      defaultingType: List\n      defaultConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway}]\n", wantErr: "defaultConstraints are not supported"},
		{name: "preemption arguments", file: header + "profiles:\n- pluginConfig:\n  - name: DefaultPreemption\n    args: {minCandidateNodesAbsolute: 5}\n", wantErr: `arguments for plugin "DefaultPreemption" other than the defaults are not supported`},
		{name: "unsupported extension point", file: header + "profiles:\n- plugins:\n    placementScore:\n      enabled: [{name: NodeName}]\n", wantErr: "extension point placementScore is not supported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := schedconfig.Decode([]byte(tc.file))
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			ps, err := Build(cfg, nil)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			var preempt []string
			for _, p := range ps {
				want, ok := tc.want[p.Name]
				if !ok {
					t.Errorf("unexpected profile %q", p.Name)
					continue
				}
				if got := describe(p.Framework); got != want {
					t.Errorf("profile %s:\n%s\nwant:\n%s", p.Name, got, want)
				}
				if p.Preemption {
					preempt = append(preempt, p.Name)
				}
			}
			if len(ps) != len(tc.want) {
				t.Errorf("%d profiles, want %d", len(ps), len(tc.want))
			}
			if fmt.Sprint(preempt) != fmt.Sprint(tc.preempt) {
				t.Errorf("preemption in %v, want %v", preempt, tc.preempt)
			}
			if tc.check != nil {
				tc.check(t, ps)
			}
		})
	}
}

func TestExpand(t *testing.T) {
	all := func(string, string) bool { return true }
	onlyAB := func(name, _ string) bool { return name == "A" || name == "B" }
	w := func(n int32) *int32 { return &n }
	multi := []configv1.Plugin{{Name: "A", Weight: w(1)}, {Name: "B", Weight: w(2)}, {Name: "C"}}
	for _, tc := range []struct {
		name     string
		set      configv1.PluginSet
		supports func(string, string) bool
		want     string
	}{
		{"multiPoint only", configv1.PluginSet{}, all, "A=1 B=2 C=0"},
		{"not extending the point", configv1.PluginSet{}, onlyAB, "A=1 B=2"},
		{"disabled at the point", configv1.PluginSet{Disabled: []configv1.Plugin{{Name: "B"}}}, all, "A=1 C=0"},
		{"star keeps the explicit", configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "C"}}, Disabled: []configv1.Plugin{{Name: "*"}}}, all, "C=0"},
		{"override first with its weight", configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "X"}, {Name: "B", Weight: w(9)}}}, all, "B=9 A=1 C=0 X=0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Expand("score", tc.set, multi, tc.supports)
			if err != nil {
				t.Fatal(err)
			}
			var parts []string
			for _, p := range got {
				var wt int32
				if p.Weight != nil {
					wt = *p.Weight
				}
				parts = append(parts, fmt.Sprintf("%s=%d", p.Name, wt))
			}
			if s := strings.Join(parts, " "); s != tc.want {
				t.Errorf("Expand = %s, want %s", s, tc.want)
			}
		})
	}
}
