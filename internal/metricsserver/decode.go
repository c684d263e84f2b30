package metricsserver

import (
	"bytes"
	"fmt"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/types"
)

// Point is one measurement of a node or container, as metrics-server
// keeps it.
type Point struct {
	// StartTime is when the container started (its CPU counter was 0).
	StartTime time.Time
	// Timestamp is when the values were measured.
	Timestamp time.Time
	// CPUNanos is the cumulative CPU time in core-nanoseconds.
	CPUNanos uint64
	// Memory is the working set in bytes.
	Memory uint64
}

// Batch is one scrape's points: of nodes by name, of pods' containers by
// pod and container name.
type Batch struct {
	Nodes map[string]Point
	Pods  map[types.NamespacedName]map[string]Point
}

func newBatch() Batch {
	return Batch{Nodes: map[string]Point{}, Pods: map[types.NamespacedName]map[string]Point{}}
}

// Decode reads a kubelet's /metrics/resource as metrics-server does:
// values without a timestamp are taken at scraped; a node without CPU,
// memory or a time is left out, and so is a pod one of whose containers
// lacks CPU or memory.
func Decode(text []byte, node string, scraped time.Time) (Batch, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		return Batch{}, fmt.Errorf("parse metrics of node %s: %w", node, err)
	}
	b := newBatch()
	var n Point
	at := func(m *dto.Metric) time.Time {
		if m.TimestampMs != nil {
			return time.UnixMilli(m.GetTimestampMs())
		}
		return scraped
	}
	for _, m := range families["node_cpu_usage_seconds_total"].GetMetric() {
		n.CPUNanos, n.Timestamp = uint64(value(m)*1e9), at(m)
	}
	for _, m := range families["node_memory_working_set_bytes"].GetMetric() {
		n.Memory, n.Timestamp = uint64(value(m)), at(m)
	}
	if !n.Timestamp.IsZero() && n.CPUNanos != 0 && n.Memory != 0 {
		b.Nodes[node] = n
	}
	pods := map[types.NamespacedName]map[string]Point{}
	container := func(m *dto.Metric) (*Point, func()) {
		l := labelsOf(m)
		ref := types.NamespacedName{Namespace: l["namespace"], Name: l["pod"]}
		if pods[ref] == nil {
			pods[ref] = map[string]Point{}
		}
		p := pods[ref][l["container"]]
		return &p, func() { pods[ref][l["container"]] = p }
	}
	for _, m := range families["container_cpu_usage_seconds_total"].GetMetric() {
		p, save := container(m)
		p.CPUNanos, p.Timestamp = uint64(value(m)*1e9), at(m)
		save()
	}
	for _, m := range families["container_memory_working_set_bytes"].GetMetric() {
		p, save := container(m)
		p.Memory, p.Timestamp = uint64(value(m)), at(m)
		save()
	}
	for _, m := range families["container_start_time_seconds"].GetMetric() {
		p, save := container(m)
		p.StartTime = time.Unix(0, int64(value(m)*1e9))
		save()
	}
	for ref, containers := range pods {
		complete := true
		for _, p := range containers {
			if p.CPUNanos == 0 || p.Memory == 0 {
				complete = false
				break
			}
		}
		if complete && len(containers) > 0 {
			b.Pods[ref] = containers
		}
	}
	return b, nil
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Untyped != nil:
		return m.Untyped.GetValue()
	}
	return 0
}

func labelsOf(m *dto.Metric) map[string]string {
	out := make(map[string]string, len(m.Label))
	for _, l := range m.Label {
		out[l.GetName()] = l.GetValue()
	}
	return out
}
