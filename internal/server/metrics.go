package server

import (
	"context"
	"crypto/tls"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orca-project/orca/internal/auth/pki"
	"github.com/orca-project/orca/internal/metricsserver"
	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/metrics"
)

// newMetricsServer is metrics-server in this process, scraping kubelets
// with the API server's kubelet client certificate; nil when disabled.
func newMetricsServer(opts Options, kubeletTLS *tls.Config) *metricsserver.Server {
	if opts.DisableMetrics {
		return nil
	}
	return metricsserver.New(metricsserver.Config{KubeletTLS: kubeletTLS, Resolution: opts.MetricResolution, Log: opts.Log})
}

// computedSources are the API server's Computed sources: component
// statuses, and the resource metrics unless disabled.
func computedSources(components *componentProbes, ms *metricsserver.Server) map[schema.GroupVersionResource]func(context.Context) []runtime.Object {
	out := components.source()
	if ms != nil {
		for gvr, f := range ms.Sources(metrics.NodeMetrics.GroupVersionResource(), metrics.PodMetrics.GroupVersionResource()) {
			out[gvr] = f
		}
	}
	return out
}

// servedResources leaves metrics.k8s.io out when metrics are disabled, so
// that `kubectl top` reports the API as unavailable, as without
// metrics-server.
func servedResources(all []*registry.Resource, opts Options) []*registry.Resource {
	if !opts.DisableMetrics {
		return all
	}
	out := make([]*registry.Resource, 0, len(all))
	for _, r := range all {
		if r != metrics.NodeMetrics && r != metrics.PodMetrics {
			out = append(out, r)
		}
	}
	return out
}

// startMetricsServer runs ms through the API server as system:admin (it
// reads every node and pod), as the other in-process loops do.
func startMetricsServer(ctx context.Context, opts Options, tlsDir string, ca *pki.Pair, port int, ms *metricsserver.Server, run func(func() error)) error {
	if ms == nil {
		return nil
	}
	client, err := adminClient(opts, tlsDir, ca, port, "orca-metrics-server", 5, 10)
	if err != nil {
		return err
	}
	run(func() error { return ms.Run(ctx, client) })
	return nil
}
