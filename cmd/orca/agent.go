package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/orca-project/orca/internal/agent"
	"github.com/orca-project/orca/internal/agent/join"
)

// agentFlags are the node flags `orca agent` and `orca server` share.
type agentFlags struct {
	opts     agent.Options
	labels   []string
	taints   []string
	reserved []string
	dns      []string
	pressure agent.PressureFlags
}

// register adds the node flags; standalone adds those `orca server` has
// already for its own use (the cluster's ranges).
func (a *agentFlags) register(f *pflag.FlagSet, standalone bool) {
	f.StringVar(&a.opts.NodeName, "node-name", "", "name of this node (the host name when empty)")
	f.StringVar(&a.opts.NodeIP, "node-ip", "", "IPv4 address of this node (the default route's source address when empty)")
	f.StringSliceVar(&a.labels, "node-label", nil, "label for this node, key=value (repeatable)")
	f.StringSliceVar(&a.taints, "node-taint", nil, "taint for this node, key=value:Effect (repeatable)")
	f.IntVar(&a.opts.KubeletPort, "kubelet-port", 10250, "port of the kubelet's HTTPS server (logs, exec, port-forward)")
	f.IntVar(&a.opts.HealthzPort, "healthz-port", 10248, "port of the kubelet's /healthz on 127.0.0.1, plain HTTP without credentials (0 turns it off)")
	f.StringVar(&a.opts.ContainerRuntimeEndpoint, "container-runtime-endpoint", "", "socket of a running CRI runtime; the agent runs its own containerd when empty")
	f.StringVar(&a.opts.PodCIDR, "pod-cidr", "", "this node's pod address range (assigned by the cluster when empty)")
	if standalone {
		f.StringVar(&a.opts.ClusterCIDR, "cluster-cidr", "10.42.0.0/16", "the cluster's pod range (routes between nodes, masquerading)")
		f.StringVar(&a.opts.ServiceCIDR, "service-cidr", "10.43.0.0/16", "the cluster's service range")
	}
	if standalone {
		f.StringSliceVar(&a.dns, "cluster-dns", []string{"10.43.0.10"}, "cluster DNS server addresses for pods with dnsPolicy ClusterFirst (the kube-dns service)")
	} else {
		f.StringSliceVar(&a.dns, "cluster-dns", nil, "cluster DNS server addresses for pods with dnsPolicy ClusterFirst (the kube-dns service's address when empty)")
	}
	f.StringVar(&a.opts.ClusterDomain, "cluster-domain", "cluster.local", "cluster's DNS domain")
	f.Int64Var(&a.opts.MaxPods, "max-pods", 110, "most pods this node runs")
	f.StringSliceVar(&a.reserved, "kube-reserved", nil, "resources held back from pods, e.g. cpu=100m,memory=256Mi")
	a.pressure.Register(f)
	f.BoolVar(&a.opts.AllowPrivileged, "allow-privileged", false, "let containers run privileged")
	f.StringVar(&a.opts.PauseBinary, "pause-binary", "", "the pause program for pod sandboxes (orca-pause next to orca when empty)")
	f.BoolVar(&a.opts.DisableIngress, "disable-ingress", false, "run no ingress controller on this node (it serves Ingresses on ports 80 and 443 otherwise)")
	f.BoolVar(&a.opts.DisableNetworkPolicy, "disable-network-policy", false, "do not enforce NetworkPolicies on this node")
	f.StringVar(&a.opts.RegistryConfigDir, "registry-config-dir", "", "directory of containerd registry host files (REGISTRY/hosts.toml: mirrors, CAs, plain-HTTP registries) the node pulls images by")
}

