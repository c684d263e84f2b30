package eviction

import (
	"reflect"
	"sort"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

const mi = int64(1) << 20

func TestParseConfig(t *testing.T) {
	for _, tc := range []struct {
		name    string
		flags   Flags
		want    []string // signal<value/grace, sorted
		wantErr string
	}{
		{name: "defaults when --eviction-hard is not given", flags: Flags{},
			want: []string{"imagefs.available<15%/0s", "memory.available<100Mi/0s", "nodefs.available<10%/0s", "nodefs.inodesFree<5%/0s"}},
		{name: "a given --eviction-hard replaces the defaults", flags: Flags{HardSet: true, Hard: "nodefs.available<1Gi"},
			want: []string{"nodefs.available<1Gi/0s"}},
		{name: "zero turns a signal off", flags: Flags{HardSet: true, Hard: "memory.available<0%,pid.available<100"},
			want: []string{"pid.available<100/0s"}},
		{name: "soft with grace", flags: Flags{HardSet: true, Soft: "memory.available<1Gi", SoftGracePeriod: "memory.available=30s"},
			want: []string{"memory.available<1Gi/30s"}},
		{name: "soft without grace", flags: Flags{HardSet: true, Soft: "memory.available<1Gi"}, wantErr: "grace period must be specified for the soft eviction threshold memory.available"},
		{name: "unknown signal", flags: Flags{HardSet: true, Hard: "swap.available<1Gi"}, wantErr: `--eviction-hard "swap.available<1Gi": unknown eviction signal "swap.available"`},
		{name: "wrong operator", flags: Flags{HardSet: true, Hard: "nodefs.available>1Gi"}, wantErr: `--eviction-hard "nodefs.available>1Gi": want SIGNAL<VALUE`},
		{name: "over 100%", flags: Flags{HardSet: true, Hard: "nodefs.available<110%"}, wantErr: "--eviction-hard nodefs.available<110%: eviction percentage threshold must be >= 0% and <= 100%, got 110%"},
		{name: "duplicate", flags: Flags{HardSet: true, Hard: "nodefs.available<1Gi,nodefs.available<2Gi"}, wantErr: "--eviction-hard: found duplicate eviction threshold for signal nodefs.available"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := ParseConfig(tc.flags)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, th := range cfg.Thresholds {
				got = append(got, th.key())
			}
			sort.Strings(got)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("thresholds %v, want %v", got, tc.want)
			}
		})
	}
}

func TestMinimumReclaimAndHardAmount(t *testing.T) {
	cfg, err := ParseConfig(Flags{HardSet: true, Hard: "memory.available<500Mi,nodefs.available<10%", MinimumReclaim: "memory.available=200Mi"})
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.HardAmount(NodeFsAvailable, 1000); got != 100 {
		t.Errorf("nodefs hard amount of 1000: %d", got)
	}
	if got := cfg.HardAmount(ImageFsAvailable, 1000); got != 0 {
		t.Errorf("imagefs without threshold: %d", got)
	}
	for _, th := range cfg.Thresholds {
		if th.Signal == MemoryAvailable && (th.MinReclaim == nil || th.MinReclaim.Of(0) != 200*mi) {
			t.Errorf("memory min reclaim %v", th.MinReclaim)
		}
	}
}

