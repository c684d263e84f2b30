// Package eviction is the kubelet's eviction manager, as upstream's
// pkg/kubelet/eviction: every monitoring interval it observes the node's
// eviction signals (memory.available, nodefs/imagefs available bytes and
// free inodes, pid.available), decides which thresholds are met (hard at
// once, soft after their grace period, either until its minimum reclaim is
// back), reports the pressure conditions the Node shows, reclaims what the
// node itself holds (dead containers, unused images) and, when that is not
// enough, evicts one pod, chosen by upstream's ranking.
//
// The decisions are pure functions over plain data (Evaluate, Rank,
// Message, Admit); Manager is the thin loop that feeds them observations
// and carries out what they return.
package eviction

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Signal is an eviction signal, named as upstream's flags name it.
type Signal string

// The signals Orca's kubelet observes.
const (
	MemoryAvailable   Signal = "memory.available"
	NodeFsAvailable   Signal = "nodefs.available"
	NodeFsInodesFree  Signal = "nodefs.inodesFree"
	ImageFsAvailable  Signal = "imagefs.available"
	ImageFsInodesFree Signal = "imagefs.inodesFree"
	PIDAvailable      Signal = "pid.available"
)

// Resources reclaimed for the signals; inodes and pids are the
// manager's own names, as upstream's.
const (
	resourceInodes v1.ResourceName = "inodes"
	resourcePIDs   v1.ResourceName = "pids"
)

// signals describes each signal: the node condition it raises and the
// resource its evictions reclaim.
var signals = map[Signal]struct {
	condition v1.NodeConditionType
	resource  v1.ResourceName
}{
	MemoryAvailable:   {v1.NodeMemoryPressure, v1.ResourceMemory},
	NodeFsAvailable:   {v1.NodeDiskPressure, v1.ResourceEphemeralStorage},
	NodeFsInodesFree:  {v1.NodeDiskPressure, resourceInodes},
	ImageFsAvailable:  {v1.NodeDiskPressure, v1.ResourceEphemeralStorage},
	ImageFsInodesFree: {v1.NodeDiskPressure, resourceInodes},
	PIDAvailable:      {v1.NodePIDPressure, resourcePIDs},
}

// Value is an amount or a share of capacity.
type Value struct {
	Quantity *resource.Quantity
	// Percentage is a fraction of capacity, 0.1 for 10%.
	Percentage float64
}

// Of is the amount a value stands for at a capacity.
func (v Value) Of(capacity int64) int64 {
	if v.Quantity != nil {
		return v.Quantity.Value()
	}
	return int64(float64(capacity) * float64(v.Percentage))
}

func (v Value) String() string {
	if v.Quantity != nil {
		return v.Quantity.String()
	}
	return strconv.FormatFloat(v.Percentage*100, 'f', -1, 64) + "%"
}

// Threshold is met when a signal's available amount is below Value.
type Threshold struct {
	Signal Signal
	Value  Value
	// GracePeriod is how long a soft threshold must stay met before it
	// acts; zero makes the threshold hard.
	GracePeriod time.Duration
	// MinReclaim keeps a met threshold met until this much more than
	// Value is available again.
	MinReclaim *Value
}

// Hard reports whether the threshold acts as soon as it is met.
func (t Threshold) Hard() bool { return t.GracePeriod == 0 }

func (t Threshold) key() string {
	return fmt.Sprintf("%s<%s/%s", t.Signal, t.Value, t.GracePeriod)
}

// Config is the manager's configuration, from upstream's flags.
type Config struct {
	Thresholds []Threshold
	// MaxPodGracePeriod caps the grace period of pods evicted for a soft
	// threshold, in seconds (--eviction-max-pod-grace-period).
	MaxPodGracePeriod int64
	// PressureTransitionPeriod is how long a pressure condition stays
	// after its thresholds stop being met.
	PressureTransitionPeriod time.Duration
}

// DefaultHard are upstream's default hard thresholds, which apply only
// when --eviction-hard is not given at all.
const DefaultHard = "memory.available<100Mi,nodefs.available<10%,imagefs.available<15%,nodefs.inodesFree<5%"

// DefaultPressureTransitionPeriod is upstream's
// --eviction-pressure-transition-period.
const DefaultPressureTransitionPeriod = 5 * time.Minute

// Flags are upstream's eviction flags as given.
type Flags struct {
	Hard, Soft, SoftGracePeriod, MinimumReclaim string
	// HardSet tells an empty --eviction-hard (no hard thresholds) from
	// one not given (upstream's defaults).
	HardSet                  bool
	MaxPodGracePeriod        int64
	PressureTransitionPeriod time.Duration
}