// complete parses the list flags into the options.
func (a *agentFlags) complete() (agent.Options, error) {
	o := a.opts
	o.ClusterDNS = a.dns
	o.Labels = map[string]string{}
	for _, l := range a.labels {
		k, v, _ := strings.Cut(l, "=")
		if k == "" {
			return o, fmt.Errorf("invalid --node-label %q: want key=value", l)
		}
		o.Labels[k] = v
	}
	if err := a.pressure.Apply(&o); err != nil {
		return o, err
	}
	for _, t := range a.taints {
		taint, err := parseTaint(t)
		if err != nil {
			return o, err
		}
		o.Taints = append(o.Taints, taint)
	}
	if len(a.reserved) > 0 {
		o.Reserved = v1.ResourceList{}
		for _, r := range a.reserved {
			k, v, ok := strings.Cut(r, "=")
			q, err := resource.ParseQuantity(v)
			if !ok || err != nil {
				return o, fmt.Errorf("invalid --kube-reserved %q: want name=quantity", r)
			}
			o.Reserved[v1.ResourceName(k)] = q
		}
	}
	return o, nil
}

// parseTaint reads key[=value]:Effect, as kubectl taint does.
func parseTaint(s string) (v1.Taint, error) {
	kv, effect, ok := strings.Cut(s, ":")
	if !ok {
		return v1.Taint{}, fmt.Errorf("invalid --node-taint %q: want key=value:Effect", s)
	}
	k, v, _ := strings.Cut(kv, "=")
	switch e := v1.TaintEffect(effect); e {
	case v1.TaintEffectNoSchedule, v1.TaintEffectPreferNoSchedule, v1.TaintEffectNoExecute:
		return v1.Taint{Key: k, Value: v, Effect: e}, nil
	}
	return v1.Taint{}, fmt.Errorf("invalid --node-taint %q: effect must be NoSchedule, PreferNoSchedule or NoExecute", s)
}

// joinToken is the token given inline or in a file; none is fine for a
// node that joined before (its credentials are in its data dir).
func joinToken(token, file string) (string, error) {
	if token != "" && file != "" {
		return "", fmt.Errorf("give either --token or --token-file, not both")
	}
	if file == "" {
		return token, nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("read --token-file: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

func newAgentCommand() *cobra.Command {
	var (
		flags      agentFlags
		simulate   simulateFlags
		kubeconfig string
		serverURL  string
		token      string
		tokenFile  string
		dataDir    string
		logLevel   string
	)
	cmd := &cobra.Command{
		Use:   "agent",
		Short: "Run a node: containerd, the kubelet and its streaming server",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o, err := flags.complete()
			if err != nil {
				return err
			}
			if simulate.nodes > 0 {
				ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
				defer stop()
				return simulate.run(ctx, kubeconfig, o, newLogger(logLevel))
			}
			switch {
			case kubeconfig != "" && serverURL != "":
				return fmt.Errorf("give either --kubeconfig or --server with a join token, not both")
			case kubeconfig != "":
				cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
				if err != nil {
					return fmt.Errorf("load kubeconfig: %w", err)
				}
				o.Config = cfg
			case serverURL != "":
				tok, err := joinToken(token, tokenFile)
				if err != nil {
					return err
				}
				o.Join = &join.Config{Server: serverURL, Token: tok}
			default:
				return fmt.Errorf("the agent needs credentials for the API server: --server URL with --token or --token-file (the join token `orca server` printed), or --kubeconfig")
			}
			o.DataDir = dataDir
			o.Log = newLogger(logLevel)
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return agent.Run(ctx, o)
		},
	}
	f := cmd.Flags()
	flags.register(f, true)
	simulate.register(f)
	f.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig with the node's credentials for the API server (instead of joining with a token)")
	f.StringVar(&serverURL, "server", "", "API server to join, https://HOST:6443")
	f.StringVar(&token, "token", "", "join token (K10...::ID.SECRET, from the server's DATA_DIR/token or orca token create); needed only until the node holds its own certificate")
	f.StringVar(&tokenFile, "token-file", "", "file holding the join token")
	f.IntVar(&flags.opts.APIServerLBPort, "apiserver-lb-port", agent.DefaultAPIServerLBPort, "port on 127.0.0.1 of the node's load balancer over the cluster's API servers, through which a node joined with --server reaches whichever server is up (-1: none, --server alone)")
	f.StringVar(&dataDir, "data-dir", defaultDataDir(), "directory for the node's containerd, pod volumes and logs")
	f.StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn, error")
	return cmd
}
