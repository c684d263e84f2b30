package proxy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/knftables"

	"github.com/orca-project/orca/internal/nftplan"
	"github.com/orca-project/orca/internal/proxy/healthcheck"
)

// Options configure a Proxier.
type Options struct {
	Client                   kubernetes.Interface
	NodeName                 string
	ClusterCIDR, ServiceCIDR string
	// NodeIP is the node's address (see Config.NodeIP).
	NodeIP string
	// NFT reaches the proxy's table; the real nft when nil.
	NFT knftables.Interface
	// Conntrack is the node's connection tracking table, cleaned of
	// stale UDP entries after each sync: the kernel's when NFT is nil
	// too, none otherwise.
	Conntrack conntrackTable
	// Metrics receives the proxy's metrics when set.
	Metrics prometheus.Registerer
	// MinSyncPeriod coalesces bursts of changes into one transaction
	// (100 ms when zero); FullSyncPeriod rewrites the whole table now and
	// then (5 minutes when zero).
	MinSyncPeriod, FullSyncPeriod time.Duration
	Log                           *slog.Logger
}

// Run programs the node's service rules until ctx ends.
func Run(ctx context.Context, o Options) error {
	if o.MinSyncPeriod == 0 {
		o.MinSyncPeriod = 100 * time.Millisecond
	}
	if o.FullSyncPeriod == 0 {
		o.FullSyncPeriod = 5 * time.Minute
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	log := o.Log.With("component", "proxy")
	if o.NFT == nil {
		nft, err := knftables.New(Family, Table)
		if err != nil {
			return fmt.Errorf("proxy: nftables: %w", err)
		}
		o.NFT = nft
		if o.Conntrack == nil {
			o.Conntrack = kernelConntrack{}
		}
	}
	m := newMetrics(o.Metrics)

	// Upstream's filters: services another proxy serves, and headless
	// services' slices, are none of ours.
	noProxyName := "!service.kubernetes.io/service-proxy-name"
	factory := informers.NewSharedInformerFactoryWithOptions(o.Client, 0, informers.WithTweakListOptions(func(lo *metav1.ListOptions) {
		lo.LabelSelector = noProxyName
	}))
	sliceFactory := informers.NewSharedInformerFactoryWithOptions(o.Client, 0, informers.WithTweakListOptions(func(lo *metav1.ListOptions) {
		lo.LabelSelector = noProxyName + ",!" + v1.IsHeadlessService
	}))
	svcInf := factory.Core().V1().Services()
	sliceInf := sliceFactory.Discovery().V1().EndpointSlices()
	trigger := nftplan.NewTrigger()
	h := cache.ResourceEventHandlerFuncs{AddFunc: func(any) { trigger.Poke() }, UpdateFunc: func(any, any) { trigger.Poke() }, DeleteFunc: func(any) { trigger.Poke() }}
	if _, err := svcInf.Informer().AddEventHandler(h); err != nil {
		return fmt.Errorf("proxy: %w", err)
	}
	if _, err := sliceInf.Informer().AddEventHandler(h); err != nil {
		return fmt.Errorf("proxy: %w", err)
	}
	factory.Start(ctx.Done())
	sliceFactory.Start(ctx.Done())
	defer factory.Shutdown()
	defer sliceFactory.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), svcInf.Informer().HasSynced, sliceInf.Informer().HasSynced) {
		return ctx.Err()
	}

	var healthy atomic.Bool
	hc := &healthcheck.Servers{Healthy: healthy.Load, Log: log}
	defer hc.Close()
	syncer := &Syncer{NFT: o.NFT}
	builder := new(Builder)
	cfg := Config{ClusterCIDR: o.ClusterCIDR, ServiceCIDR: o.ServiceCIDR, NodeIP: o.NodeIP}
	sync := func(full bool) error {
		start := time.Now()
		svcs, err := collect(svcInf.Lister().List, sliceInf.Lister().List, o.NodeName)
		if err != nil {
			return err
		}
		rs := builder.Build(cfg, svcs)
		ops, err := syncer.Sync(ctx, rs, full)
		healthy.Store(err == nil)
		if err != nil {
			return err
		}
		hc.Sync(healthChecks(svcs))
		if o.Conntrack != nil {
			// Stale entries go only once the rules route elsewhere, so
			// that the next datagram finds the new endpoints.
			cleanConntrack(o.Conntrack, svcs, log)
		}
		m.observe(start, rs)
		log.Debug("synced service rules", "full", full, "operations", ops, "services", rs.Services, "endpoints", rs.Endpoints, "took", time.Since(start))
		return nil
	}

	nftplan.Loop{MinSync: o.MinSyncPeriod, FullSync: o.FullSyncPeriod, Log: log, What: "service rules"}.Run(ctx, trigger, sync)
	return nil
}

