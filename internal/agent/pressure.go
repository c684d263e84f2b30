package agent

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/spf13/pflag"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"

	"github.com/orca-project/orca/internal/agent/supervisor"
	"github.com/orca-project/orca/internal/cri"
	"github.com/orca-project/orca/internal/imagebuild"
	"github.com/orca-project/orca/internal/kubelet"
	"github.com/orca-project/orca/internal/kubelet/eviction"
	"github.com/orca-project/orca/internal/kubelet/imagegc"
	"github.com/orca-project/orca/internal/kubelet/logrotate"
	"github.com/orca-project/orca/internal/kubelet/stats"
)

// PressureFlags are upstream's kubelet flags for a node under pressure:
// eviction, image garbage collection and container log rotation.
type PressureFlags struct {
	fs       *pflag.FlagSet
	eviction eviction.Flags
	imageGC  imagegc.Policy
	logSize  string
	logFiles int
}

// Register adds the flags, with upstream's defaults.
func (f *PressureFlags) Register(fs *pflag.FlagSet) {
	f.fs = fs
	fs.StringVar(&f.eviction.Hard, "eviction-hard", eviction.DefaultHard, "hard eviction thresholds, upstream's syntax: less free than this is node pressure, and a pod is evicted at once; naming some signals leaves the others unwatched (a zero value turns one off)")
	fs.StringVar(&f.eviction.Soft, "eviction-soft", "", "soft eviction thresholds (e.g. memory.available<1.5Gi): pressure at once, evictions once the signal's --eviction-soft-grace-period has passed")
	fs.StringVar(&f.eviction.SoftGracePeriod, "eviction-soft-grace-period", "", "grace periods of the soft eviction thresholds (e.g. memory.available=1m30s)")
	fs.Int64Var(&f.eviction.MaxPodGracePeriod, "eviction-max-pod-grace-period", 0, "most seconds a pod evicted for a soft threshold is given to stop")
	fs.StringVar(&f.eviction.MinimumReclaim, "eviction-minimum-reclaim", "", "how much more than its threshold a signal must reach before its pressure ends (e.g. imagefs.available=2Gi)")
	fs.DurationVar(&f.eviction.PressureTransitionPeriod, "eviction-pressure-transition-period", eviction.DefaultPressureTransitionPeriod, "how long a pressure condition stays after its thresholds stop being met")
	def := imagegc.DefaultPolicy()
	fs.IntVar(&f.imageGC.HighThresholdPercent, "image-gc-high-threshold", def.HighThresholdPercent, "disk usage percent of the image file system that starts image garbage collection")
	fs.IntVar(&f.imageGC.LowThresholdPercent, "image-gc-low-threshold", def.LowThresholdPercent, "disk usage percent image garbage collection frees down to")
	fs.DurationVar(&f.imageGC.MinAge, "image-minimum-gc-age", def.MinAge, "minimum age of an unused image before it is garbage collected")
	fs.StringVar(&f.logSize, "container-log-max-size", "10Mi", "size at which a container's log is rotated")
	fs.IntVar(&f.logFiles, "container-log-max-files", logrotate.DefaultPolicy().MaxFiles, "most log files kept per container, the current one included")
}

// Apply puts the flags' values into the options; flags never registered
// leave upstream's defaults.
func (f *PressureFlags) Apply(o *Options) error {
	if f.fs == nil {
		return nil
	}
	ef := f.eviction
	ef.HardSet = f.fs.Changed("eviction-hard")
	cfg, err := eviction.ParseConfig(ef)
	if err != nil {
		return err
	}
	o.Eviction = &cfg
	if f.imageGC.LowThresholdPercent > f.imageGC.HighThresholdPercent || f.imageGC.HighThresholdPercent > 100 || f.imageGC.LowThresholdPercent < 0 {
		return fmt.Errorf("invalid --image-gc-high-threshold %d / --image-gc-low-threshold %d: want 0 <= low <= high <= 100", f.imageGC.HighThresholdPercent, f.imageGC.LowThresholdPercent)
	}
	o.ImageGC = &f.imageGC
	q, err := resource.ParseQuantity(f.logSize)
	if err != nil || q.Value() <= 0 {
		return fmt.Errorf("invalid --container-log-max-size %q: want a positive quantity such as 10Mi", f.logSize)
	}
	if f.logFiles < 2 {
		return fmt.Errorf("invalid --container-log-max-files %d: must be at least 2", f.logFiles)
	}
	o.LogRotation = &logrotate.Policy{MaxSize: q.Value(), MaxFiles: f.logFiles}
	return nil
}

// pressure is the node's eviction manager, image collector and log
// rotation.
type pressure struct {
	evictions *eviction.Manager
	images    *imagegc.Manager
	logs      *logrotate.Manager
}

// newPressure builds them; the eviction manager gets its pods and stats
// once the kubelet exists (attach).
func newPressure(o Options, d Dirs, rt *cri.Client, recorder record.EventRecorder, log *slog.Logger) *pressure {
	node := &v1.ObjectReference{Kind: "Node", Name: o.NodeName, UID: types.UID(o.NodeName)}
	cfg := o.Eviction
	if cfg == nil {
		c, _ := eviction.ParseConfig(eviction.Flags{PressureTransitionPeriod: eviction.DefaultPressureTransitionPeriod})
		cfg = &c
	}
	gcPolicy := imagegc.DefaultPolicy()
	if o.ImageGC != nil {
		gcPolicy = *o.ImageGC
	}
	logPolicy := logrotate.DefaultPolicy()
	if o.LogRotation != nil {
		logPolicy = *o.LogRotation
	}
	p := &pressure{
		images: &imagegc.Manager{Runtime: rt, Policy: gcPolicy, SandboxImage: imagebuild.PauseRef, ImageFs: d.Containerd,
			Recorder: recorder, Node: node, Log: log},
		logs: &logrotate.Manager{Runtime: rt, Policy: logPolicy, Log: log},
	}
	p.evictions = &eviction.Manager{Config: *cfg, Recorder: recorder, Node: node, Log: log}
	return p
}

// attach gives the eviction manager the kubelet's pods and dead
// containers, and the summaries of its stats collector, nil when the
// kubelet does not sample (then no signal is watched).
func (p *pressure) attach(k *kubelet.Kubelet, collector *stats.Collector) {
	p.evictions.Pods = k
	p.evictions.Reclaimer = reclaimer{k, p.images}
	if collector != nil {
		p.evictions.Stats = collector
	}
}

// start runs the three loops in g's tier.
func (p *pressure) start(g *supervisor.Group, tier int) {
	for name, run := range map[string]func(context.Context){
		"image garbage collection": p.images.Run,
		"container log rotation":   p.logs.Run,
		"eviction manager":         p.evictions.Run,
	} {
		g.Go(tier, name, func(ctx context.Context) error {
			run(ctx)
			return nil
		})
	}
}

// reclaimer is what the node frees before evicting pods.
type reclaimer struct {
	k      *kubelet.Kubelet
	images *imagegc.Manager
}

func (r reclaimer) DeleteAllUnusedContainers(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return r.k.DeleteAllUnusedContainers(ctx)
}

func (r reclaimer) DeleteUnusedImages(ctx context.Context) error {
	return r.images.DeleteUnusedImages(ctx)
}

// cgroupMount is where the host's cgroups are.
const cgroupMount = "/sys/fs/cgroup"
