package simnode

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/orca-project/orca/internal/kubelet/podstatus"
)

// Annotations a pod steers its simulated run with.
const (
	RunDurationAnnotation  = "sim.orca.io/run-duration"
	ExitCodeAnnotation     = "sim.orca.io/exit-code"
	StopDurationAnnotation = "sim.orca.io/stop-duration"
)

// runtimeScheme prefixes simulated container IDs, so that nobody takes
// them for containerd's.
const runtimeScheme = "simulated://"

// PodInput is what a pod's next step depends on.
type PodInput struct {
	Pod *v1.Pod
	// PodIP is the address the pod holds; empty for a host-network pod.
	PodIP  string
	HostIP string
	Now    time.Time
}

// PodPlan is what the simulated kubelet does for a pod now.
type PodPlan struct {
	// Status is the status to send; nil when the pod shows it already.
	Status *v1.PodStatus
	// Delete says to remove the pod (grace 0): its containers stopped.
	Delete bool
	// Wake is when the pod's status changes next by the clock alone
	// (a readiness delay, the end of a run, a grace period); zero for
	// never.
	Wake time.Time
}

// Plan decides a pod's next step from its spec, its observed status and
// the clock. The status it computes depends only on those, so that a
// restarted simulator recomputes what it sent before and writes nothing.
func Plan(in PodInput) PodPlan {
	pod := in.Pod
	now := in.Now.Truncate(time.Second)
	terminal := pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed
	if pod.DeletionTimestamp != nil {
		// A pod that never started, or has finished, has nothing to stop.
		if terminal || pod.Status.StartTime == nil {
			return PodPlan{Delete: true}
		}
		done := stopDeadline(pod)
		if !in.Now.Before(done) {
			return PodPlan{Delete: true}
		}
		return PodPlan{Wake: done}
	}
	if terminal {
		return PodPlan{}
	}
	start := now
	if pod.Status.StartTime != nil {
		start = pod.Status.StartTime.Time
	}
	runs, ready, wake := timeline(pod, start, in.Now)
	var podIPs []string
	if in.PodIP != "" {
		podIPs = []string{in.PodIP}
	}
	st := podstatus.Compute(podstatus.Input{
		Pod: pod, SandboxReady: true, PodIPs: podIPs, HostIPs: []string{in.HostIP},
		Instances: runs, Ready: ready, Now: now,
	})
	rescheme(&st)
	if st.Phase == v1.PodSucceeded || st.Phase == v1.PodFailed {
		wake = time.Time{}
	}
	plan := PodPlan{Wake: wake}
	if !equality.Semantic.DeepEqual(st, pod.Status) {
		plan.Status = &st
	}
	return plan
}

// stopDeadline is when a deleted pod's containers have stopped: after its
// stop duration, at most its grace period (the deletion timestamp is the
// request's time plus the grace period).
func stopDeadline(pod *v1.Pod) time.Time {
	deadline := pod.DeletionTimestamp.Time
	stop, ok := duration(pod, StopDurationAnnotation)
	if !ok || pod.DeletionGracePeriodSeconds == nil {
		return deadline
	}
	requested := deadline.Add(-time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second)
	if t := requested.Add(stop); t.Before(deadline) {
		return t
	}
	return deadline
}