// cleanConntrack deletes the UDP entries StaleUDP names; a failure is
// logged, as the rules themselves are in place.
func cleanConntrack(ct conntrackTable, svcs []ServicePort, log *slog.Logger) {
	flows, err := ct.ListUDP()
	if err != nil {
		log.Warn("clean stale UDP conntrack entries", "err", err)
		return
	}
	stale := StaleUDP(svcs, flows)
	if len(stale) == 0 {
		return
	}
	n, err := ct.Delete(stale)
	if err != nil {
		log.Warn("clean stale UDP conntrack entries", "err", err)
		return
	}
	log.Debug("deleted stale UDP conntrack entries", "entries", n)
}

// collect reads the informers' caches into service ports.
func collect(services func(labels.Selector) ([]*v1.Service, error), slices func(labels.Selector) ([]*discoveryv1.EndpointSlice, error), node string) ([]ServicePort, error) {
	svcs, err := services(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("list services: %w", err)
	}
	sls, err := slices(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("list endpoint slices: %w", err)
	}
	byService := map[string][]*discoveryv1.EndpointSlice{}
	for _, sl := range sls {
		if name := sl.Labels[discoveryv1.LabelServiceName]; name != "" {
			byService[sl.Namespace+"/"+name] = append(byService[sl.Namespace+"/"+name], sl)
		}
	}
	var out []ServicePort
	for _, s := range svcs {
		out = append(out, ServicePorts(s, byService[s.Namespace+"/"+s.Name], node)...)
	}
	return out, nil
}

// healthChecks is the health-check node ports to serve, with the ready
// local endpoints behind each.
func healthChecks(svcs []ServicePort) map[int32]healthcheck.Service {
	out := map[int32]healthcheck.Service{}
	for _, s := range svcs {
		if s.HealthCheckNodePort == 0 {
			continue
		}
		n := 0
		for _, e := range s.Endpoints {
			if e.Local && e.Ready {
				n++
			}
		}
		if cur, ok := out[s.HealthCheckNodePort]; !ok || n > cur.LocalEndpoints {
			out[s.HealthCheckNodePort] = healthcheck.Service{Namespace: s.Namespace, Name: s.Name, LocalEndpoints: n}
		}
	}
	return out
}

type metrics struct {
	duration        prometheus.Histogram
	last            prometheus.Gauge
	services, endps prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "kubeproxy_sync_proxy_rules_duration_seconds", Help: "SyncProxyRules latency in seconds",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 15),
		}),
		last: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "kubeproxy_sync_proxy_rules_last_timestamp_seconds", Help: "The last time proxy rules were successfully synced",
		}),
		services: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "kubeproxy_sync_proxy_rules_services", Help: "Service ports programmed by the last successful sync",
		}),
		endps: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "kubeproxy_sync_proxy_rules_endpoints", Help: "Endpoint chains programmed by the last successful sync",
		}),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.duration, m.last, m.services, m.endps} {
			if err := reg.Register(c); err != nil && !errors.As(err, &prometheus.AlreadyRegisteredError{}) {
				slog.Default().Warn("proxy metrics", "err", err)
			}
		}
	}
	return m
}

func (m *metrics) observe(start time.Time, rs *Ruleset) {
	m.duration.Observe(time.Since(start).Seconds())
	m.last.SetToCurrentTime()
	m.services.Set(float64(rs.Services))
	m.endps.Set(float64(rs.Endpoints))
}
