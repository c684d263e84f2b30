package schedconfig

import (
	"strings"
	"testing"

	configv1 "k8s.io/kube-scheduler/config/v1"
)

const header = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"

func TestDecode(t *testing.T) {
	for _, tc := range []struct {
		name string
		file string
		// wantErr lists substrings of the error; none means success.
		wantErr []string
		check   func(t *testing.T, c *configv1.KubeSchedulerConfiguration)
	}{
		{
			name: "empty file is the default profile",
			file: header,
			check: func(t *testing.T, c *configv1.KubeSchedulerConfiguration) {
				if len(c.Profiles) != 1 || *c.Profiles[0].SchedulerName != "default-scheduler" {
					t.Fatalf("profiles = %+v", c.Profiles)
				}
				if got := names(c.Profiles[0].Plugins.MultiPoint.Enabled); got[0] != "SchedulingGates" || got[len(got)-1] != "DefaultBinder" || len(got) != 19 {
					t.Errorf("multiPoint = %v", got)
				}
				if *c.PercentageOfNodesToScore != 0 || c.LeaderElection.ResourceName != "kube-scheduler" || c.LeaderElection.ResourceNamespace != "kube-system" || !*c.LeaderElection.LeaderElect {
					t.Errorf("globals = %d %+v", *c.PercentageOfNodesToScore, c.LeaderElection)
				}
				fit := args[*configv1.NodeResourcesFitArgs](t, c.Profiles[0], "NodeResourcesFit")
				if fit.ScoringStrategy.Type != configv1.LeastAllocated || len(fit.ScoringStrategy.Resources) != 2 {
					t.Errorf("fit args = %+v", fit.ScoringStrategy)
				}
				if pts := args[*configv1.PodTopologySpreadArgs](t, c.Profiles[0], "PodTopologySpread"); pts.DefaultingType != configv1.SystemDefaulting {
					t.Errorf("spread defaulting = %q", pts.DefaultingType)
				}
				if ipa := args[*configv1.InterPodAffinityArgs](t, c.Profiles[0], "InterPodAffinity"); *ipa.HardPodAffinityWeight != 1 {
					t.Errorf("hardPodAffinityWeight = %d", *ipa.HardPodAffinityWeight)
				}
			},
		},
		{
			name: "two profiles, packing and weights",
			file: header + `percentageOfNodesToScore: 50
leaderElection:
  leaderElect: false
profiles:
- schedulerName: default-scheduler
- schedulerName: packing-scheduler
  percentageOfNodesToScore: 100
  plugins:
    score:
      enabled:
      - name: NodeResourcesFit
        weight: 5
      disabled:
      - name: NodeResourcesBalancedAllocation
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources:
        - name: cpu
          weight: 2
        - name: memory
`,
			check: func(t *testing.T, c *configv1.KubeSchedulerConfiguration) {
				if len(c.Profiles) != 2 || *c.Profiles[1].SchedulerName != "packing-scheduler" || *c.Profiles[1].PercentageOfNodesToScore != 100 || *c.PercentageOfNodesToScore != 50 {
					t.Fatalf("profiles = %+v", c.Profiles)
				}
				p := c.Profiles[1].Plugins
				if got := names(p.Score.Enabled); len(got) != 1 || *p.Score.Enabled[0].Weight != 5 {
					t.Errorf("score enabled = %v", got)
				}
				if got := names(p.Score.Disabled); len(got) != 1 || got[0] != "NodeResourcesBalancedAllocation" {
					t.Errorf("score disabled = %v", got)
				}
				fit := args[*configv1.NodeResourcesFitArgs](t, c.Profiles[1], "NodeResourcesFit")
				if s := fit.ScoringStrategy; s.Type != configv1.MostAllocated || s.Resources[0].Weight != 2 || s.Resources[1].Weight != 1 {
					t.Errorf("fit strategy = %+v", s)
				}
				if *c.LeaderElection.LeaderElect {
					t.Error("leaderElect stays false")
				}
			},
		},
		{
			name: "JSON works too",
			file: `{"apiVersion":"kubescheduler.config.k8s.io/v1","kind":"KubeSchedulerConfiguration","profiles":[{"schedulerName":"a"}]}`,
			check: func(t *testing.T, c *configv1.KubeSchedulerConfiguration) {
				if *c.Profiles[0].SchedulerName != "a" {
					t.Errorf("name = %q", *c.Profiles[0].SchedulerName)
				}
			},
		},
		{
			name: "disabled star keeps only what is enabled",
			file: header + `profiles:
- schedulerName: only-fit
  plugins:
    multiPoint:
      enabled:
      - name: PrioritySort
      - name: NodeResourcesFit
      - name: DefaultBinder
      disabled:
      - name: "*"
`,
			check: func(t *testing.T, c *configv1.KubeSchedulerConfiguration) {
				if got := strings.Join(names(c.Profiles[0].Plugins.MultiPoint.Enabled), ","); got != "PrioritySort,NodeResourcesFit,DefaultBinder" {
					t.Errorf("multiPoint = %s", got)
				}
			},
		},
		{
			name: "re-enabled default keeps its place with the new weight",
			file: header + `profiles:
- plugins:
    multiPoint:
      enabled:
      - name: TaintToleration
        weight: 7
      disabled:
      - name: ImageLocality
`,
			check: func(t *testing.T, c *configv1.KubeSchedulerConfiguration) {
				mp := c.Profiles[0].Plugins.MultiPoint.Enabled
				if mp[4].Name != "TaintToleration" || *mp[4].Weight != 7 || len(mp) != 18 {
					t.Errorf("multiPoint = %v", names(mp))
				}
			},
		},
		{name: "unknown top-level field", file: header + "percentageOfNodesToScor: 5\n", wantErr: []string{"strict decoding error", `unknown field "percentageOfNodesToScor"`}},
		{name: "unknown profile field", file: header + "profiles:\n- schedulerName: a\n  plugin: {}\n", wantErr: []string{`unknown field "profiles[0].plugin"`}},
		{name: "unknown args field", file: header + "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategie: {}\n", wantErr: []string{"decoding .profiles[0].pluginConfig[0]", `unknown field "scoringStrategie"`}},
		{name: "bad apiVersion", file: "apiVersion: kubescheduler.config.k8s.io/v1beta9\nkind: KubeSchedulerConfiguration\n", wantErr: []string{`no kind "KubeSchedulerConfiguration" is registered for version "kubescheduler.config.k8s.io/v1beta9"`}},
		{name: "no kind", file: "apiVersion: kubescheduler.config.k8s.io/v1\n", wantErr: []string{"'Kind' is missing"}},
		{name: "other kind", file: "apiVersion: kubescheduler.config.k8s.io/v1\nkind: NodeResourcesFitArgs\n", wantErr: []string{"couldn't decode as KubeSchedulerConfiguration"}},
		{name: "not YAML", file: "{]", wantErr: []string{"error"}},
		{name: "duplicate schedulerName", file: header + "profiles:\n- schedulerName: a\n- schedulerName: a\n", wantErr: []string{`profiles[1].schedulerName: Duplicate value: "a"`}},
		{name: "unnamed second profile", file: header + "profiles:\n- schedulerName: a\n- {}\n", wantErr: []string{"profiles[1].schedulerName: Required value"}},
		{name: "percentage above 100", file: header + "percentageOfNodesToScore: 101\n", wantErr: []string{"percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]"}},
		{name: "profile percentage below 0", file: header + "profiles:\n- percentageOfNodesToScore: -1\n", wantErr: []string{"profiles[0].percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100]"}},
		{name: "removed plugin", file: header + "profiles:\n- plugins:\n    filter:\n      enabled:\n      - name: EBSLimits\n", wantErr: []string{`profiles[0].plugins.filter.enabled[0]: Invalid value: "EBSLimits": was invalid in version "kubescheduler.config.k8s.io/v1"`}},
		{name: "negative weight", file: header + "profiles:\n- plugins:\n    score:\n      enabled:\n      - name: NodeResourcesFit\n        weight: -1\n", wantErr: []string{"profiles[0].plugins.score.enabled[0].weight: Invalid value: -1"}},
		{name: "args for a plugin without any", file: header + "profiles:\n- pluginConfig:\n  - name: NodePorts\n    args: {}\n", wantErr: []string{`plugin "NodePorts" takes no arguments`}},
		{name: "args twice", file: header + "profiles:\n- pluginConfig:\n  - name: InterPodAffinity\n    args: {}\n  - name: InterPodAffinity\n    args: {}\n", wantErr: []string{`profiles[0].pluginConfig[1]: Duplicate value: "InterPodAffinity"`}},
		{name: "unknown strategy", file: header + "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n        type: Packed\n", wantErr: []string{`profiles[0].pluginConfig[0].args.scoringStrategy.type: Unsupported value: "Packed"`}},
		{name: "resource weight out of range", file: header + "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n        type: MostAllocated\n        resources:\n        - name: cpu\n          weight: 101\n", wantErr: []string{"resource weight of cpu not in valid range (0, 100]"}},
		{name: "ratio without shape", file: header + "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n        type: RequestedToCapacityRatio\n", wantErr: []string{"scoringStrategy.requestedToCapacityRatio: Required value"}},
		{name: "ratio shape unsorted", file: header + "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n        type: RequestedToCapacityRatio\n        requestedToCapacityRatio:\n          shape: [{utilization: 50, score: 1}, {utilization: 10, score: 11}]\n", wantErr: []string{"shape[1].utilization: Invalid value: 10: values must be sorted in increasing order", "shape[1].score: Invalid value: 11: not in valid range [0, 10]"}},
		{name: "hard affinity weight", file: header + "profiles:\n- pluginConfig:\n  - name: InterPodAffinity\n    args:\n      hardPodAffinityWeight: 101\n", wantErr: []string{"args.hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]"}},
		{name: "system defaulting with constraints", file: header + "profiles:\n- pluginConfig:\n  - name: PodTopologySpread\n    args:\n      defaultingType: System\n      defaultConstraints:\n      - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway}\n", wantErr: []string{`args.defaultingType: Invalid value: "System": when .defaultConstraints are not empty`}},
		{name: "balanced weight", file: header + "profiles:\n- pluginConfig:\n  - name: NodeResourcesBalancedAllocation\n    args:\n      resources: [{name: cpu, weight: 2}]\n", wantErr: []string{"args.resources[0].weight: Invalid value: 2: must be 1"}},
		{name: "added affinity", file: header + "profiles:\n- pluginConfig:\n  - name: NodeAffinity\n    args:\n      addedAffinity:\n        requiredDuringSchedulingIgnoredDuringExecution:\n          nodeSelectorTerms:\n          - matchExpressions: [{key: a, operator: Bogus}]\n", wantErr: []string{"addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator"}},
		{name: "queue sort differs", file: header + "profiles:\n- schedulerName: a\n- schedulerName: b\n  plugins:\n    queueSort:\n      enabled: [{name: Other}]\n      disabled: [{name: \"*\"}]\n", wantErr: []string{"profiles[1].plugins.queueSort", "must be the same for all profiles"}},
		{name: "extenders", file: header + "extenders:\n- urlPrefix: http://x\n", wantErr: []string{"extenders: Forbidden"}},
		{name: "backoff", file: header + "podInitialBackoffSeconds: 0\n", wantErr: []string{"podInitialBackoffSeconds: Invalid value: 0: must be greater than 0"}},
		{name: "parallelism", file: header + "parallelism: 0\n", wantErr: []string{"parallelism: Invalid value: 0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Decode([]byte(tc.file))
			if len(tc.wantErr) > 0 {
				if err == nil {
					t.Fatalf("no error, want %q", tc.wantErr)
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q\n does not contain %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			tc.check(t, c)
		})
	}
}

func TestDefaultMatchesEmptyFile(t *testing.T) {
	c, err := Decode([]byte(header))
	if err != nil {
		t.Fatal(err)
	}
	d := Default()
	if got, want := names(d.Profiles[0].Plugins.MultiPoint.Enabled), names(c.Profiles[0].Plugins.MultiPoint.Enabled); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("Default() plugins %v, file %v", got, want)
	}
	if len(d.Profiles[0].PluginConfig) != len(c.Profiles[0].PluginConfig) {
		t.Errorf("Default() has %d plugin configs, file %d", len(d.Profiles[0].PluginConfig), len(c.Profiles[0].PluginConfig))
	}
}

func names(ps []configv1.Plugin) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return out
}

func args[T any](t *testing.T, p configv1.KubeSchedulerProfile, name string) T {
	t.Helper()
	for _, pc := range p.PluginConfig {
		if pc.Name == name {
			a, ok := pc.Args.Object.(T)
			if !ok {
				t.Fatalf("args of %s are %T", name, pc.Args.Object)
			}
			return a
		}
	}
	t.Fatalf("no args for %s", name)
	var zero T
	return zero
}