func mustConfig(t *testing.T, f Flags) Config {
	t.Helper()
	f.HardSet = true
	if f.PressureTransitionPeriod == 0 {
		f.PressureTransitionPeriod = 5 * time.Minute
	}
	cfg, err := ParseConfig(f)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestEvaluate runs passes of the manager over a sequence of
// observations: pressure, thresholds acted on, and when they stop.
func TestEvaluate(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	mem := func(avail int64) Observations {
		return Observations{MemoryAvailable: {Available: avail, Capacity: 8192 * mi}}
	}
	type pass struct {
		at       time.Duration
		obs      Observations
		pressure []v1.NodeConditionType
		act      []Signal
	}
	for _, tc := range []struct {
		name   string
		flags  Flags
		passes []pass
	}{
		{name: "hard threshold acts at once and pressure outlasts it by the transition period",
			flags: Flags{Hard: "memory.available<100Mi"},
			passes: []pass{
				{at: 0, obs: mem(200 * mi)},
				{at: 10 * time.Second, obs: mem(90 * mi), pressure: []v1.NodeConditionType{v1.NodeMemoryPressure}, act: []Signal{MemoryAvailable}},
				{at: 20 * time.Second, obs: mem(300 * mi), pressure: []v1.NodeConditionType{v1.NodeMemoryPressure}},
				{at: 20*time.Second + 5*time.Minute, obs: mem(300 * mi)},
			}},
		{name: "soft threshold raises pressure at once and acts after its grace period",
			flags: Flags{Soft: "memory.available<1Gi", SoftGracePeriod: "memory.available=1m"},
			passes: []pass{
				{at: 0, obs: mem(900 * mi), pressure: []v1.NodeConditionType{v1.NodeMemoryPressure}},
				{at: 30 * time.Second, obs: mem(900 * mi), pressure: []v1.NodeConditionType{v1.NodeMemoryPressure}},
				{at: time.Minute, obs: mem(900 * mi), pressure: []v1.NodeConditionType{v1.NodeMemoryPressure}, act: []Signal{MemoryAvailable}},
			}},
		{name: "a soft threshold that recovers within its grace period starts over",
			flags: Flags{Soft: "memory.available<1Gi", SoftGracePeriod: "memory.available=1m", PressureTransitionPeriod: time.Second},
			passes: []pass{
				{at: 0, obs: mem(900 * mi), pressure: []v1.NodeConditionType{v1.NodeMemoryPressure}},
				{at: 40 * time.Second, obs: mem(2000 * mi)},
				{at: 70 * time.Second, obs: mem(900 * mi), pressure: []v1.NodeConditionType{v1.NodeMemoryPressure}},
			}},
		{name: "minimum reclaim keeps a met threshold until that much more is free",
			flags: Flags{Hard: "memory.available<100Mi", MinimumReclaim: "memory.available=100Mi"},
			passes: []pass{
				{at: 0, obs: mem(90 * mi), pressure: []v1.NodeConditionType{v1.NodeMemoryPressure}, act: []Signal{MemoryAvailable}},
				{at: 10 * time.Second, obs: mem(150 * mi), pressure: []v1.NodeConditionType{v1.NodeMemoryPressure}, act: []Signal{MemoryAvailable}},
				{at: 20 * time.Second, obs: mem(250 * mi), pressure: []v1.NodeConditionType{v1.NodeMemoryPressure}},
			}},
		{name: "memory is reclaimed before disk, bytes before inodes",
			flags: Flags{Hard: "memory.available<100Mi,nodefs.available<10%,nodefs.inodesFree<5%,pid.available<10"},
			passes: []pass{
				{at: 0, obs: Observations{
					NodeFsInodesFree: {Available: 1, Capacity: 1000},
					NodeFsAvailable:  {Available: 1, Capacity: 1000},
					MemoryAvailable:  {Available: 1, Capacity: 1000},
					PIDAvailable:     {Available: 1, Capacity: 1000},
				}, pressure: []v1.NodeConditionType{v1.NodeDiskPressure, v1.NodeMemoryPressure, v1.NodePIDPressure},
					act: []Signal{MemoryAvailable, NodeFsAvailable, NodeFsInodesFree, PIDAvailable}},
			}},
		{name: "a signal not observed meets nothing",
			flags:  Flags{Hard: "imagefs.available<15%"},
			passes: []pass{{at: 0, obs: mem(1)}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := mustConfig(t, tc.flags)
			var st State
			for i, p := range tc.passes {
				res := Evaluate(cfg, p.obs, st, t0.Add(p.at))
				st = res.State
				var pressure []v1.NodeConditionType
				for c, on := range res.Pressure {
					if on {
						pressure = append(pressure, c)
					}
				}
				sort.Slice(pressure, func(i, j int) bool { return pressure[i] < pressure[j] })
				var act []Signal
				for _, a := range res.Act {
					act = append(act, a.Signal)
				}
				if !reflect.DeepEqual(pressure, p.pressure) || !reflect.DeepEqual(act, p.act) {
					t.Errorf("pass %d (+%v): pressure %v act %v, want %v %v", i, p.at, pressure, act, p.pressure, p.act)
				}
			}
		})
	}
}

// pod is a pod whose containers have the given memory requests and
// limits ("" for none).
func pod(name string, priority int32, reqLim ...string) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID(name)}}
	p.Spec.Priority = &priority
	for i := 0; i+1 < len(reqLim); i += 2 {
		c := v1.Container{Name: name + "-c" + string(rune('0'+i/2))}
		if reqLim[i] != "" {
			c.Resources.Requests = v1.ResourceList{v1.ResourceMemory: resource.MustParse(reqLim[i])}
		}
		if reqLim[i+1] != "" {
			c.Resources.Limits = v1.ResourceList{v1.ResourceMemory: resource.MustParse(reqLim[i+1])}
			if reqLim[i] == "" {
				c.Resources.Requests = v1.ResourceList{v1.ResourceMemory: resource.MustParse(reqLim[i+1])}
			}
		}
		p.Spec.Containers = append(p.Spec.Containers, c)
	}
	return p
}

