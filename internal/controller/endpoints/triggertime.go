package endpoints

import (
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
)

// TriggerTimeTracker computes the endpoints.kubernetes.io/last-change-trigger-time
// annotation as upstream does: the earliest change (a pod's Ready
// transition, or the service's creation) not yet reflected in the
// service's endpoints. It remembers, per service, what the previous sync
// saw.
type TriggerTimeTracker struct {
	mu     sync.Mutex
	states map[string]triggerState
}

type triggerState struct {
	pods    map[string]time.Time
	service time.Time
}

// NewTriggerTimeTracker returns a tracker that knows no service yet.
func NewTriggerTimeTracker() *TriggerTimeTracker {
	return &TriggerTimeTracker{states: map[string]triggerState{}}
}

// Observation is what one sync saw, to be recorded with Commit once its
// result is written; a failed write leaves the tracker as it was, so that
// the retry reports the same trigger time.
type Observation struct {
	key   string
	state triggerState
}

// Compute returns the trigger time for this sync of svc over pods (zero
// when nothing changed since the last committed sync) and what it saw.
func (t *TriggerTimeTracker) Compute(svc *v1.Service, pods []*v1.Pod) (time.Time, Observation) {
	key := svc.Namespace + "/" + svc.Name
	t.mu.Lock()
	prev, known := t.states[key]
	t.mu.Unlock()
	next := triggerState{pods: map[string]time.Time{}, service: svc.CreationTimestamp.Time}
	var earliest time.Time
	note := func(ts time.Time) {
		if earliest.IsZero() || ts.Before(earliest) {
			earliest = ts
		}
	}
	for _, pod := range pods {
		ts := podTriggerTime(pod)
		if ts.IsZero() {
			continue
		}
		next.pods[pod.Name] = ts
		if ts.After(prev.pods[pod.Name]) {
			note(ts)
		}
	}
	if next.service.After(prev.service) {
		note(next.service)
	}
	obs := Observation{key: key, state: next}
	if !known {
		return svc.CreationTimestamp.Time, obs
	}
	return earliest, obs
}

// Commit records a sync's observation.
func (t *TriggerTimeTracker) Commit(o Observation) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.states[o.key] = o.state
}

// Forget drops a deleted service's state.
func (t *TriggerTimeTracker) Forget(namespace, name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.states, namespace+"/"+name)
}

func podTriggerTime(pod *v1.Pod) time.Time {
	for _, c := range pod.Status.Conditions {
		if c.Type == v1.PodReady {
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{}
}
