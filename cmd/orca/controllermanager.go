package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/orca-project/orca/internal/controllermanager"
)

func newControllerManagerCommand() *cobra.Command {
	var (
		kubeconfig, address, logLevel string
		qps                           float32
		burst                         int
	)
	cmd := &cobra.Command{
		Use:   "controller-manager",
		Short: "Run the controllers (garbage collector, namespace, service account) against an API server",
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
			reg := prometheus.NewRegistry()
			reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
			m, err := controllermanager.New(controllermanager.Config{REST: cfg, Log: log, Metrics: reg})
			if err != nil {
				return err
			}
			ln, err := net.Listen("tcp", address)
			if err != nil {
				return fmt.Errorf("listen for health and metrics: %w", err)
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			srv := &http.Server{Handler: m.Handler(reg), ReadHeaderTimeout: 10 * time.Second}
			g, gctx := errgroup.WithContext(ctx)
			g.Go(func() error { return m.Run(gctx) })
			g.Go(func() error {
				if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
					return fmt.Errorf("serve health and metrics: %w", err)
				}
				return nil
			})
			g.Go(func() error {
				<-gctx.Done()
				sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				return srv.Shutdown(sctx)
			})
			log.Info("controller manager started", "healthAndMetrics", ln.Addr().String())
			return g.Wait()
		},
	}
	f := cmd.Flags()
	f.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig naming the API server and the credentials to use")
	f.StringVar(&address, "bind-address", "127.0.0.1:10257", "address serving /healthz, /readyz and /metrics")
	f.Float32Var(&qps, "kube-api-qps", 100, "queries per second to the API server")
	f.IntVar(&burst, "kube-api-burst", 200, "burst of queries to the API server")
	f.StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn, error")
	_ = cmd.MarkFlagRequired("kubeconfig")
	return cmd
}
