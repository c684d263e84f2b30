package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/orca-project/orca/internal/memtrim"
	"github.com/orca-project/orca/internal/scheduler"
	"github.com/orca-project/orca/internal/server"
)

func newServerCommand() *cobra.Command {
	opts := server.Options{}
	var (
		logLevel     string
		disableAgent bool
		node         agentFlags
		snapshots    etcdSnapshotServerFlags

		serverToken, serverTokenFile string
		remove                       bool
		schedulerConfig              string
	)
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Run a control plane: etcd, the API server and the controllers",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Log = newLogger(logLevel)
			opts.ClusterDomain = node.opts.ClusterDomain
			opts.Out = cmd.OutOrStdout()
			if done, err := snapshots.run(cmd.Context(), opts); done {
				return err
			}
			if remove {
				quietGRPC()
				return server.RemoveMember(cmd.Context(), opts)
			}
			opts.TerminatedPodGCThreshold = podGCThreshold(opts.TerminatedPodGCThreshold)
			sc, err := loadSchedulerConfig(schedulerConfig)
			if err != nil {
				return err
			}
			opts.SchedulerConfig = sc
			if opts.JoinServer != "" {
				tok, err := joinToken(serverToken, serverTokenFile)
				if err != nil {
					return err
				}
				if tok == "" {
					return fmt.Errorf("--server needs the cluster's server token: --token or --token-file (DATA_DIR/%s on a running server)", server.ServerTokenFile)
				}
				opts.JoinToken = tok
			}
			if !disableAgent {
				a, err := node.complete()
				if err != nil {
					return err
				}
				opts.Agent = &a
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			inst, err := server.Start(ctx, opts)
			if err != nil {
				return err
			}
			go trimAfterStartup(ctx, opts.Log)
			if disableAgent {
				fmt.Fprintln(opts.Out, "orca: running without a node agent (--disable-agent)")
			}
			fmt.Fprintf(opts.Out, "orca: cluster is up. Use it with: orca kubectl get ns   (kubeconfig: %s)\n", inst.Kubeconfig)
			return inst.Wait()
		},
	}
	cmd.AddCommand(newServerStatusCommand())
	f := cmd.Flags()
	f.StringVar(&opts.DataDir, "data-dir", defaultDataDir(), "directory for etcd data, certificates and the admin kubeconfig")
	f.StringVar(&opts.BindAddress, "bind-address", "0.0.0.0", "address the API server listens on")
	f.IntVar(&opts.Port, "https-listen-port", 6443, "port the API server listens on")
	f.StringVar(&opts.AdvertiseAddress, "advertise-address", "", "address pods and other nodes reach the API server at: the kubernetes service's endpoint, also named in the serving certificate (this node's IP when empty; never loopback unless --bind-address is)")
	f.StringSliceVar(&opts.ExtraSANs, "tls-san", nil, "additional names or IPs for the API server's certificate")
	f.StringSliceVar(&opts.EtcdEndpoints, "etcd-endpoints", nil, "use an external etcd cluster at these endpoints instead of the embedded member")
	f.StringVar(&opts.EtcdCAFile, "etcd-cafile", "", "CA bundle to verify the external etcd's certificates")
	f.StringVar(&opts.EtcdCertFile, "etcd-certfile", "", "client certificate for the external etcd")
	f.StringVar(&opts.EtcdKeyFile, "etcd-keyfile", "", "client key for the external etcd")
	f.StringVar(&opts.EtcdClientURL, "etcd-listen-client-url", "", "URL the embedded etcd serves clients on (overrides --etcd-client-port)")
	f.StringVar(&opts.EtcdPeerURL, "etcd-listen-peer-url", "", "URL the embedded etcd serves peers on (overrides --etcd-peer-port)")
	f.IntVar(&opts.EtcdPeerPort, "etcd-peer-port", 2380, "port the embedded etcd serves its peers on, on the advertise address with TLS, so that other servers can join (0: a unix socket in the data dir, and no server can join)")
	f.IntVar(&opts.EtcdClientPort, "etcd-client-port", 2379, "port the embedded etcd serves clients on, on the advertise address with TLS (0: a unix socket in the data dir)")
	f.StringVar(&opts.JoinServer, "server", "", "join the cluster of the server at this URL (https://HOST:6443) as another server")
	f.StringVar(&serverToken, "token", "", "the cluster's server token, to join with --server (DATA_DIR/server-token on a running server)")
	f.StringVar(&serverTokenFile, "token-file", "", "file holding the server token")
	f.BoolVar(&remove, "remove", false, "take this (stopped) server's etcd member out of its cluster, through the other members, move its etcd data aside, and exit")
	snapshots.register(f, &opts)
	f.StringVar(&opts.ClusterCIDR, "cluster-cidr", server.DefaultClusterCIDR, "IPv4 range node pod CIDRs (a /24 each) are assigned from")
	f.StringVar(&opts.ServiceCIDR, "service-cidr", server.DefaultServiceCIDR, "IPv4 range service cluster IPs are allocated from")
	f.StringVar(&opts.ServiceNodePortRange, "service-node-port-range", server.DefaultServiceNodePortRange, "port range NodePort and LoadBalancer services get node ports from")
	f.StringVar(&opts.ServiceAccountIssuer, "service-account-issuer", "", "issuer (\"iss\") of service-account tokens; https://kubernetes.default.svc.cluster.local when empty")
	f.IntVar(&opts.ClusterDNSPort, "cluster-dns-port", server.DefaultClusterDNSPort, "port (UDP and TCP, on --bind-address) of the cluster DNS server behind the kube-dns service; -1 turns it off")
	f.StringSliceVar(&opts.DNSUpstreams, "dns-upstream", nil, "resolvers (host[:port]) that names outside the cluster domain are forwarded to; without any they get SERVFAIL")
	opts.NodeLifecycle.AddFlags(f)
	f.IntVar(&opts.TerminatedPodGCThreshold, "terminated-pod-gc-threshold", server.DefaultTerminatedPodGCThreshold, "finished pods kept before the oldest are deleted (0 keeps all)")
	f.StringVar(&opts.LoadBalancerPool, "loadbalancer-pool", "", "addresses for LoadBalancer services, one each (CIDR or FIRST-LAST); the Ready nodes' InternalIPs when empty")
	f.StringSliceVar(&opts.AuthorizationModes, "authorization-mode", server.DefaultAuthorizationModes, "ordered authorizers: AlwaysAllow, AlwaysDeny, Node, RBAC (members of system:masters are always allowed)")
	f.BoolVar(&opts.AnonymousAuth, "anonymous-auth", true, "serve requests without credentials as system:anonymous (authorization then allows only health and version)")
	f.StringVar(&opts.EncryptionProviderConfig, "encryption-provider-config", "", "upstream EncryptionConfiguration file (apiserver.config.k8s.io/v1) for encryption at rest; without it the server encrypts Secrets with a key it generates (DATA_DIR/tls/encryption-config.yaml)")
	f.StringVar(&opts.AdmissionControlConfigFile, "admission-control-config-file", "", "upstream AdmissionConfiguration file (apiserver.config.k8s.io/v1); its PodSecurity entry (pod-security.admission.config.k8s.io/v1 PodSecurityConfiguration) sets the default Pod Security levels and exemptions")
	f.BoolVar(&disableAgent, "disable-agent", false, "do not run a node agent in this process")
	node.register(f, false)
	f.BoolVar(&opts.DisableControllerManager, "disable-controller-manager", false, "do not run the controllers in this process (run orca controller-manager instead)")
	f.BoolVar(&opts.DisableScheduler, "disable-scheduler", false, "do not run the scheduler in this process (run orca scheduler instead)")
	f.StringVar(&schedulerConfig, "scheduler-config", "", "the scheduler's configuration file (kubescheduler.config.k8s.io/v1 KubeSchedulerConfiguration: profiles, plugins, weights, percentageOfNodesToScore); without it the default profile")
	f.IntVar(&opts.SchedulerExplanations, "scheduler-explanations", scheduler.DefaultExplanations, "how many pods' scheduling explanations the scheduler keeps in memory for `orca explain` (0: none; a pod annotated scheduler.orca.io/explain still gets its own)")
	f.BoolVar(&opts.DisableGatewayAPI, "disable-gateway-api", false, "do not install the Gateway API's CRDs and Orca's GatewayClass")
	f.BoolVar(&opts.DisableConsole, "disable-console", false, "do not serve the web console under /ui/")
	f.BoolVar(&opts.DisableMetrics, "disable-metrics", false, "do not serve the resource metrics API (metrics.k8s.io, `kubectl top`) nor scrape the kubelets for it")
	f.DurationVar(&opts.MetricResolution, "metric-resolution", 15*time.Second, "how often the kubelets are scraped for the resource metrics API")
	f.BoolVar(&opts.DisableLocalStorage, "disable-local-storage", false, "do not create the local-path StorageClass (the cluster's default class, volumes in a directory of the node a pod runs on)")
	f.StringVar(&opts.AuditPolicyFile, "audit-policy-file", "", "path to the file that defines the audit policy configuration (audit.k8s.io/v1 Policy); without it nothing is audited")
	f.StringVar(&opts.AuditLog.Path, "audit-log-path", "", "if set, audited requests are logged to this file, one JSON event per line; '-' means standard out")
	f.IntVar(&opts.AuditLog.MaxAgeDays, "audit-log-maxage", 366, "the maximum number of days to retain old audit log files based on the timestamp encoded in their filename; 0 keeps them regardless of age")
	f.IntVar(&opts.AuditLog.MaxBackups, "audit-log-maxbackup", 100, "the maximum number of old audit log files to retain; 0 keeps all")
	f.IntVar(&opts.AuditLog.MaxSizeMB, "audit-log-maxsize", 100, "the maximum size in megabytes of the audit log file before it gets rotated; 0 disables rotation")
	f.IntVar(&opts.MaxRequestsInFlight, "max-requests-inflight", 400, "the maximum number of non-mutating requests in flight at a given time; beyond it the server answers 429; 0 disables the limit. With priority and fairness, this and --max-mutating-requests-inflight add up to the server's total concurrency limit")
	f.IntVar(&opts.MaxMutatingRequestsInFlight, "max-mutating-requests-inflight", 200, "the maximum number of mutating requests in flight at a given time; beyond it the server answers 429; 0 disables the limit. With priority and fairness, this and --max-requests-inflight add up to the server's total concurrency limit")
	f.BoolVar(&opts.EnablePriorityAndFairness, "enable-priority-and-fairness", true, "if true, replace the max-in-flight handler with an enhanced one that queues and dispatches with priority and fairness")
	f.StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn, error")
	return cmd
}

// trimAfterStartup hands back memory that only start-up needed, once the
// controllers and the scheduler have elected their leaders and synced their
// caches (a few seconds), and once more after a minute.
func trimAfterStartup(ctx context.Context, log *slog.Logger) {
	for _, d := range []time.Duration{15 * time.Second, 45 * time.Second} {
		select {
		case <-ctx.Done():
			return
		case <-time.After(d):
		}
		debug.FreeOSMemory()
		if n, err := memtrim.ReleaseExecutablePages(); err != nil {
			log.Warn("could not release start-up pages", "err", err)
			return
		} else {
			log.Debug("released start-up pages of the executable", "mappedBytes", n)
		}
	}
}
