package server

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/orca-project/orca/internal/kubelet/stats"
)

type fixedStats struct{ snap *stats.Snapshot }

func (f fixedStats) Latest() *stats.Snapshot { return f.snap }

func u64(v uint64) *uint64 { return &v }

func testSnapshot() *stats.Snapshot {
	at := metav1.NewTime(time.UnixMilli(1700000010123))
	start := metav1.NewTime(time.Unix(1700000000, 500000000))
	mem := stats.Memory{Usage: 3000, WorkingSet: 2048, RSS: 1024}
	return &stats.Snapshot{
		Summary: statsapi.Summary{
			Node: statsapi.NodeStats{
				NodeName: "n1", StartTime: start,
				CPU:    &statsapi.CPUStats{Time: at, UsageCoreNanoSeconds: u64(1500000000), UsageNanoCores: u64(250000000)},
				Memory: &statsapi.MemoryStats{Time: at, WorkingSetBytes: u64(4096)},
				Fs:     &statsapi.FsStats{Time: at, UsedBytes: u64(1)},
			},
			Pods: []statsapi.PodStats{{
				PodRef:    statsapi.PodReference{Name: "p", Namespace: "ns", UID: "u"},
				StartTime: start,
				CPU:       &statsapi.CPUStats{Time: at, UsageCoreNanoSeconds: u64(2000000000)},
				Memory:    &statsapi.MemoryStats{Time: at, WorkingSetBytes: u64(8192)},
				Network:   &statsapi.NetworkStats{Time: at, InterfaceStats: statsapi.InterfaceStats{Name: "eth0", RxBytes: u64(5)}},
				Containers: []statsapi.ContainerStats{{
					Name: "c", StartTime: start,
					CPU:    &statsapi.CPUStats{Time: at, UsageCoreNanoSeconds: u64(1000000000)},
					Memory: &statsapi.MemoryStats{Time: at, WorkingSetBytes: u64(2048)},
					Rootfs: &statsapi.FsStats{Time: at, UsedBytes: u64(77)},
				}},
			}},
		},
		Cgroups: []stats.Cgroup{{
			ID: "/kubepods/podu/abc", Name: "abc", Image: "img", Container: "c", Pod: "p", Namespace: "ns", Time: at.Time,
			CPUNanos: u64(1000000000), Memory: &mem, FsUsage: u64(77),
			Interfaces: []stats.Interface{{Name: "eth0", RxBytes: 5, TxPackets: 2}},
		}},
	}
}

func get(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	b, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(b)
}

func TestStatsEndpoints(t *testing.T) {
	mux := http.NewServeMux()
	RegisterStats(mux, fixedStats{testSnapshot()})
	empty := http.NewServeMux()
	RegisterStats(empty, fixedStats{})
	for _, tc := range []struct {
		name     string
		h        http.Handler
		path     string
		code     int
		contains []string
		absent   []string
	}{{
		name: "resource metrics carry the measurement times",
		h:    mux, path: ResourceMetricsPath, code: 200,
		contains: []string{
			"# HELP node_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the node in core-seconds\n# TYPE node_cpu_usage_seconds_total counter\nnode_cpu_usage_seconds_total 1.5 1700000010123\n",
			"node_memory_working_set_bytes 4096 1700000010123\n",
			`container_cpu_usage_seconds_total{container="c",namespace="ns",pod="p"} 1 1700000010123` + "\n",
			`container_memory_working_set_bytes{container="c",namespace="ns",pod="p"} 2048 1700000010123` + "\n",
			`container_start_time_seconds{container="c",namespace="ns",pod="p"} 1.7000000005e+09` + "\n",
			`pod_cpu_usage_seconds_total{namespace="ns",pod="p"} 2 1700000010123` + "\n",
			`pod_memory_working_set_bytes{namespace="ns",pod="p"} 8192 1700000010123` + "\n",
			"resource_scrape_error 0\n", "scrape_error 0\n",
		},
		absent: []string{"node_swap_usage_bytes "},
	}, {
		name: "no round yet is a scrape error",
		h:    empty, path: ResourceMetricsPath, code: 200,
		contains: []string{"resource_scrape_error 1\n"},
		absent:   []string{"node_cpu_usage_seconds_total "},
	}, {
		name: "cadvisor series with cadvisor's labels",
		h:    mux, path: CadvisorMetricsPath, code: 200,
		contains: []string{
			`container_cpu_usage_seconds_total{container="c",cpu="total",id="/kubepods/podu/abc",image="img",name="abc",namespace="ns",pod="p"} 1 1700000010123`,
			`container_memory_working_set_bytes{container="c",id="/kubepods/podu/abc",image="img",name="abc",namespace="ns",pod="p"} 2048 1700000010123`,
			`container_memory_rss{container="c",id="/kubepods/podu/abc",image="img",name="abc",namespace="ns",pod="p"} 1024 1700000010123`,
			`container_memory_usage_bytes{container="c",id="/kubepods/podu/abc",image="img",name="abc",namespace="ns",pod="p"} 3000 1700000010123`,
			`container_network_receive_bytes_total{container="c",id="/kubepods/podu/abc",image="img",interface="eth0",name="abc",namespace="ns",pod="p"} 5 1700000010123`,
			`container_network_transmit_packets_total{container="c",id="/kubepods/podu/abc",image="img",interface="eth0",name="abc",namespace="ns",pod="p"} 2 1700000010123`,
			`container_fs_usage_bytes{container="c",device="",id="/kubepods/podu/abc",image="img",name="abc",namespace="ns",pod="p"} 77 1700000010123`,
		},
	}, {
		name: "summary",
		h:    mux, path: SummaryPath, code: 200,
		contains: []string{`"node":{"nodeName":"n1","startTime":"2023-11-14T22:13:20Z","cpu":{"time":"2023-11-14T22:13:30Z","usageNanoCores":250000000,"usageCoreNanoSeconds":1500000000}`, `"rootfs":{"time":`, `"network":{"time":`},
	}, {
		name: "summary of CPU and memory only",
		h:    mux, path: SummaryPath + "?only_cpu_and_memory=true", code: 200,
		contains: []string{`"workingSetBytes":2048`},
		absent:   []string{"rootfs", "network", `"fs"`},
	}, {
		name: "summary before the first round",
		h:    empty, path: SummaryPath, code: 500,
		contains: []string{"Internal Error: no stats collected yet"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := get(t, tc.h, tc.path)
			if code != tc.code {
				t.Fatalf("status %d, want %d: %s", code, tc.code, body)
			}
			for _, s := range tc.contains {
				if !strings.Contains(body, s) {
					t.Errorf("missing %q in:\n%s", s, body)
				}
			}
			for _, s := range tc.absent {
				if strings.Contains(body, s) {
					t.Errorf("unexpected %q in:\n%s", s, body)
				}
			}
		})
	}
	// The summary is upstream's document.
	_, body := get(t, mux, SummaryPath)
	var s statsapi.Summary
	if err := json.Unmarshal([]byte(body), &s); err != nil || s.Pods[0].Containers[0].Rootfs == nil || *s.Pods[0].Containers[0].Rootfs.UsedBytes != 77 {
		t.Errorf("summary does not decode as stats/v1alpha1: %v %s", err, body)
	}
}
