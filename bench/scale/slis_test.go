package main

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

func TestQuantile(t *testing.T) {
	h := histogram{bounds: []float64{0.1, 0.5, 1}, counts: []float64{50, 90, 100}, count: 100}
	over := histogram{bounds: []float64{0.1, 1}, counts: []float64{10, 20}, count: 100}
	for _, tc := range []struct {
		name string
		h    histogram
		q    float64
		want float64
	}{
		{"inside the first bucket", h, 0.25, 0.05},
		{"a bucket's upper edge", h, 0.5, 0.1},
		{"interpolated in the second", h, 0.7, 0.3},
		{"p99 in the last", h, 0.99, 0.95},
		{"beyond every bound reports the last", over, 0.99, 1},
		{"empty buckets before the rank", histogram{bounds: []float64{0.1, 0.2}, counts: []float64{0, 4}, count: 4}, 0.5, 0.15},
	} {
		if got := tc.h.quantile(tc.q); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: quantile(%v) = %v, want %v", tc.name, tc.q, got, tc.want)
		}
	}
	if got := (histogram{}).quantile(0.99); !math.IsNaN(got) {
		t.Errorf("no calls: %v, want NaN", got)
	}
}

const page = `# HELP apiserver_request_duration_seconds x
# TYPE apiserver_request_duration_seconds histogram
apiserver_request_duration_seconds_bucket{group="",resource="pods",scope="namespace",subresource="",verb="POST",version="v1",le="0.1"} %d
apiserver_request_duration_seconds_bucket{group="",resource="pods",scope="namespace",subresource="",verb="POST",version="v1",le="1"} %d
apiserver_request_duration_seconds_bucket{group="",resource="pods",scope="namespace",subresource="",verb="POST",version="v1",le="+Inf"} %d
apiserver_request_duration_seconds_sum{group="",resource="pods",scope="namespace",subresource="",verb="POST",version="v1"} 1
apiserver_request_duration_seconds_count{group="",resource="pods",scope="namespace",subresource="",verb="POST",version="v1"} %d
apiserver_request_duration_seconds_bucket{group="",resource="pods",scope="cluster",subresource="",verb="LIST",version="v1",le="0.1"} 0
apiserver_request_duration_seconds_bucket{group="",resource="pods",scope="cluster",subresource="",verb="LIST",version="v1",le="1"} 0
apiserver_request_duration_seconds_bucket{group="",resource="pods",scope="cluster",subresource="",verb="LIST",version="v1",le="+Inf"} 2
apiserver_request_duration_seconds_sum{group="",resource="pods",scope="cluster",subresource="",verb="LIST",version="v1"} 70
apiserver_request_duration_seconds_count{group="",resource="pods",scope="cluster",subresource="",verb="LIST",version="v1"} 2
`

func TestResponsiveness(t *testing.T) {
	read := func(b0, b1, inf int) map[callKey]histogram {
		t.Helper()
		h, err := latencies(strings.NewReader(fmt.Sprintf(page, b0, b1, inf, inf)))
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	before := read(100, 100, 100)
	// Between the readings: 100 posts, 98 within 0.1 s and 2 over a
	// second; the LIST series did not move.
	after := read(198, 198, 200)
	rows := responsiveness(before, after, 1)
	if len(rows) != 1 {
		t.Fatalf("rows %+v, want the POST alone (the LIST made no call in between)", rows)
	}
	r := rows[0]
	if r.Key != (callKey{Verb: "POST", Resource: "pods", Scope: "namespace"}) || r.Count != 100 || r.Limit != time.Second {
		t.Errorf("row %+v", r)
	}
	if r.P99 != time.Second || !r.Met() || !r.Mutating() {
		t.Errorf("p99 %v met %v: want the last bound, 1s, met", r.P99, r.Met())
	}
	// Read from nothing, the cluster LIST counts, with its 30 s limit.
	rows = responsiveness(map[callKey]histogram{}, after, 1)
	for _, r := range rows {
		if r.Key.Verb == "LIST" && (r.Limit != 30*time.Second || r.Key.Scope != "cluster") {
			t.Errorf("cluster LIST row %+v", r)
		}
	}
}

func TestSLOLimit(t *testing.T) {
	for _, tc := range []struct {
		k     callKey
		limit time.Duration
		ok    bool
	}{
		{callKey{Verb: "POST", Scope: "namespace"}, time.Second, true},
		{callKey{Verb: "GET", Scope: "resource"}, time.Second, true},
		{callKey{Verb: "LIST", Scope: "namespace"}, 5 * time.Second, true},
		{callKey{Verb: "LIST", Scope: "cluster"}, 30 * time.Second, true},
		{callKey{Verb: "WATCH", Scope: "cluster"}, 0, false},
		{callKey{Verb: "CONNECT", Scope: "resource"}, 0, false},
	} {
		limit, ok := sloLimit(tc.k)
		if limit != tc.limit || ok != tc.ok {
			t.Errorf("%v: %v %v, want %v %v", tc.k, limit, ok, tc.limit, tc.ok)
		}
	}
}

func TestPercentile(t *testing.T) {
	ds := []time.Duration{5, 1, 4, 2, 3, 6, 7, 8, 9, 10}
	for _, tc := range []struct {
		p    float64
		want time.Duration
	}{{50, 5}, {90, 9}, {99, 10}, {100, 10}, {1, 1}} {
		if got := percentile(ds, tc.p); got != tc.want {
			t.Errorf("p%v = %v, want %v", tc.p, got, tc.want)
		}
	}
	if percentile(nil, 99) != 0 {
		t.Error("empty")
	}
}

func TestMetricValue(t *testing.T) {
	p := "# HELP x\norca_etcd_db_total_size_bytes 1.2e+07\norca_etcd_db_total_size_in_use_bytes 5\ngo_goroutines{a=\"b\"} 42\n"
	for _, tc := range []struct {
		name string
		want float64
	}{{"orca_etcd_db_total_size_bytes", 1.2e7}, {"orca_etcd_db_total_size_in_use_bytes", 5}, {"go_goroutines", 42}} {
		if got := metricValue(p, tc.name); got != tc.want {
			t.Errorf("%s = %v, want %v", tc.name, got, tc.want)
		}
	}
	if !math.IsNaN(metricValue(p, "absent")) {
		t.Error("absent metric")
	}
}
