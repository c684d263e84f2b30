package main

import (
	"crypto"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/orca-project/orca/internal/controller/csrsigning"
	"github.com/orca-project/orca/internal/controller/nodelifecycle"
	"github.com/orca-project/orca/internal/controller/rootcacertpublisher"
	"github.com/orca-project/orca/internal/controllermanager"
	"github.com/orca-project/orca/internal/server"
)

func newControllerManagerCommand() *cobra.Command {
	var (
		kubeconfig, address, logLevel string
		useSACreds                    bool
		qps                           float32
		burst                         int
		clusterCIDR, lbPool           string
		signingCert, signingKey       string
		signingDuration               time.Duration
		lifecycle                     nodelifecycle.Config
		gcThreshold                   int
	)
	cmd := &cobra.Command{
		Use:   "controller-manager",
		Short: "Run the controllers (garbage collector, namespace, service account, root CA publisher) against an API server",
		Long: "Run the controllers against the API server named in --kubeconfig. Any number may run: " +
			"they elect one leader through the kube-system/orca-controller-manager Lease.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log := newLogger(logLevel)
			cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
			if err != nil {
				return fmt.Errorf("load kubeconfig %s: %w", kubeconfig, err)
			}
			cfg.QPS, cfg.Burst = qps, burst
			reg := newComponentRegistry()
			controllers := controllermanager.DefaultControllers()
			// Without a CA there is nothing to publish; upstream skips the
			// controller then too.
			if caPEM, err := clusterCA(cfg); err != nil {
				log.Warn("not publishing kube-root-ca.crt", "err", err)
			} else {
				controllers = append(controllers, controllermanager.Descriptor{
					Name: "root-ca-cert-publisher", Workers: 1,
					New: func(c *controllermanager.Context) (controllermanager.Controller, error) {
						return rootcacertpublisher.New(c.Client, c.Informers, caPEM, c.QueueMetrics, c.Log)
					},
				})
			}
			// Without the CA's key there is nothing to sign with; upstream
			// skips the controller then too.
			if signingCert == "" || signingKey == "" {
				log.Warn("not signing certificate requests: --cluster-signing-cert-file and --cluster-signing-key-file are not both given")
			} else {
				pair, err := tls.LoadX509KeyPair(signingCert, signingKey)
				if err != nil {
					return fmt.Errorf("cluster signing CA: %w", err)
				}
				key, ok := pair.PrivateKey.(crypto.Signer)
				if !ok {
					return fmt.Errorf("cluster signing CA: %s holds no signing key", signingKey)
				}
				controllers = append(controllers, server.CSRSigning(pair.Leaf, key, signingDuration))
			}
			controllers = append(controllers, server.NodeIPAM(clusterCIDR), server.ServiceLB(lbPool),
				server.NodeLifecycle(lifecycle), server.PodGC(podGCThreshold(gcThreshold)))
			m, err := controllermanager.New(controllermanager.Config{REST: cfg, Log: log, Metrics: reg, Controllers: controllers, UseServiceAccountCredentials: useSACreds})
			if err != nil {
				return err
			}
			return runStandalone("controller manager", address, log, m.Handler(reg), m.Run)
		},
	}
	f := cmd.Flags()
	f.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig naming the API server and the credentials to use")
	f.StringVar(&clusterCIDR, "cluster-cidr", server.DefaultClusterCIDR, "IPv4 range node pod CIDRs (a /24 each) are assigned from")
	lifecycle.AddFlags(f)
	f.IntVar(&gcThreshold, "terminated-pod-gc-threshold", server.DefaultTerminatedPodGCThreshold, "finished pods kept before the oldest are deleted (0 keeps all)")
	f.StringVar(&lbPool, "loadbalancer-pool", "", "addresses for LoadBalancer services, one each (CIDR or FIRST-LAST); the Ready nodes' InternalIPs when empty")
	f.StringVar(&signingCert, "cluster-signing-cert-file", "", "PEM CA certificate the csrsigning controller issues certificates with (the API server's tls/ca.crt)")
	f.StringVar(&signingKey, "cluster-signing-key-file", "", "PEM private key of --cluster-signing-cert-file (the API server's tls/ca.key)")
	f.DurationVar(&signingDuration, "cluster-signing-duration", csrsigning.DefaultDuration, "the longest duration of the certificates the csrsigning controller issues")
	f.StringVar(&address, "bind-address", "127.0.0.1:10257", "address serving /healthz, /readyz and /metrics")
	f.Float32Var(&qps, "kube-api-qps", 100, "queries per second to the API server")
	f.IntVar(&burst, "kube-api-burst", 200, "burst of queries to the API server")
	f.BoolVar(&useSACreds, "use-service-account-credentials", false, "run each controller as its own service account in kube-system, holding only its system:controller:* role")
	f.StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn, error")
	_ = cmd.MarkFlagRequired("kubeconfig")
	return cmd
}

// podGCThreshold maps upstream's flag (0 keeps every finished pod) to
// server.PodGC's argument (0 is the default there).
func podGCThreshold(flag int) int {
	if flag <= 0 {
		return -1
	}
	return flag
}

// clusterCA is the CA the kubeconfig trusts, which the root CA publisher
// hands to pods.
func clusterCA(cfg *rest.Config) ([]byte, error) {
	if len(cfg.TLSClientConfig.CAData) > 0 {
		return cfg.TLSClientConfig.CAData, nil
	}
	if cfg.TLSClientConfig.CAFile != "" {
		data, err := os.ReadFile(cfg.TLSClientConfig.CAFile)
		if err != nil {
			return nil, fmt.Errorf("read cluster CA: %w", err)
		}
		return data, nil
	}
	return nil, errors.New("the kubeconfig names no certificate authority to publish as kube-root-ca.crt")
}
