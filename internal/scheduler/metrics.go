package scheduler

import (
	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	attempts *prometheus.CounterVec
	attempt  *prometheus.HistogramVec
	e2e      prometheus.Histogram
	preempt  prometheus.Counter
	pending  func() (active, backoff, unschedulable int)
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "scheduler_schedule_attempts_total",
			Help: "Number of attempts to schedule pods, by result (scheduled, unschedulable, error).",
		}, []string{"result"}),
		attempt: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "scheduler_scheduling_attempt_duration_seconds",
			Help:    "Scheduling attempt latency (the algorithm, without binding), by result.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 18),
		}, []string{"result"}),
		e2e: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "scheduler_pod_scheduling_sli_duration_seconds",
			Help:    "Time from a pod entering the queue to its binding, over all attempts.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 18),
		}),
		preempt: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "scheduler_preemption_attempts_total",
			Help: "Preemptions that evicted pods.",
		}),
	}
	pending := func(which int) prometheus.GaugeFunc {
		names := []string{"active", "backoff", "unschedulable"}
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "scheduler_pending_pods", Help: "Pending pods by queue.", ConstLabels: prometheus.Labels{"queue": names[which]},
		}, func() float64 {
			if m.pending == nil {
				return 0
			}
			a, b, u := m.pending()
			return float64([]int{a, b, u}[which])
		})
	}
	for _, c := range []prometheus.Collector{m.attempts, m.attempt, m.e2e, m.preempt, pending(0), pending(1), pending(2)} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}