// timeline is the runs of every container at now for a pod started at
// start, which containers passed their readiness probe, and when that
// next changes. Init containers complete at once, in order; the regular
// containers and sidecars start with the pod. A run duration ends the
// regular containers then; where the restart policy would restart them,
// they start again at once (no back-off), one run after another.
func timeline(pod *v1.Pod, start, now time.Time) (map[string][]podstatus.Instance, map[string]bool, time.Time) {
	runs := map[string][]podstatus.Instance{}
	ready := map[string]bool{}
	var wake time.Time
	soonest := func(t time.Time) {
		if t.After(now) && (wake.IsZero() || t.Before(wake)) {
			wake = t
		}
	}
	d, limited := duration(pod, RunDurationAnnotation)
	limited = limited && d > 0
	code := exitCode(pod)
	restarts := pod.Spec.RestartPolicy == v1.RestartPolicyAlways ||
		pod.Spec.RestartPolicy == v1.RestartPolicyOnFailure && code != 0
	finished := limited && !restarts && !now.Before(start.Add(d))

	running := func(c *v1.Container, attempt uint32, from time.Time) podstatus.Instance {
		delay := time.Duration(0)
		if p := c.ReadinessProbe; p != nil {
			delay = time.Duration(p.InitialDelaySeconds) * time.Second
		}
		ready[c.Name] = !now.Before(from.Add(delay))
		soonest(from.Add(delay))
		return podstatus.Instance{ID: containerID(pod, c.Name, attempt), Attempt: attempt, State: podstatus.Running,
			CreatedAt: from, StartedAt: from, ImageRef: c.Image}
	}
	exited := func(c *v1.Container, attempt uint32, from, to time.Time, code int32) podstatus.Instance {
		return podstatus.Instance{ID: containerID(pod, c.Name, attempt), Attempt: attempt, State: podstatus.Exited,
			CreatedAt: from, StartedAt: from, FinishedAt: to, ExitCode: code, ImageRef: c.Image}
	}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		switch {
		case !podstatus.IsSidecar(c):
			runs[c.Name] = []podstatus.Instance{exited(c, 0, start, start, 0)}
		case finished:
			runs[c.Name] = []podstatus.Instance{exited(c, 0, start, start.Add(d), 0)}
		default:
			runs[c.Name] = []podstatus.Instance{running(c, 0, start)}
		}
	}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		switch {
		case !limited:
			runs[c.Name] = []podstatus.Instance{running(c, 0, start)}
		case !restarts:
			if finished {
				runs[c.Name] = []podstatus.Instance{exited(c, 0, start, start.Add(d), code)}
			} else {
				runs[c.Name] = []podstatus.Instance{running(c, 0, start)}
				soonest(start.Add(d))
			}
		default:
			n := max(now.Sub(start)/d, 0)
			from := start.Add(n * d)
			list := []podstatus.Instance{running(c, uint32(n), from)}
			if n > 0 {
				list = append(list, exited(c, uint32(n-1), from.Add(-d), from, code))
			}
			runs[c.Name] = list
			soonest(from.Add(d))
		}
	}
	return runs, ready, wake
}

// duration reads a duration annotation, rounded up to whole seconds
// because the API keeps times to the second; a malformed one counts as
// absent.
func duration(pod *v1.Pod, key string) (time.Duration, bool) {
	s, ok := pod.Annotations[key]
	if !ok {
		return 0, false
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, false
	}
	if r := d.Truncate(time.Second); r < d {
		d = r + time.Second
	}
	return d, true
}

func exitCode(pod *v1.Pod) int32 {
	n, err := strconv.ParseInt(pod.Annotations[ExitCodeAnnotation], 10, 32)
	if err != nil {
		return 0
	}
	return int32(n)
}

// containerID is a stable ID for one run of a container, so that the
// same run always reports the same ID.
func containerID(pod *v1.Pod, name string, attempt uint32) string {
	sum := sha256.Sum256([]byte(string(pod.UID) + "/" + name + "/" + strconv.FormatUint(uint64(attempt), 10)))
	return hex.EncodeToString(sum[:])
}

// rescheme gives the container IDs the simulated runtime's scheme: the
// status computation is the real kubelet's, which names containerd.
func rescheme(st *v1.PodStatus) {
	fix := func(id *string) {
		if rest, ok := strings.CutPrefix(*id, "containerd://"); ok {
			*id = runtimeScheme + rest
		}
	}
	for _, list := range [][]v1.ContainerStatus{st.InitContainerStatuses, st.ContainerStatuses, st.EphemeralContainerStatuses} {
		for i := range list {
			fix(&list[i].ContainerID)
			if t := list[i].State.Terminated; t != nil {
				fix(&t.ContainerID)
			}
			if t := list[i].LastTerminationState.Terminated; t != nil {
				fix(&t.ContainerID)
			}
		}
	}
}
