package main

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/orca-project/orca/internal/scheduler"
)

func newSchedulerCommand() *cobra.Command {
	var (
		kubeconfig, address, logLevel   string
		configFile                      string
		qps                             float32
		burst, percentage, explanations int
		leaderElect, noPreemption       bool
	)
	cmd := &cobra.Command{
		Use:   "scheduler",
		Short: "Run the default-scheduler against an API server",
		Long: "Run the scheduler against the API server named in --kubeconfig. Any number may run: " +
			"they elect one leader through the kube-system/kube-scheduler Lease.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log := newLogger(logLevel)
			sc, err := loadSchedulerConfig(configFile)
			if err != nil {
				return err
			}
			cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
			if err != nil {
				return fmt.Errorf("load kubeconfig %s: %w", kubeconfig, err)
			}
			cfg.QPS, cfg.Burst = qps, burst
			cfg.UserAgent = "orca-scheduler"
			client, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				return fmt.Errorf("scheduler client: %w", err)
			}
			reg := newComponentRegistry()
			s, err := scheduler.New(scheduler.Config{
				Client: client, Log: log, Metrics: reg, Configuration: sc,
				PercentageOfNodesToScore: percentage, DisablePreemption: noPreemption, LeaderElection: leaderElect,
				Explanations: explanations,
			})
			if err != nil {
				return err
			}
			return runStandalone("scheduler", address, log, s.Handler(reg), s.Run)
		},
	}
	f := cmd.Flags()
	f.StringVar(&configFile, "config", "", "the scheduler's configuration file (kubescheduler.config.k8s.io/v1 KubeSchedulerConfiguration); its profiles, plugins and percentageOfNodesToScore replace --percentage-of-nodes-to-score, and leaderElection.leaderElect false or --leader-elect=false turns the Lease off")
	f.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig naming the API server and the credentials to use")
	f.StringVar(&address, "bind-address", "127.0.0.1:10259", "address serving /healthz, /readyz and /metrics")
	f.Float32Var(&qps, "kube-api-qps", 1000, "queries per second to the API server (binds, status updates, events)")
	f.IntVar(&burst, "kube-api-burst", 2000, "burst of queries to the API server")
	f.IntVar(&percentage, "percentage-of-nodes-to-score", 0, "percentage of nodes to find feasible before scoring; 0 adapts to the cluster size as upstream does")
	f.BoolVar(&leaderElect, "leader-elect", true, "elect a leader through the kube-system/kube-scheduler Lease before scheduling")
	f.BoolVar(&noPreemption, "disable-preemption", false, "never evict lower-priority pods to place a pod")
	f.IntVar(&explanations, "explanations", scheduler.DefaultExplanations, "how many pods' scheduling explanations to keep in memory (0: none)")
	f.StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn, error")
	_ = cmd.MarkFlagRequired("kubeconfig")
	return cmd
}
