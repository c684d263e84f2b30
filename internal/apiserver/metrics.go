package apiserver

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/orca-project/orca/internal/storage"
	"github.com/orca-project/orca/internal/storage/cache"
)

// metrics are the server's Prometheus series, named as upstream's.
type metrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	watchers prometheus.Gauge
	// compactions counts the compactions of etcd's history compactLoop
	// ran.
	compactions prometheus.Counter
}

func newMetrics(reg *prometheus.Registry) (*metrics, error) {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apiserver_request_total",
			Help: "Counter of apiserver requests broken out for each verb, group, version, resource, subresource, scope and HTTP response code.",
		}, []string{"verb", "group", "version", "resource", "subresource", "scope", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "apiserver_request_duration_seconds",
			Help:    "Response latency distribution in seconds for each verb, group, version, resource, subresource and scope.",
			Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 1.25, 1.5, 2, 3, 4, 5, 10, 20, 30, 60},
		}, []string{"verb", "group", "version", "resource", "subresource", "scope"}),
		watchers: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "apiserver_longrunning_requests",
			Help: "Number of open watch requests.",
		}),
		compactions: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "orca_etcd_compactions_total",
			Help: "Compactions of etcd's history run by the API server.",
		}),
	}
	cs := []prometheus.Collector{m.requests, m.latency, m.watchers, m.compactions,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})}
	cs = append(cs, storage.Collectors()...)
	cs = append(cs, cache.Collectors()...)
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			if _, dup := err.(prometheus.AlreadyRegisteredError); !dup {
				return nil, err
			}
		}
	}
	return m, nil
}

// scopeLabel is upstream's scope of a request, which its SLOs tell apart:
// one object ("resource"), a namespace's objects, or the cluster's. A
// LIST across the cluster is allowed thirty seconds, one in a namespace
// five.
func scopeLabel(ri requestInfo) string {
	switch {
	case ri.Name != "":
		return "resource"
	case ri.Namespace != "":
		return "namespace"
	default:
		return "cluster"
	}
}
