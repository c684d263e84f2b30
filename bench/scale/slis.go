package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// callKey names one series of apiserver_request_duration_seconds the way
// upstream's API responsiveness measurement groups calls.
type callKey struct {
	Verb, Resource, Subresource, Scope string
}

func (k callKey) String() string {
	r := k.Resource
	if k.Subresource != "" {
		r += "/" + k.Subresource
	}
	return fmt.Sprintf("%s %s (%s)", k.Verb, r, k.Scope)
}

// histogram is a cumulative bucket histogram: counts[i] calls took at
// most bounds[i] seconds; count is every call, the +Inf bucket.
type histogram struct {
	bounds []float64
	counts []float64
	count  float64
}

// latencies reads apiserver_request_duration_seconds from a /metrics
// page, one histogram per call.
func latencies(r io.Reader) (map[callKey]histogram, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("parse metrics: %w", err)
	}
	fam, ok := fams["apiserver_request_duration_seconds"]
	if !ok {
		return nil, fmt.Errorf("no apiserver_request_duration_seconds on the server's /metrics")
	}
	out := map[callKey]histogram{}
	for _, m := range fam.GetMetric() {
		k := callKey{}
		for _, l := range m.GetLabel() {
			switch l.GetName() {
			case "verb":
				k.Verb = l.GetValue()
			case "resource":
				k.Resource = l.GetValue()
			case "subresource":
				k.Subresource = l.GetValue()
			case "scope":
				k.Scope = l.GetValue()
			}
		}
		out[k] = fromProto(m.GetHistogram())
	}
	return out, nil
}

func fromProto(h *dto.Histogram) histogram {
	var out histogram
	for _, b := range h.GetBucket() {
		if math.IsInf(b.GetUpperBound(), 1) {
			continue
		}
		out.bounds = append(out.bounds, b.GetUpperBound())
		out.counts = append(out.counts, float64(b.GetCumulativeCount()))
	}
	out.count = float64(h.GetSampleCount())
	return out
}

// since is the histogram of the calls made after before was read.
func (h histogram) since(before histogram) histogram {
	out := histogram{bounds: h.bounds, counts: slices.Clone(h.counts), count: h.count - before.count}
	if len(before.counts) == len(h.counts) {
		for i := range out.counts {
			out.counts[i] -= before.counts[i]
		}
	}
	return out
}

// quantile is Prometheus' histogram_quantile: the bucket holding the
// q-th call, interpolated linearly inside it. Calls beyond the last
// finite bound report that bound, as Prometheus does, so a p99 of the
// largest bound means "at least".
func (h histogram) quantile(q float64) float64 {
	if h.count == 0 {
		return math.NaN()
	}
	rank := q * h.count
	lower, below := 0.0, 0.0
	for i, c := range h.counts {
		if c >= rank {
			if c == below {
				return h.bounds[i]
			}
			return lower + (h.bounds[i]-lower)*(rank-below)/(c-below)
		}
		lower, below = h.bounds[i], c
	}
	return h.bounds[len(h.bounds)-1]
}

// sloLimit is upstream's API call latency SLO for a call: mutating calls
// and single-object reads within a second, LISTs in a namespace within
// five, across the cluster within thirty. ok is false for calls the SLO
// does not cover (long-running ones).
func sloLimit(k callKey) (limit time.Duration, ok bool) {
	switch k.Verb {
	case "WATCH", "WATCHLIST", "CONNECT", "PROXY":
		return 0, false
	case "LIST":
		if k.Scope == "cluster" {
			return 30 * time.Second, true
		}
		return 5 * time.Second, true
	}
	return time.Second, true
}

// callLatency is one row of the API responsiveness table.
type callLatency struct {
	Key   callKey
	Count float64
	P50   time.Duration
	P99   time.Duration
	Limit time.Duration
}

// Met reports whether the call held its SLO.
func (c callLatency) Met() bool { return c.P99 <= c.Limit }

// Mutating reports whether the call writes.
func (c callLatency) Mutating() bool {
	switch c.Key.Verb {
	case "POST", "PUT", "PATCH", "DELETE", "DELETECOLLECTION", "APPLY":
		return true
	}
	return false
}

// responsiveness compares two readings of the server's histograms: one
// row per call made in between at least minCount times, slowest p99
// first.
func responsiveness(before, after map[callKey]histogram, minCount float64) []callLatency {
	var rows []callLatency
	for k, h := range after {
		limit, ok := sloLimit(k)
		if !ok {
			continue
		}
		d := h.since(before[k])
		if d.count < minCount || d.count == 0 {
			continue
		}
		rows = append(rows, callLatency{
			Key: k, Count: d.count, Limit: limit,
			P50: seconds(d.quantile(0.5)), P99: seconds(d.quantile(0.99)),
		})
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].P99 != rows[j].P99 {
			return rows[i].P99 > rows[j].P99
		}
		return rows[i].Key.String() < rows[j].Key.String()
	})
	return rows
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// percentile is the nearest-rank percentile of ds (sorted in place).
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	i := int(math.Ceil(p/100*float64(len(ds)))) - 1
	return ds[max(0, min(i, len(ds)-1))]
}

// metricValue is the first sample of a gauge or counter named name on a
// /metrics page, or NaN.
func metricValue(page, name string) float64 {
	for _, line := range strings.Split(page, "\n") {
		rest, ok := strings.CutPrefix(line, name)
		if !ok || (rest != "" && rest[0] != ' ' && rest[0] != '{') {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			continue
		}
		var v float64
		if _, err := fmt.Sscan(f[len(f)-1], &v); err == nil {
			return v
		}
	}
	return math.NaN()
}
