package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/orca-project/orca/internal/controller/rootcacertpublisher"
	"github.com/orca-project/orca/internal/controllermanager"
	"github.com/orca-project/orca/internal/server"
)

// runControllerManager is the child process: the controllers `orca
// controller-manager` runs, built the same way, until the parent kills it.
func runControllerManager(kubeconfig string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fmt.Errorf("load kubeconfig %s: %w", kubeconfig, err)
	}
	cfg.QPS, cfg.Burst = float32(*cmQPS), *cmBurst
	caPEM := cfg.TLSClientConfig.CAData
	if len(caPEM) == 0 && cfg.TLSClientConfig.CAFile != "" {
		if caPEM, err = os.ReadFile(cfg.TLSClientConfig.CAFile); err != nil {
			return fmt.Errorf("read cluster CA: %w", err)
		}
	}
	controllers := append(controllermanager.DefaultControllers(),
		controllermanager.Descriptor{Name: "root-ca-cert-publisher", Workers: 1, New: func(c *controllermanager.Context) (controllermanager.Controller, error) {
			return rootcacertpublisher.New(c.Client, c.Informers, caPEM, c.QueueMetrics, c.Log)
		}},
		server.NodeIPAM(""), server.ServiceLB(""))
	m, err := controllermanager.New(controllermanager.Config{
		REST: cfg, Controllers: controllers, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		return err
	}
	if err := m.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("controller manager: %w", err)
	}
	return nil
}
