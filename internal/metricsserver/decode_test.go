package metricsserver

import (
	"reflect"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

const resourceMetrics = `# HELP container_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the container in core-seconds
# TYPE container_cpu_usage_seconds_total counter
container_cpu_usage_seconds_total{container="busy",namespace="default",pod="loop"} 12.5 1700000010000
container_cpu_usage_seconds_total{container="app",namespace="prod",pod="web"} 0.25 1700000011000
container_cpu_usage_seconds_total{container="side",namespace="prod",pod="web"} 0.5 1700000011000
container_cpu_usage_seconds_total{container="new",namespace="prod",pod="starting"} 0 1700000011000
# HELP container_memory_working_set_bytes [STABLE] Current working set of the container in bytes
# TYPE container_memory_working_set_bytes gauge
container_memory_working_set_bytes{container="busy",namespace="default",pod="loop"} 1.048576e+06 1700000010000
container_memory_working_set_bytes{container="app",namespace="prod",pod="web"} 2048 1700000011000
container_memory_working_set_bytes{container="side",namespace="prod",pod="web"} 4096 1700000011000
container_memory_working_set_bytes{container="new",namespace="prod",pod="starting"} 4096 1700000011000
# HELP container_start_time_seconds [STABLE] Start time of the container since unix epoch in seconds
# TYPE container_start_time_seconds gauge
container_start_time_seconds{container="busy",namespace="default",pod="loop"} 1.6999e+09
# HELP node_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the node in core-seconds
# TYPE node_cpu_usage_seconds_total counter
node_cpu_usage_seconds_total 1234.5 1700000009000
# HELP node_memory_working_set_bytes [STABLE] Current working set of the node in bytes
# TYPE node_memory_working_set_bytes gauge
node_memory_working_set_bytes 5e+08 1700000009000
# HELP resource_scrape_error [STABLE] 1 if there was an error while getting container metrics, 0 otherwise
# TYPE resource_scrape_error gauge
resource_scrape_error 0
`

func TestDecode(t *testing.T) {
	scraped := time.Unix(1700000012, 0)
	for _, tc := range []struct {
		name    string
		text    string
		want    Batch
		wantErr bool
	}{{
		name: "node and complete pods; a container at zero CPU drops its pod",
		text: resourceMetrics,
		want: Batch{
			Nodes: map[string]Point{"n1": {Timestamp: time.UnixMilli(1700000009000), CPUNanos: 1234500000000, Memory: 500000000}},
			Pods: map[types.NamespacedName]map[string]Point{
				{Namespace: "default", Name: "loop"}: {"busy": {StartTime: time.Unix(1699900000, 0), Timestamp: time.UnixMilli(1700000010000), CPUNanos: 12500000000, Memory: 1048576}},
				{Namespace: "prod", Name: "web"}: {
					"app":  {Timestamp: time.UnixMilli(1700000011000), CPUNanos: 250000000, Memory: 2048},
					"side": {Timestamp: time.UnixMilli(1700000011000), CPUNanos: 500000000, Memory: 4096},
				},
			},
		},
	}, {
		name: "no timestamps: taken at the scrape; node without memory left out",
		text: "node_cpu_usage_seconds_total 10\ncontainer_cpu_usage_seconds_total{container=\"c\",namespace=\"ns\",pod=\"p\"} 1\ncontainer_memory_working_set_bytes{container=\"c\",namespace=\"ns\",pod=\"p\"} 100\n",
		want: Batch{
			Nodes: map[string]Point{},
			Pods:  map[types.NamespacedName]map[string]Point{{Namespace: "ns", Name: "p"}: {"c": {Timestamp: scraped, CPUNanos: 1e9, Memory: 100}}},
		},
	}, {
		name: "not the text format", text: "node_cpu_usage_seconds_total{ 1\n", wantErr: true,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Decode([]byte(tc.text), "n1", scraped)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if !tc.wantErr && !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}