// ParseConfig reads upstream's eviction flags. As upstream, the default
// hard thresholds apply only when --eviction-hard is not given: naming
// some signals leaves the others unwatched.
func ParseConfig(f Flags) (Config, error) {
	cfg := Config{MaxPodGracePeriod: f.MaxPodGracePeriod, PressureTransitionPeriod: f.PressureTransitionPeriod}
	hardSpec := f.Hard
	if !f.HardSet {
		hardSpec = DefaultHard
	}
	hard, err := parseStatements(hardSpec, "--eviction-hard")
	if err != nil {
		return cfg, err
	}
	soft, err := parseStatements(f.Soft, "--eviction-soft")
	if err != nil {
		return cfg, err
	}
	graces, err := parseMap(f.SoftGracePeriod, "=", "--eviction-soft-grace-period")
	if err != nil {
		return cfg, err
	}
	reclaims, err := parseMap(f.MinimumReclaim, "=", "--eviction-minimum-reclaim")
	if err != nil {
		return cfg, err
	}
	for i := range soft {
		g, ok := graces[soft[i].Signal]
		if !ok {
			return cfg, fmt.Errorf("grace period must be specified for the soft eviction threshold %v", soft[i].Signal)
		}
		d, err := time.ParseDuration(g)
		if err != nil || d <= 0 {
			return cfg, fmt.Errorf("--eviction-soft-grace-period %s=%s: want a positive duration", soft[i].Signal, g)
		}
		soft[i].GracePeriod = d
	}
	cfg.Thresholds = append(hard, soft...)
	for s, r := range reclaims {
		v, err := parseValue(r)
		if err != nil {
			return cfg, fmt.Errorf("--eviction-minimum-reclaim %s=%s: %w", s, r, err)
		}
		for i := range cfg.Thresholds {
			if cfg.Thresholds[i].Signal == s {
				cfg.Thresholds[i].MinReclaim = &v
			}
		}
	}
	return cfg, nil
}

// parseStatements reads "signal<value,...".
func parseStatements(s, flag string) ([]Threshold, error) {
	m, err := parseMap(s, "<", flag)
	if err != nil {
		return nil, err
	}
	var out []Threshold
	for sig, val := range m {
		v, err := parseValue(val)
		if err != nil {
			return nil, fmt.Errorf("%s %s<%s: %w", flag, sig, val, err)
		}
		if v.Of(1<<62) == 0 {
			// A zero threshold turns the signal off, as upstream's.
			continue
		}
		out = append(out, Threshold{Signal: sig, Value: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Signal < out[j].Signal })
	return out, nil
}

// parseMap reads "signal<sep>value,..." with known signals only.
func parseMap(s, sep, flag string) (map[Signal]string, error) {
	out := map[Signal]string{}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		k, v, ok := strings.Cut(item, sep)
		if !ok {
			return nil, fmt.Errorf("%s %q: want SIGNAL%sVALUE", flag, item, sep)
		}
		sig := Signal(strings.TrimSpace(k))
		if _, known := signals[sig]; !known {
			return nil, fmt.Errorf("%s %q: unknown eviction signal %q", flag, item, sig)
		}
		if _, dup := out[sig]; dup {
			return nil, fmt.Errorf("%s: found duplicate eviction threshold for signal %v", flag, sig)
		}
		out[sig] = strings.TrimSpace(v)
	}
	return out, nil
}

// parseValue reads a quantity or a percentage, as upstream's
// parseThresholdStatement.
func parseValue(s string) (Value, error) {
	if p, ok := strings.CutSuffix(s, "%"); ok {
		f, err := strconv.ParseFloat(p, 64)
		if err != nil {
			return Value{}, fmt.Errorf("invalid percentage %q", s)
		}
		if f < 0 || f > 100 {
			return Value{}, fmt.Errorf("eviction percentage threshold must be >= 0%% and <= 100%%, got %s", s)
		}
		return Value{Percentage: f / 100}, nil
	}
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return Value{}, fmt.Errorf("%q is neither a quantity nor a percentage", s)
	}
	if q.Sign() < 0 {
		return Value{}, fmt.Errorf("eviction threshold must be positive: %s", s)
	}
	return Value{Quantity: &q}, nil
}

// HardAmount is what the hard threshold of a signal holds back at a
// capacity (0 without one), which allocatable leaves out.
func (c Config) HardAmount(s Signal, capacity int64) int64 {
	for _, t := range c.Thresholds {
		if t.Signal == s && t.Hard() {
			return t.Value.Of(capacity)
		}
	}
	return 0
}
