package metricsserver

import (
	"fmt"
	"math"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
)

// freshContainerMinResolution is metrics-server's: a container younger
// than the scrape period but at least this old gets a point at its start
// (CPU 0) as its previous one, so it has metrics after one scrape.
const freshContainerMinResolution = 10 * time.Second

// Store keeps the last two points of every node and container, as
// metrics-server's storage: a point replaces the last only when newer,
// and a container that restarted starts over.
type Store struct {
	// Resolution is the scrape period.
	Resolution time.Duration

	lastNodes, prevNodes map[string]Point
	lastPods, prevPods   map[types.NamespacedName]map[string]Point
}

// Add takes one round of scrapes of every node.
func (s *Store) Add(b Batch) {
	lastNodes := make(map[string]Point, len(b.Nodes))
	prevNodes := make(map[string]Point, len(b.Nodes))
	for name, p := range b.Nodes {
		lastNodes[name] = p
		if last, ok := s.lastNodes[name]; ok {
			if p.Timestamp.After(last.Timestamp) {
				prevNodes[name] = last
			} else if prev, ok := s.prevNodes[name]; ok && prev.Timestamp.Before(p.Timestamp) {
				prevNodes[name] = prev
			}
		}
	}
	lastPods := make(map[types.NamespacedName]map[string]Point, len(b.Pods))
	prevPods := make(map[types.NamespacedName]map[string]Point, len(b.Pods))
	for ref, containers := range b.Pods {
		last := make(map[string]Point, len(containers))
		prev := make(map[string]Point, len(containers))
		for name, p := range containers {
			last[name] = p
			age := p.Timestamp.Sub(p.StartTime)
			if p.StartTime.Before(p.Timestamp) && age < s.Resolution && age >= freshContainerMinResolution {
				start := p
				start.Timestamp, start.CPUNanos = p.StartTime, 0
				prev[name] = start
				continue
			}
			stored, ok := s.lastPods[ref][name]
			// A start after the stored point is a restart: start over.
			if !ok || !p.StartTime.Before(stored.Timestamp) {
				continue
			}
			if p.Timestamp.After(stored.Timestamp) {
				prev[name] = stored
			} else if older, ok := s.prevPods[ref][name]; ok && older.Timestamp.Before(p.Timestamp) {
				prev[name] = older
			}
		}
		lastPods[ref] = last
		if len(prev) > 0 {
			prevPods[ref] = prev
		}
	}
	s.lastNodes, s.prevNodes, s.lastPods, s.prevPods = lastNodes, prevNodes, lastPods, prevPods
}

// Usage is a node's or pod's usage over its window.
type Usage struct {
	Timestamp time.Time
	Window    time.Duration
	Resources corev1.ResourceList
}

// ContainerUsage is one container's usage in a pod's.
type ContainerUsage struct {
	Name      string
	Resources corev1.ResourceList
}

// Node is the node's usage; false without two points.
func (s *Store) Node(name string) (Usage, bool) {
	last, ok := s.lastNodes[name]
	if !ok {
		return Usage{}, false
	}
	prev, ok := s.prevNodes[name]
	if !ok {
		return Usage{}, false
	}
	u, err := usage(last, prev)
	return u, err == nil
}

// Pod is the pod's containers' usage, with the earliest of their times
// and its window; false unless every container has two points.
func (s *Store) Pod(ref types.NamespacedName) (Usage, []ContainerUsage, bool) {
	last, ok := s.lastPods[ref]
	if !ok {
		return Usage{}, nil, false
	}
	prev, ok := s.prevPods[ref]
	if !ok {
		return Usage{}, nil, false
	}
	var earliest Usage
	out := make([]ContainerUsage, 0, len(last))
	for name, l := range last {
		p, ok := prev[name]
		if !ok {
			return Usage{}, nil, false
		}
		u, err := usage(l, p)
		if err != nil {
			continue
		}
		out = append(out, ContainerUsage{Name: name, Resources: u.Resources})
		if earliest.Timestamp.IsZero() || earliest.Timestamp.After(u.Timestamp) {
			earliest = u
		}
	}
	return Usage{Timestamp: earliest.Timestamp, Window: earliest.Window}, out, true
}

// usage is metrics-server's rate between two points: CPU as the counter's
// rate over the window in nano-cores, memory as the last working set.
func usage(last, prev Point) (Usage, error) {
	if last.StartTime.Before(prev.StartTime) {
		return Usage{}, fmt.Errorf("unexpected decrease in startTime of node/container")
	}
	if last.CPUNanos < prev.CPUNanos {
		return Usage{}, fmt.Errorf("unexpected decrease in cumulative CPU usage value")
	}
	window := last.Timestamp.Sub(prev.Timestamp)
	cpu := float64(last.CPUNanos-prev.CPUNanos) / window.Seconds()
	return Usage{
		Timestamp: last.Timestamp, Window: window,
		Resources: corev1.ResourceList{
			corev1.ResourceCPU:    quantity(uint64(cpu), resource.DecimalSI, -9),
			corev1.ResourceMemory: quantity(last.Memory, resource.BinarySI, 0),
		},
	}, nil
}

// quantity makes a Quantity of an unsigned value, giving up a digit of
// precision above what an int64 holds.
func quantity(v uint64, format resource.Format, scale resource.Scale) resource.Quantity {
	q := *resource.NewScaledQuantity(int64(v), scale)
	if v > math.MaxInt64 {
		q = *resource.NewScaledQuantity(int64(v/10), scale+1)
	}
	q.Format = format
	return q
}
