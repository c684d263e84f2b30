package simnode

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/orca-project/orca/internal/version"
)

// Options configure a Simulator.
type Options struct {
	Client kubernetes.Interface
	// Nodes is how many nodes to simulate, named Prefix0, Prefix1, ...
	Nodes  int
	Prefix string
	// Labels and Taints are added to every node (tests keep other pods
	// off simulated nodes with a taint).
	Labels map[string]string
	Taints []v1.Taint
	// Workers work the pod queue (8 when zero); HeartbeatWidth goroutines
	// send the nodes' registrations, lease renewals and status updates.
	Workers int
	Log     *slog.Logger

	// LeaseDuration (40 s) and RenewInterval (10 s) are the kubelet's
	// node lease settings; StatusFrequency (10 s) is how often a node's
	// status is computed and ReportFrequency (5 min) how often an
	// unchanged one is sent anyway.
	LeaseDuration, RenewInterval     time.Duration
	StatusFrequency, ReportFrequency time.Duration
}

func (o *Options) defaults() error {
	if o.Client == nil {
		return errors.New("simnode: no client")
	}
	if o.Nodes <= 0 {
		return fmt.Errorf("simnode: %d nodes: want at least one", o.Nodes)
	}
	if o.Prefix == "" {
		o.Prefix = "sim-"
	}
	if o.Workers <= 0 {
		o.Workers = 8
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.LeaseDuration <= 0 {
		o.LeaseDuration = 40 * time.Second
	}
	if o.RenewInterval <= 0 {
		o.RenewInterval = 10 * time.Second
	}
	if o.StatusFrequency <= 0 {
		o.StatusFrequency = 10 * time.Second
	}
	if o.ReportFrequency <= 0 {
		o.ReportFrequency = 5 * time.Minute
	}
	return nil
}

// RuntimeVersion is the container runtime simulated nodes report.
func RuntimeVersion() string { return "simulated://orca-" + version.Orca }

// Counts are the API writes a Simulator made.
type Counts struct {
	LeaseRenewals, NodeStatuses, PodStatuses, PodDeletions int64
}

// Simulator runs simulated nodes and their pods.
type Simulator struct {
	opts   Options
	nodes  []*simNode
	byName map[string]*simNode

	leases, nodeStatuses, podStatuses, podDeletions atomic.Int64
}

// New returns a Simulator; Run starts it.
func New(opts Options) (*Simulator, error) {
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	s := &Simulator{opts: opts, byName: map[string]*simNode{}}
	kubelet := version.KubernetesGitVersion()
	for i := range opts.Nodes {
		n := &simNode{index: i, profile: NodeProfile(opts.Prefix, i, kubelet, RuntimeVersion(), opts.Labels, opts.Taints)}
		s.nodes = append(s.nodes, n)
		s.byName[n.profile.Spec.Name] = n
	}
	return s, nil
}

// Counts returns the writes made so far.
func (s *Simulator) Counts() Counts {
	return Counts{LeaseRenewals: s.leases.Load(), NodeStatuses: s.nodeStatuses.Load(),
		PodStatuses: s.podStatuses.Load(), PodDeletions: s.podDeletions.Load()}
}

// NodeNames are the simulated nodes' names.
func (s *Simulator) NodeNames() []string {
	out := make([]string, len(s.nodes))
	for i, n := range s.nodes {
		out[i] = n.profile.Spec.Name
	}
	return out
}

// Run registers the nodes (adopting those that exist), then keeps them
// and their pods going until ctx ends. The nodes are left registered: a
// stopped simulator's nodes go NotReady as a stopped kubelet's do.
func (s *Simulator) Run(ctx context.Context) error {
	nodes, err := s.startNodes(ctx)
	if err != nil {
		return err
	}
	pods, err := s.startPods(ctx, nodes)
	if err != nil {
		return err
	}
	s.opts.Log.Info("simulated nodes running", "nodes", len(s.nodes), "prefix", s.opts.Prefix)
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { defer wg.Done(); s.runHeartbeats(ctx, nodes) }()
	go func() { defer wg.Done(); pods.run(ctx, s.opts.Workers) }()
	go func() { defer wg.Done(); s.logRates(ctx, time.Minute) }()
	wg.Wait()
	return nil
}

// logRates logs the writes of each period, so that a scale trial can
// read the simulator's own share of the API server's load.
func (s *Simulator) logRates(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	last := s.Counts()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		c := s.Counts()
		per := func(a, b int64) string { return fmt.Sprintf("%.1f/s", float64(a-b)/every.Seconds()) }
		s.opts.Log.Info("simulated node writes", "leases", per(c.LeaseRenewals, last.LeaseRenewals),
			"nodeStatuses", per(c.NodeStatuses, last.NodeStatuses), "podStatuses", per(c.PodStatuses, last.PodStatuses),
			"podDeletions", per(c.PodDeletions, last.PodDeletions))
		last = c
	}
}

// ours reports whether a node name is one of this simulator's.
func (s *Simulator) ours(name string) bool {
	if !strings.HasPrefix(name, s.opts.Prefix) {
		return false
	}
	_, ok := s.byName[name]
	return ok
}
