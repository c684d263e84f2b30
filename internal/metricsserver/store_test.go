package metricsserver

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

func TestStore(t *testing.T) {
	t0 := time.Unix(1700000000, 0)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	pod := types.NamespacedName{Namespace: "ns", Name: "p"}
	node := func(s int, cpu, mem uint64) Batch {
		return Batch{Nodes: map[string]Point{"n": {StartTime: t0, Timestamp: at(s), CPUNanos: cpu, Memory: mem}}}
	}
	containers := func(cs map[string]Point) Batch {
		return Batch{Pods: map[types.NamespacedName]map[string]Point{pod: cs}}
	}
	type want struct {
		ok              bool
		cpu, mem        string
		timestamp       time.Time
		window          time.Duration
		containerCPU    map[string]string
		containerMemory map[string]string
	}
	for _, tc := range []struct {
		name    string
		batches []Batch
		node    *want
		pod     *want
	}{{
		name:    "one point is not enough",
		batches: []Batch{node(100, 5e9, 1<<20)},
		node:    &want{ok: false},
	}, {
		name:    "a quarter core over 15 s; memory is the last working set",
		batches: []Batch{node(100, 5e9, 1<<20), node(115, 5e9+3.75e9, 2<<20)},
		node:    &want{ok: true, cpu: "250m", mem: "2Mi", timestamp: at(115), window: 15 * time.Second},
	}, {
		name:    "a repeated point keeps the previous one",
		batches: []Batch{node(100, 5e9, 1<<20), node(115, 6.5e9, 1<<20), node(115, 6.5e9, 1<<20)},
		node:    &want{ok: true, cpu: "100m", mem: "1Mi", timestamp: at(115), window: 15 * time.Second},
	}, {
		name:    "a counter going back is no usage",
		batches: []Batch{node(100, 9e9, 1<<20), node(115, 1e9, 1<<20)},
		node:    &want{ok: false},
	}, {
		name: "containers of a pod: the earliest time and its window",
		batches: []Batch{
			containers(map[string]Point{"a": {StartTime: at(0), Timestamp: at(100), CPUNanos: 1e9, Memory: 100}, "b": {StartTime: at(0), Timestamp: at(101), CPUNanos: 1e9, Memory: 200}}),
			containers(map[string]Point{"a": {StartTime: at(0), Timestamp: at(110), CPUNanos: 11e9, Memory: 300}, "b": {StartTime: at(0), Timestamp: at(116), CPUNanos: 2.5e9, Memory: 400}}),
		},
		pod: &want{ok: true, timestamp: at(110), window: 10 * time.Second, containerCPU: map[string]string{"a": "1", "b": "100m"}, containerMemory: map[string]string{"a": "300", "b": "400"}},
	}, {
		name: "a restarted container starts over, and its pod waits",
		batches: []Batch{
			containers(map[string]Point{"a": {StartTime: at(0), Timestamp: at(100), CPUNanos: 1e9, Memory: 100}}),
			containers(map[string]Point{"a": {StartTime: at(105), Timestamp: at(130), CPUNanos: 1e8, Memory: 100}}),
		},
		pod: &want{ok: false},
	}, {
		name: "a container between 10 s and one period old counts from its start",
		batches: []Batch{
			containers(map[string]Point{"a": {StartTime: at(100), Timestamp: at(112), CPUNanos: 6e9, Memory: 100}}),
		},
		pod: &want{ok: true, timestamp: at(112), window: 12 * time.Second, containerCPU: map[string]string{"a": "500m"}, containerMemory: map[string]string{"a": "100"}},
	}, {
		name: "a container missing from the previous round holds its pod back",
		batches: []Batch{
			containers(map[string]Point{"a": {StartTime: at(0), Timestamp: at(100), CPUNanos: 1e9, Memory: 100}}),
			containers(map[string]Point{"a": {StartTime: at(0), Timestamp: at(115), CPUNanos: 2e9, Memory: 100}, "b": {StartTime: at(0), Timestamp: at(115), CPUNanos: 2e9, Memory: 100}}),
		},
		pod: &want{ok: false},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Store{Resolution: 15 * time.Second}
			for _, b := range tc.batches {
				s.Add(b)
			}
			if w := tc.node; w != nil {
				u, ok := s.Node("n")
				if ok != w.ok {
					t.Fatalf("node ok = %v, want %v", ok, w.ok)
				}
				if ok {
					cpu, mem := u.Resources["cpu"], u.Resources["memory"]
					if cpu.String() != w.cpu || mem.String() != w.mem || !u.Timestamp.Equal(w.timestamp) || u.Window != w.window {
						t.Errorf("node usage = cpu %s memory %s at %s over %s; want %s %s at %s over %s", cpu.String(), mem.String(), u.Timestamp, u.Window, w.cpu, w.mem, w.timestamp, w.window)
					}
				}
			}
			if w := tc.pod; w != nil {
				u, cs, ok := s.Pod(pod)
				if ok != w.ok {
					t.Fatalf("pod ok = %v, want %v", ok, w.ok)
				}
				if !ok {
					return
				}
				if !u.Timestamp.Equal(w.timestamp) || u.Window != w.window {
					t.Errorf("pod at %s over %s, want at %s over %s", u.Timestamp, u.Window, w.timestamp, w.window)
				}
				if len(cs) != len(w.containerCPU) {
					t.Fatalf("containers %+v, want %v", cs, w.containerCPU)
				}
				for _, c := range cs {
					cpu, mem := c.Resources["cpu"], c.Resources["memory"]
					if cpu.String() != w.containerCPU[c.Name] || mem.String() != w.containerMemory[c.Name] {
						t.Errorf("container %s: cpu %s memory %s, want %s %s", c.Name, cpu.String(), mem.String(), w.containerCPU[c.Name], w.containerMemory[c.Name])
					}
				}
			}
		})
	}
}
