package server

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// The series of upstream's /metrics/resource, with the help text
// component-base gives them (the stability level first).
var (
	nodeCPUUsageDesc = prometheus.NewDesc("node_cpu_usage_seconds_total",
		"[STABLE] Cumulative cpu time consumed by the node in core-seconds", nil, nil)
	nodeMemoryUsageDesc = prometheus.NewDesc("node_memory_working_set_bytes",
		"[STABLE] Current working set of the node in bytes", nil, nil)
	nodeSwapUsageDesc = prometheus.NewDesc("node_swap_usage_bytes",
		"[ALPHA] Current swap usage of the node in bytes. Reported only on non-windows systems", nil, nil)
	containerCPUUsageDesc = prometheus.NewDesc("container_cpu_usage_seconds_total",
		"[STABLE] Cumulative cpu time consumed by the container in core-seconds", []string{"container", "pod", "namespace"}, nil)
	containerMemoryUsageDesc = prometheus.NewDesc("container_memory_working_set_bytes",
		"[STABLE] Current working set of the container in bytes", []string{"container", "pod", "namespace"}, nil)
	podCPUUsageDesc = prometheus.NewDesc("pod_cpu_usage_seconds_total",
		"[STABLE] Cumulative cpu time consumed by the pod in core-seconds", []string{"pod", "namespace"}, nil)
	podMemoryUsageDesc = prometheus.NewDesc("pod_memory_working_set_bytes",
		"[STABLE] Current working set of the pod in bytes", []string{"pod", "namespace"}, nil)
	containerStartTimeDesc = prometheus.NewDesc("container_start_time_seconds",
		"[STABLE] Start time of the container since unix epoch in seconds", []string{"container", "pod", "namespace"}, nil)
	scrapeErrorDesc = prometheus.NewDesc("scrape_error",
		"[ALPHA] (Deprecated since 1.29.0) 1 if there was an error while getting container metrics, 0 otherwise", nil, nil)
	resourceScrapeErrorDesc = prometheus.NewDesc("resource_scrape_error",
		"[STABLE] 1 if there was an error while getting container metrics, 0 otherwise", nil, nil)
)

// resourceCollector is upstream's resource metrics collector over the
// last stats round: each value carries the time it was measured, which
// metrics-server computes rates from.
type resourceCollector struct{ s Stats }

func (c resourceCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{nodeCPUUsageDesc, nodeMemoryUsageDesc, nodeSwapUsageDesc, containerStartTimeDesc,
		containerCPUUsageDesc, containerMemoryUsageDesc, podCPUUsageDesc, podMemoryUsageDesc, scrapeErrorDesc, resourceScrapeErrorDesc} {
		ch <- d
	}
}

func (c resourceCollector) Collect(ch chan<- prometheus.Metric) {
	errors := 0.0
	defer func() {
		ch <- prometheus.MustNewConstMetric(scrapeErrorDesc, prometheus.GaugeValue, errors)
		ch <- prometheus.MustNewConstMetric(resourceScrapeErrorDesc, prometheus.GaugeValue, errors)
	}()
	snap := c.s.Latest()
	if snap == nil {
		errors = 1
		return
	}
	s := CPUAndMemory(snap.Summary)
	n := s.Node
	if n.CPU != nil && n.CPU.UsageCoreNanoSeconds != nil {
		ch <- timed(n.CPU.Time.Time, nodeCPUUsageDesc, prometheus.CounterValue, seconds(*n.CPU.UsageCoreNanoSeconds))
	}
	if n.Memory != nil && n.Memory.WorkingSetBytes != nil {
		ch <- timed(n.Memory.Time.Time, nodeMemoryUsageDesc, prometheus.GaugeValue, float64(*n.Memory.WorkingSetBytes))
	}
	if n.Swap != nil && n.Swap.SwapUsageBytes != nil {
		ch <- timed(n.Swap.Time.Time, nodeSwapUsageDesc, prometheus.GaugeValue, float64(*n.Swap.SwapUsageBytes))
	}
	for _, p := range s.Pods {
		for _, ct := range p.Containers {
			collectContainer(ch, p.PodRef, ct)
		}
		if p.CPU != nil && p.CPU.UsageCoreNanoSeconds != nil {
			ch <- timed(p.CPU.Time.Time, podCPUUsageDesc, prometheus.CounterValue, seconds(*p.CPU.UsageCoreNanoSeconds), p.PodRef.Name, p.PodRef.Namespace)
		}
		if p.Memory != nil && p.Memory.WorkingSetBytes != nil {
			ch <- timed(p.Memory.Time.Time, podMemoryUsageDesc, prometheus.GaugeValue, float64(*p.Memory.WorkingSetBytes), p.PodRef.Name, p.PodRef.Namespace)
		}
	}
}

func collectContainer(ch chan<- prometheus.Metric, pod statsapi.PodReference, ct statsapi.ContainerStats) {
	if ct.StartTime.Unix() > 0 {
		ch <- prometheus.MustNewConstMetric(containerStartTimeDesc, prometheus.GaugeValue,
			float64(ct.StartTime.UnixNano())/float64(time.Second), ct.Name, pod.Name, pod.Namespace)
	}
	if ct.CPU != nil && ct.CPU.UsageCoreNanoSeconds != nil {
		ch <- timed(ct.CPU.Time.Time, containerCPUUsageDesc, prometheus.CounterValue, seconds(*ct.CPU.UsageCoreNanoSeconds), ct.Name, pod.Name, pod.Namespace)
	}
	if ct.Memory != nil && ct.Memory.WorkingSetBytes != nil {
		ch <- timed(ct.Memory.Time.Time, containerMemoryUsageDesc, prometheus.GaugeValue, float64(*ct.Memory.WorkingSetBytes), ct.Name, pod.Name, pod.Namespace)
	}
}

func timed(at time.Time, d *prometheus.Desc, t prometheus.ValueType, v float64, labels ...string) prometheus.Metric {
	return prometheus.NewMetricWithTimestamp(at, prometheus.MustNewConstMetric(d, t, v, labels...))
}

func seconds(nanos uint64) float64 { return float64(nanos) / float64(time.Second) }
