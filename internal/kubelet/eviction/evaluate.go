package eviction

import (
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
)

// Observation is one signal's available amount and the capacity its
// percentages are of.
type Observation struct {
	Available, Capacity int64
}

// Observations are the signals seen in one pass; a signal missing was
// not observed and meets no threshold.
type Observations map[Signal]Observation

// State is what the manager remembers between passes.
type State struct {
	// Met are the thresholds acted on in the last pass: they stay met
	// until their minimum reclaim is available again.
	Met []Threshold
	// FirstObserved is when each threshold (by key) was first seen met
	// in the current run of passes.
	FirstObserved map[string]time.Time
	// ConditionLastObserved is when each pressure condition last had a
	// met threshold.
	ConditionLastObserved map[v1.NodeConditionType]time.Time
}

// Result is what one pass decides.
type Result struct {
	State State
	// Pressure are the node conditions that are true.
	Pressure map[v1.NodeConditionType]bool
	// Act are the thresholds to reclaim for, hard ones and soft ones past
	// their grace period, the one to reclaim first at the head.
	Act []Threshold
}

// Evaluate is one pass of upstream's synchronize, up to the choice of
// what to reclaim: thresholds met (with minimum reclaim for those met
// before), when each was first met, the pressure conditions (which
// stay for the transition period) and the thresholds past their grace.
func Evaluate(cfg Config, obs Observations, st State, now time.Time) Result {
	met := thresholdsMet(cfg.Thresholds, obs, false)
	for _, t := range thresholdsMet(st.Met, obs, true) {
		if !hasThreshold(met, t) {
			met = append(met, t)
		}
	}
	first := map[string]time.Time{}
	for _, t := range met {
		k := t.key()
		if at, ok := st.FirstObserved[k]; ok {
			first[k] = at
		} else {
			first[k] = now
		}
	}
	lastSeen := map[v1.NodeConditionType]time.Time{}
	for c, at := range st.ConditionLastObserved {
		lastSeen[c] = at
	}
	for _, t := range met {
		lastSeen[signals[t.Signal].condition] = now
	}
	pressure := map[v1.NodeConditionType]bool{}
	for c, at := range lastSeen {
		if now.Sub(at) < cfg.PressureTransitionPeriod || at.Equal(now) {
			pressure[c] = true
		} else {
			delete(lastSeen, c)
		}
	}
	var act []Threshold
	for _, t := range met {
		if now.Sub(first[t.key()]) >= t.GracePeriod {
			act = append(act, t)
		}
	}
	sortByEvictionPriority(act)
	return Result{
		State:    State{Met: act, FirstObserved: first, ConditionLastObserved: lastSeen},
		Pressure: pressure,
		Act:      act,
	}
}

// thresholdsMet are the thresholds whose signal is below their value
// (plus their minimum reclaim when enforceMinReclaim).
func thresholdsMet(ts []Threshold, obs Observations, enforceMinReclaim bool) []Threshold {
	var out []Threshold
	for _, t := range ts {
		o, ok := obs[t.Signal]
		if !ok {
			continue
		}
		want := t.Value.Of(o.Capacity)
		if enforceMinReclaim && t.MinReclaim != nil {
			want += t.MinReclaim.Of(o.Capacity)
		}
		if o.Available < want {
			out = append(out, t)
		}
	}
	return out
}

func hasThreshold(ts []Threshold, t Threshold) bool {
	for _, x := range ts {
		if x.key() == t.key() {
			return true
		}
	}
	return false
}

// sortByEvictionPriority puts memory first, as upstream's
// byEvictionPriority, then the thresholds whose resource is not inodes
// or pids (so that bytes are reclaimed before inodes), then by signal
// name for a stable order.
func sortByEvictionPriority(ts []Threshold) {
	rank := func(t Threshold) int {
		switch r := signals[t.Signal].resource; {
		case r == v1.ResourceMemory:
			return 0
		case r == v1.ResourceEphemeralStorage:
			return 1
		default:
			return 2
		}
	}
	sort.SliceStable(ts, func(i, j int) bool {
		if ri, rj := rank(ts[i]), rank(ts[j]); ri != rj {
			return ri < rj
		}
		return ts[i].Signal < ts[j].Signal
	})
}

// ResourceOf is the resource evictions for a signal reclaim.
func ResourceOf(s Signal) v1.ResourceName { return signals[s].resource }

// ConditionOf is the node condition a signal raises.
func ConditionOf(s Signal) v1.NodeConditionType { return signals[s].condition }
