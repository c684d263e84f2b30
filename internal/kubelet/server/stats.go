package server

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/orca-project/orca/internal/kubelet/stats"
)

// Stats is where the stats endpoints read: the collector's last round.
type Stats interface {
	Latest() *stats.Snapshot
}

// Paths of the stats endpoints, authorized as nodes/stats and
// nodes/metrics (see RequestAttributes).
const (
	SummaryPath         = "/stats/summary"
	ResourceMetricsPath = "/metrics/resource"
	CadvisorMetricsPath = "/metrics/cadvisor"
)

// RegisterStats serves the Summary API and the resource and cadvisor
// metrics from s on mux.
func RegisterStats(mux *http.ServeMux, s Stats) {
	mux.HandleFunc(SummaryPath, func(w http.ResponseWriter, r *http.Request) { serveSummary(w, r, s) })
	mux.Handle(ResourceMetricsPath, metricsHandler(resourceCollector{s}))
	mux.Handle(CadvisorMetricsPath, metricsHandler(cadvisorCollector{s}))
}

func metricsHandler(c prometheus.Collector) http.Handler {
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	// A duplicate series (two pods of one name, one of them going) must
	// not cost the rest.
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// serveSummary answers GET /stats/summary as upstream's kubelet:
// only_cpu_and_memory=true keeps the node's and pods' CPU and memory.
func serveSummary(w http.ResponseWriter, r *http.Request, s Stats) {
	if r.Method != http.MethodGet {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	snap := s.Latest()
	if snap == nil {
		writeText(w, http.StatusInternalServerError, "Internal Error: no stats collected yet")
		return
	}
	summary := snap.Summary
	if only, _ := strconv.ParseBool(r.URL.Query().Get("only_cpu_and_memory")); only {
		summary = CPUAndMemory(summary)
	}
	b, err := json.Marshal(summary)
	if err != nil {
		writeText(w, http.StatusInternalServerError, "Internal Error: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

// CPUAndMemory is the summary upstream's GetCPUAndMemoryStats makes: the
// node's and each pod's and container's CPU and memory, and the pods'
// system containers, nothing else.
func CPUAndMemory(s statsapi.Summary) statsapi.Summary {
	out := statsapi.Summary{
		Node: statsapi.NodeStats{NodeName: s.Node.NodeName, StartTime: s.Node.StartTime, CPU: s.Node.CPU, Memory: s.Node.Memory, Swap: s.Node.Swap},
		Pods: make([]statsapi.PodStats, 0, len(s.Pods)),
	}
	for _, sc := range s.Node.SystemContainers {
		out.Node.SystemContainers = append(out.Node.SystemContainers, cpuAndMemory(sc))
	}
	for _, p := range s.Pods {
		q := statsapi.PodStats{PodRef: p.PodRef, StartTime: p.StartTime, CPU: p.CPU, Memory: p.Memory, Containers: make([]statsapi.ContainerStats, 0, len(p.Containers))}
		for _, c := range p.Containers {
			q.Containers = append(q.Containers, cpuAndMemory(c))
		}
		out.Pods = append(out.Pods, q)
	}
	return out
}

func cpuAndMemory(c statsapi.ContainerStats) statsapi.ContainerStats {
	return statsapi.ContainerStats{Name: c.Name, StartTime: c.StartTime, CPU: c.CPU, Memory: c.Memory}
}
