package kubelet

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/orca-project/orca/internal/kubelet/podstatus"
)

// metrics are a subset of upstream's kubelet metrics, under the same names.
type metrics struct {
	syncDuration *prometheus.HistogramVec
}

func newMetrics(k *Kubelet, reg prometheus.Registerer) *metrics {
	m := &metrics{
		syncDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Subsystem: "kubelet", Name: "pod_worker_duration_seconds",
			Help:    "Duration in seconds to sync a single pod, by operation (create, update, sync).",
			Buckets: prometheus.ExponentialBuckets(0.005, 2, 12),
		}, []string{"operation"}),
	}
	if reg == nil {
		return m
	}
	running := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Subsystem: "kubelet", Name: "running_pods", Help: "Number of pods that have a running pod sandbox.",
	}, func() float64 {
		n := 0
		for _, uid := range k.state.podUIDs() {
			if readySandbox(k.state.get(uid)) != nil {
				n++
			}
		}
		return float64(n)
	})
	containers := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Subsystem: "kubelet", Name: "running_containers", Help: "Number of containers currently running.",
	}, func() float64 {
		n := 0
		for _, uid := range k.state.podUIDs() {
			if p := k.state.get(uid); p != nil {
				for _, c := range p.Containers {
					if c.State == podstatus.Running {
						n++
					}
				}
			}
		}
		return float64(n)
	})
	reg.MustRegister(m.syncDuration, running, containers)
	return m
}
