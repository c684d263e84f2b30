package flowcontrol

import (
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are upstream's apiserver_flowcontrol_* series that matter most
// for seeing who waits, who runs and who is refused.
type metrics struct {
	rejected, dispatched      *prometheus.CounterVec
	inqueue, inqueueSeats     *prometheus.GaugeVec
	executing, executingSeats *prometheus.GaugeVec
	waitDuration, execution   *prometheus.HistogramVec
	estimatedSeats            *prometheus.HistogramVec
	nominal, lower, upper     *prometheus.GaugeVec
	current                   *prometheus.GaugeVec
}

const (
	labelLevel  = "priority_level"
	labelSchema = "flow_schema"
)

var durationBuckets = []float64{0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	name := func(n string) string { return "apiserver_flowcontrol_" + n }
	byFlow := []string{labelLevel, labelSchema}
	byLevel := []string{labelLevel}
	m := &metrics{
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: name("rejected_requests_total"), Help: "Number of requests rejected by API Priority and Fairness subsystem",
		}, []string{labelLevel, labelSchema, "reason"}),
		dispatched: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: name("dispatched_requests_total"), Help: "Number of requests executed by API Priority and Fairness subsystem",
		}, byFlow),
		inqueue: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: name("current_inqueue_requests"), Help: "Number of requests currently pending in queues of the API Priority and Fairness subsystem",
		}, byFlow),
		inqueueSeats: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: name("current_inqueue_seats"), Help: "Number of seats currently pending in queues of the API Priority and Fairness subsystem",
		}, byFlow),
		executing: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: name("current_executing_requests"), Help: "Number of requests in initial (for a WATCH) or any (for a non-WATCH) execution stage in the API Priority and Fairness subsystem",
		}, byFlow),
		executingSeats: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: name("current_executing_seats"), Help: "Concurrency (number of seats) occupied by the currently executing (initial stage for a WATCH, any stage otherwise) requests in the API Priority and Fairness subsystem",
		}, byFlow),
		waitDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: name("request_wait_duration_seconds"), Help: "Length of time a request spent waiting in its queue", Buckets: durationBuckets,
		}, []string{labelLevel, labelSchema, "execute"}),
		execution: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: name("request_execution_seconds"), Help: "Duration of initial stage (for a WATCH) or any (for a non-WATCH) stage of request execution in the API Priority and Fairness subsystem", Buckets: durationBuckets,
		}, []string{labelLevel, labelSchema, "type"}),
		estimatedSeats: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: name("work_estimated_seats"), Help: "Number of estimated seats (maximum of initial and final seats) associated with requests in API Priority and Fairness",
			Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 100},
		}, byFlow),
		nominal: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: name("nominal_limit_seats"), Help: "Nominal number of execution seats configured for each priority level",
		}, byLevel),
		lower: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: name("lower_limit_seats"), Help: "Configured lower bound on number of execution seats available to each priority level",
		}, byLevel),
		upper: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: name("upper_limit_seats"), Help: "Configured upper bound on number of execution seats available to each priority level",
		}, byLevel),
		current: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: name("current_limit_seats"), Help: "current derived number of execution seats available to each priority level",
		}, byLevel),
	}
	for _, c := range []prometheus.Collector{m.rejected, m.dispatched, m.inqueue, m.inqueueSeats, m.executing, m.executingSeats,
		m.waitDuration, m.execution, m.estimatedSeats, m.nominal, m.lower, m.upper, m.current} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}
