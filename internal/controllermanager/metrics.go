package controllermanager

import (
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/util/workqueue"
)

// queueMetrics implements workqueue.MetricsProvider over one registry.
// Each vector is registered once and labelled by queue name, because the
// manager rebuilds its queues (with the same names) every time it regains
// leadership.
type queueMetrics struct {
	depth, unfinished, longest *prometheus.GaugeVec
	adds, retries              *prometheus.CounterVec
	latency, duration          *prometheus.HistogramVec
}

func newQueueMetrics(reg prometheus.Registerer) (*queueMetrics, error) {
	const ns, sub = "orca", "workqueue"
	buckets := prometheus.ExponentialBuckets(1e-6, 10, 10)
	m := &queueMetrics{
		depth:      prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "depth", Help: "Current depth of the workqueue."}, []string{"name"}),
		unfinished: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "unfinished_work_seconds", Help: "Seconds of work in progress not yet observed by work_duration."}, []string{"name"}),
		longest:    prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "longest_running_processor_seconds", Help: "Seconds the longest running processor has been running."}, []string{"name"}),
		adds:       prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "adds_total", Help: "Items added to the workqueue."}, []string{"name"}),
		retries:    prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "retries_total", Help: "Retries handled by the workqueue."}, []string{"name"}),
		latency:    prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub, Name: "queue_duration_seconds", Help: "Seconds an item waits in the workqueue before being processed.", Buckets: buckets}, []string{"name"}),
		duration:   prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub, Name: "work_duration_seconds", Help: "Seconds processing an item takes.", Buckets: buckets}, []string{"name"}),
	}
	for _, c := range []prometheus.Collector{m.depth, m.unfinished, m.longest, m.adds, m.retries, m.latency, m.duration} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *queueMetrics) NewDepthMetric(n string) workqueue.GaugeMetric {
	return m.depth.WithLabelValues(n)
}
func (m *queueMetrics) NewAddsMetric(n string) workqueue.CounterMetric {
	return m.adds.WithLabelValues(n)
}
func (m *queueMetrics) NewLatencyMetric(n string) workqueue.HistogramMetric {
	return m.latency.WithLabelValues(n)
}
func (m *queueMetrics) NewWorkDurationMetric(n string) workqueue.HistogramMetric {
	return m.duration.WithLabelValues(n)
}
func (m *queueMetrics) NewUnfinishedWorkSecondsMetric(n string) workqueue.SettableGaugeMetric {
	return m.unfinished.WithLabelValues(n)
}
func (m *queueMetrics) NewLongestRunningProcessorSecondsMetric(n string) workqueue.SettableGaugeMetric {
	return m.longest.WithLabelValues(n)
}
func (m *queueMetrics) NewRetriesMetric(n string) workqueue.CounterMetric {
	return m.retries.WithLabelValues(n)
}
