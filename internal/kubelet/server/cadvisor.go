package server

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/orca-project/orca/internal/kubelet/stats"
)

// The common series of upstream's /metrics/cadvisor, with cadvisor's
// names, help text and labels.
var (
	cadvisorLabels   = []string{"container", "id", "image", "name", "namespace", "pod"}
	cadvisorCPULabel = append([]string{"cpu"}, cadvisorLabels...)
	cadvisorNetLabel = append([]string{"interface"}, cadvisorLabels...)
	cadvisorFsLabel  = append([]string{"device"}, cadvisorLabels...)

	cadvisorCPUDesc        = prometheus.NewDesc("container_cpu_usage_seconds_total", "Cumulative cpu time consumed in seconds.", cadvisorCPULabel, nil)
	cadvisorWorkingSetDesc = prometheus.NewDesc("container_memory_working_set_bytes", "Current working set in bytes.", cadvisorLabels, nil)
	cadvisorRSSDesc        = prometheus.NewDesc("container_memory_rss", "Size of RSS in bytes.", cadvisorLabels, nil)
	cadvisorUsageDesc      = prometheus.NewDesc("container_memory_usage_bytes", "Current memory usage in bytes, including all memory regardless of when it was accessed", cadvisorLabels, nil)
	cadvisorFsUsageDesc    = prometheus.NewDesc("container_fs_usage_bytes", "Number of bytes that are consumed by the container on this filesystem.", cadvisorFsLabel, nil)

	cadvisorNetDescs = []struct {
		desc  *prometheus.Desc
		value func(stats.Interface) uint64
	}{
		{prometheus.NewDesc("container_network_receive_bytes_total", "Cumulative count of bytes received", cadvisorNetLabel, nil), func(i stats.Interface) uint64 { return i.RxBytes }},
		{prometheus.NewDesc("container_network_receive_packets_total", "Cumulative count of packets received", cadvisorNetLabel, nil), func(i stats.Interface) uint64 { return i.RxPackets }},
		{prometheus.NewDesc("container_network_receive_errors_total", "Cumulative count of errors encountered while receiving", cadvisorNetLabel, nil), func(i stats.Interface) uint64 { return i.RxErrors }},
		{prometheus.NewDesc("container_network_receive_packets_dropped_total", "Cumulative count of packets dropped while receiving", cadvisorNetLabel, nil), func(i stats.Interface) uint64 { return i.RxDropped }},
		{prometheus.NewDesc("container_network_transmit_bytes_total", "Cumulative count of bytes transmitted", cadvisorNetLabel, nil), func(i stats.Interface) uint64 { return i.TxBytes }},
		{prometheus.NewDesc("container_network_transmit_packets_total", "Cumulative count of packets transmitted", cadvisorNetLabel, nil), func(i stats.Interface) uint64 { return i.TxPackets }},
		{prometheus.NewDesc("container_network_transmit_errors_total", "Cumulative count of errors encountered while transmitting", cadvisorNetLabel, nil), func(i stats.Interface) uint64 { return i.TxErrors }},
		{prometheus.NewDesc("container_network_transmit_packets_dropped_total", "Cumulative count of packets dropped while transmitting", cadvisorNetLabel, nil), func(i stats.Interface) uint64 { return i.TxDropped }},
	}
)

// cadvisorCollector reports every measured cgroup (the root, pods,
// sandboxes, containers) as cadvisor does inside upstream's kubelet.
type cadvisorCollector struct{ s Stats }

func (c cadvisorCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{cadvisorCPUDesc, cadvisorWorkingSetDesc, cadvisorRSSDesc, cadvisorUsageDesc, cadvisorFsUsageDesc} {
		ch <- d
	}
	for _, n := range cadvisorNetDescs {
		ch <- n.desc
	}
}

func (c cadvisorCollector) Collect(ch chan<- prometheus.Metric) {
	snap := c.s.Latest()
	if snap == nil {
		return
	}
	for _, cg := range snap.Cgroups {
		labels := []string{cg.Container, cg.ID, cg.Image, cg.Name, cg.Namespace, cg.Pod}
		with := func(first string) []string { return append([]string{first}, labels...) }
		if cg.CPUNanos != nil {
			ch <- timed(cg.Time, cadvisorCPUDesc, prometheus.CounterValue, seconds(*cg.CPUNanos), with("total")...)
		}
		if m := cg.Memory; m != nil {
			ch <- timed(cg.Time, cadvisorWorkingSetDesc, prometheus.GaugeValue, float64(m.WorkingSet), labels...)
			ch <- timed(cg.Time, cadvisorRSSDesc, prometheus.GaugeValue, float64(m.RSS), labels...)
			ch <- timed(cg.Time, cadvisorUsageDesc, prometheus.GaugeValue, float64(m.Usage), labels...)
		}
		for _, i := range cg.Interfaces {
			for _, n := range cadvisorNetDescs {
				ch <- timed(cg.Time, n.desc, prometheus.CounterValue, float64(n.value(i)), with(i.Name)...)
			}
		}
		if cg.FsUsage != nil {
			ch <- timed(cg.Time, cadvisorFsUsageDesc, prometheus.GaugeValue, float64(*cg.FsUsage), with("")...)
		}
	}
}
