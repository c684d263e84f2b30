package eviction

import (
	"context"
	"log/slog"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/record"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// Stats is the kubelet's summary of the node's and its pods' use, as
// upstream's summary provider: the last one taken, or with update a new
// one (after reclaiming, to see what it freed). An error means none is
// available: the manager then skips its pass, as upstream's.
type Stats interface {
	Summary(ctx context.Context, update bool) (*statsapi.Summary, error)
}

// Reclaimer frees what the node holds without evicting pods.
type Reclaimer interface {
	// DeleteAllUnusedContainers removes the dead containers of every pod.
	DeleteAllUnusedContainers(ctx context.Context) error
	// DeleteUnusedImages removes the images no container uses.
	DeleteUnusedImages(ctx context.Context) error
}

// Pods are the kubelet's pods, and how one is evicted.
type Pods interface {
	// ActivePods are the pods that run or are about to.
	ActivePods() []*v1.Pod
	// Evict kills the pod within grace seconds and fails it with the
	// status reason, message and condition given; it returns once the
	// pod's containers are stopped, false when it could not.
	Evict(ctx context.Context, pod *v1.Pod, grace int64, message string, condition v1.PodCondition) bool
}

// Manager runs the eviction loop.
type Manager struct {
	Config    Config
	Stats     Stats
	Reclaimer Reclaimer
	Pods      Pods
	Recorder  record.EventRecorder
	// Node is the node's reference, for its events.
	Node *v1.ObjectReference
	Log  *slog.Logger
	// Interval is the monitoring interval (10 s).
	Interval time.Duration

	mu       sync.Mutex
	state    State
	pressure map[v1.NodeConditionType]bool
	observed bool
}

// Pressure returns the node's pressure conditions, and whether any pass
// has judged them yet.
func (m *Manager) Pressure() (map[v1.NodeConditionType]bool, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[v1.NodeConditionType]bool, len(m.pressure))
	for c, on := range m.pressure {
		out[c] = on
	}
	return out, m.observed
}

// Admit is the kubelet's admission of a new pod under node pressure.
func (m *Manager) Admit(pod *v1.Pod) (bool, string, string) {
	p, _ := m.Pressure()
	ok, msg := Admit(pod, p)
	return ok, Reason, msg
}

// Run passes every Interval until ctx ends. Without Stats (the kubelet
// does not sample) it watches nothing: the node never reports pressure.
func (m *Manager) Run(ctx context.Context) {
	if m.Interval == 0 {
		m.Interval = 10 * time.Second
	}
	if m.Log == nil {
		m.Log = slog.Default()
	}
	if m.Stats == nil {
		m.Log.Warn("eviction manager: no stats, node pressure is not watched")
		return
	}
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		if evicted := m.Synchronize(ctx); evicted != nil {
			m.waitForCleanup(ctx, evicted)
		}
	}, m.Interval)
}

// Synchronize is one pass: it observes, decides, reclaims and evicts at
// most one pod, which it returns.
func (m *Manager) Synchronize(ctx context.Context) *v1.Pod {
	obs, usage, err := m.observe(ctx, false)
	if err != nil {
		m.Log.Warn("eviction manager: failed to get summary stats", "err", err)
		return nil
	}
	now := time.Now()
	m.mu.Lock()
	res := Evaluate(m.Config, obs, m.state, now)
	m.state, m.pressure, m.observed = res.State, res.Pressure, true
	m.mu.Unlock()
	if len(res.Act) == 0 {
		return nil
	}
	t := res.Act[0]
	r := ResourceOf(t.Signal)
	m.Log.Info("eviction manager: attempting to reclaim", "resourceName", r, "signal", t.Signal, "threshold", t.Value.String(), "available", obs[t.Signal].Available)
	if m.Recorder != nil && m.Node != nil {
		m.Recorder.Eventf(m.Node, v1.EventTypeWarning, "EvictionThresholdMet", "Attempting to reclaim %s", r)
	}
	if m.reclaimNodeLevel(ctx, t) {
		return nil
	}
	if obs2, usage2, err := m.observe(ctx, false); err == nil && r != v1.ResourceMemory {
		obs, usage = obs2, usage2
	}
	var candidates []*v1.Pod
	for _, p := range m.Pods.ActivePods() {
		if !IsCritical(p) {
			candidates = append(candidates, p)
		}
	}
	if len(candidates) == 0 {
		m.Log.Error("eviction manager: unable to evict any pods from the node", "resourceName", r)
		return nil
	}
	for _, pod := range Rank(candidates, usage, r) {
		grace := int64(0)
		if !t.Hard() {
			grace = m.Config.MaxPodGracePeriod
			if pod.Spec.TerminationGracePeriodSeconds != nil {
				grace = min(grace, *pod.Spec.TerminationGracePeriodSeconds)
			}
		}
		msg := Message(r, t, obs[t.Signal], pod, usage)
		cond := v1.PodCondition{
			Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: v1.PodReasonTerminationByKubelet,
			Message: msg, LastTransitionTime: metav1.NewTime(now),
		}
		if m.Recorder != nil {
			m.Recorder.Event(pod, v1.EventTypeWarning, Reason, msg)
		}
		m.Log.Info("eviction manager: evicting pod", "pod", pod.Namespace+"/"+pod.Name, "message", msg)
		if m.Pods.Evict(ctx, pod, grace, msg, cond) {
			return pod
		}
	}
	return nil
}

// observe reads the signals and the active pods' use from a summary.
func (m *Manager) observe(ctx context.Context, update bool) (Observations, Usage, error) {
	s, err := m.Stats.Summary(ctx, update)
	if err != nil {
		return nil, nil, err
	}
	obs, usage := Observe(s, m.Pods.ActivePods())
	return obs, usage, nil
}

// reclaimNodeLevel frees dead containers and unused images for a disk
// signal, in upstream's order, and reports whether the threshold is no
// longer met, so that no pod need go.
func (m *Manager) reclaimNodeLevel(ctx context.Context, t Threshold) bool {
	if m.Reclaimer == nil || ConditionOf(t.Signal) != v1.NodeDiskPressure {
		return false
	}
	if err := m.Reclaimer.DeleteAllUnusedContainers(ctx); err != nil {
		m.Log.Warn("eviction manager: delete unused containers", "err", err)
	}
	if err := m.Reclaimer.DeleteUnusedImages(ctx); err != nil {
		m.Log.Warn("eviction manager: delete unused images", "err", err)
	}
	obs, _, err := m.observe(ctx, true)
	if err != nil {
		return false
	}
	if len(thresholdsMet([]Threshold{t}, obs, false)) == 0 {
		m.Log.Info("eviction manager: able to reduce resource pressure without evicting pods", "resourceName", ResourceOf(t.Signal))
		return true
	}
	return false
}

// waitForCleanup waits, up to 30 s, for an evicted pod to leave the
// active pods before the next pass judges the node again, as upstream.
func (m *Manager) waitForCleanup(ctx context.Context, pod *v1.Pod) {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		gone := true
		for _, p := range m.Pods.ActivePods() {
			if p.UID == pod.UID {
				gone = false
			}
		}
		if gone {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}