func memUsage(byPod map[string]int64) Usage {
	u := Usage{}
	for name, n := range byPod {
		u[types.UID(name)] = PodUsage{Containers: map[string]ContainerUsage{name + "-c0": {MemoryWorkingSet: n, RootfsBytes: n / 2, LogsBytes: n / 2}}}
	}
	return u
}

func TestRank(t *testing.T) {
	bestEffort := pod("besteffort", 0, "", "")
	burstable := pod("burstable", 0, "100Mi", "")
	guaranteed := pod("guaranteed", 0, "200Mi", "200Mi")
	important := pod("important", 1000, "", "")
	noStats := pod("nostats", 0, "", "")
	for _, tc := range []struct {
		name  string
		pods  []*v1.Pod
		usage map[string]int64
		r     v1.ResourceName
		want  []string
	}{
		{name: "QoS order falls out of usage over requests", pods: []*v1.Pod{guaranteed, burstable, bestEffort},
			usage: map[string]int64{"besteffort": 80 * mi, "burstable": 150 * mi, "guaranteed": 190 * mi},
			r:     v1.ResourceMemory, want: []string{"besteffort", "burstable", "guaranteed"}},
		{name: "a pod within its request goes after those over theirs, whatever their sizes", pods: []*v1.Pod{burstable, bestEffort},
			usage: map[string]int64{"besteffort": 1 * mi, "burstable": 90 * mi},
			r:     v1.ResourceMemory, want: []string{"besteffort", "burstable"}},
		{name: "among pods over their requests, lower priority first", pods: []*v1.Pod{bestEffort, important},
			usage: map[string]int64{"besteffort": 10 * mi, "important": 500 * mi},
			r:     v1.ResourceMemory, want: []string{"besteffort", "important"}},
		{name: "same priority: most over its request first", pods: []*v1.Pod{burstable, bestEffort},
			usage: map[string]int64{"besteffort": 60 * mi, "burstable": 300 * mi},
			r:     v1.ResourceMemory, want: []string{"burstable", "besteffort"}},
		{name: "a pod without stats uses nothing", pods: []*v1.Pod{noStats, bestEffort},
			usage: map[string]int64{"besteffort": 1},
			r:     v1.ResourceMemory, want: []string{"besteffort", "nostats"}},
		{name: "disk counts writable layer and logs against ephemeral-storage requests", pods: []*v1.Pod{burstable, bestEffort},
			usage: map[string]int64{"besteffort": 2 * mi, "burstable": 400 * mi},
			r:     v1.ResourceEphemeralStorage, want: []string{"burstable", "besteffort"}},
		{name: "pids: priority alone", pods: []*v1.Pod{important, burstable, bestEffort},
			usage: map[string]int64{},
			r:     resourcePIDs, want: []string{"burstable", "besteffort", "important"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, p := range Rank(tc.pods, memUsage(tc.usage), tc.r) {
				got = append(got, p.Name)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("order %v, want %v", got, tc.want)
			}
		})
	}
}

