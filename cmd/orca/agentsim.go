package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/spf13/pflag"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/orca-project/orca/internal/agent"
	"github.com/orca-project/orca/internal/simnode"
)

// simulateFlags are `orca agent --simulate`'s: many SIMULATED nodes from
// one process, for scale trials; no containerd, CNI or proxy runs.
type simulateFlags struct {
	nodes   int
	prefix  string
	qps     float32
	burst   int
	workers int
}

func (s *simulateFlags) register(f *pflag.FlagSet) {
	f.IntVar(&s.nodes, "simulate", 0, "run this many SIMULATED nodes instead of a real one (scale trials: no containers; needs --kubeconfig)")
	f.StringVar(&s.prefix, "simulate-prefix", "sim-", "name prefix of the simulated nodes (PREFIX0, PREFIX1, ...)")
	f.Float32Var(&s.qps, "simulate-qps", 1000, "queries per second the simulated nodes' client may make")
	f.IntVar(&s.burst, "simulate-burst", 2000, "burst of the simulated nodes' client")
	f.IntVar(&s.workers, "simulate-workers", 8, "goroutines sending pod updates; node heartbeats get one per 20 nodes, at least as many")
}

// run runs the simulated nodes until ctx ends. Labels and taints given by
// --node-label and --node-taint go on every simulated node.
func (s *simulateFlags) run(ctx context.Context, kubeconfig string, o agent.Options, log *slog.Logger) error {
	if kubeconfig == "" {
		return fmt.Errorf("--simulate needs --kubeconfig (simulated nodes do not join with a token)")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fmt.Errorf("load kubeconfig: %w", err)
	}
	cfg.QPS, cfg.Burst = s.qps, s.burst
	cfg.UserAgent = "orca-agent-simulated"
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	sim, err := simnode.New(simnode.Options{
		Client: client, Nodes: s.nodes, Prefix: s.prefix, Labels: o.Labels, Taints: o.Taints,
		Workers: s.workers, Log: log,
	})
	if err != nil {
		return err
	}
	return sim.Run(ctx)
}