func TestMessage(t *testing.T) {
	th := Threshold{Signal: MemoryAvailable, Value: Value{Quantity: ptrQ("100Mi")}}
	obs := Observation{Available: 90 * mi, Capacity: 8192 * mi}
	p := pod("p", 0, "", "", "100Mi", "")
	p.Spec.Containers[0].Name, p.Spec.Containers[1].Name = "c", "d"
	usage := Usage{"p": {Containers: map[string]ContainerUsage{"c": {MemoryWorkingSet: 500 * mi}, "d": {MemoryWorkingSet: 50 * mi}}}}
	want := "The node was low on resource: memory. Threshold quantity: 100Mi, available: 90Mi. Container c was using 500Mi, request is 0, has larger consumption of memory. "
	if got := Message(v1.ResourceMemory, th, obs, p, usage); got != want {
		t.Errorf("message\n%q, want\n%q", got, want)
	}
	disk := Threshold{Signal: NodeFsAvailable, Value: Value{Percentage: 0.1}}
	want = "The node was low on resource: ephemeral-storage. Threshold quantity: 1Gi, available: 512Mi. "
	if got := Message(v1.ResourceEphemeralStorage, disk, Observation{Available: 512 * mi, Capacity: 10240 * mi}, p, nil); got != want {
		t.Errorf("message\n%q, want\n%q", got, want)
	}
}

func ptrQ(s string) *resource.Quantity { q := resource.MustParse(s); return &q }

func TestAdmit(t *testing.T) {
	bestEffort := pod("be", 0, "", "")
	burstable := pod("bu", 0, "100Mi", "")
	tolerating := pod("tol", 0, "", "")
	tolerating.Spec.Tolerations = []v1.Toleration{{Key: v1.TaintNodeMemoryPressure, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule}}
	critical := pod("crit", systemCriticalPriority, "", "")
	static := pod("static", 0, "", "")
	static.Annotations = map[string]string{"kubernetes.io/config.source": "file"}
	memory := map[v1.NodeConditionType]bool{v1.NodeMemoryPressure: true}
	disk := map[v1.NodeConditionType]bool{v1.NodeDiskPressure: true, v1.NodeMemoryPressure: false}
	both := map[v1.NodeConditionType]bool{v1.NodeDiskPressure: true, v1.NodeMemoryPressure: true}
	for _, tc := range []struct {
		pod      *v1.Pod
		pressure map[v1.NodeConditionType]bool
		msg      string // "" admits
	}{
		{bestEffort, nil, ""},
		{bestEffort, memory, "The node had condition: [MemoryPressure]. "},
		{burstable, memory, ""},
		{tolerating, memory, ""},
		{critical, memory, ""},
		{burstable, disk, "The node had condition: [DiskPressure]. "},
		{bestEffort, both, "The node had condition: [MemoryPressure DiskPressure]. "},
		{static, both, ""},
	} {
		ok, msg := Admit(tc.pod, tc.pressure)
		if ok != (tc.msg == "") || msg != tc.msg {
			t.Errorf("%s under %v: admitted %v %q, want %q", tc.pod.Name, tc.pressure, ok, msg, tc.msg)
		}
	}
}
