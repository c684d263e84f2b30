package kubelet

import (
	"fmt"
	"log/slog"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/orca-project/orca/internal/kubelet/podstatus"
)

// This file is the kubelet's decision for one pod, as upstream's
// computePodActions: from the pod's spec and what the runtime holds, a
// plan of what to do next. It calls nothing and reads no clock; run
// (sync.go) gathers its input, carries the plan out and adds what only
// the doing tells (a start that failed and when to try it again).

// syncInput is what computePodActions decides from.
type syncInput struct {
	// pod is the pod as the kubelet is to run it (its allocated
	// resources).
	pod *v1.Pod
	// runtime is what the runtime holds for the pod (nil: nothing).
	runtime *podRuntime
	// probeFailed maps each running container of the current sandbox
	// whose liveness or startup probe failed to why ("failed liveness
	// probe").
	probeFailed map[string]string
	// sidecarStarted tells, for each running sidecar of the current
	// sandbox, whether it has started: passed its startup probe, or has
	// none.
	sidecarStarted map[string]bool
	// backoff is, for each container whose newest run exited, the
	// crash-loop back-off that run is under.
	backoff map[string]backoffHold
	// waiting is the reason each container waits for, as the status
	// reports it now.
	waiting map[string]string
	now     time.Time
}

// backoffHold is a container's crash-loop back-off as it stands.
type backoffHold struct {
	// wait is the current back-off.
	wait time.Duration
	// held means the back-off since the run finished is not over.
	held bool
}

// sandboxAction is what the pod's sandbox needs.
type sandboxAction int

const (
	// sandboxKeep: the newest sandbox is ready; the containers are next.
	sandboxKeep sandboxAction = iota
	// sandboxCreate: there is no ready sandbox and something is to run.
	sandboxCreate
	// sandboxLeave: the sandbox is gone and nothing in it is to run again
	// (a finished pod that does not restart).
	sandboxLeave
)

// podActions is the plan for one pod, in the order run carries it out:
// the sandbox; then, in the ready sandbox, the ephemeral containers
// (before the in-place resize, which may cut the pass short), the init
// and regular containers' steps, the sidecars to stop and the garbage.
type podActions struct {
	sandbox sandboxAction
	// killPod asks to stop what is left of the old sandbox before the new
	// one is created: a sandbox that died takes its containers with it.
	killPod bool
	// attempt is the new sandbox's attempt.
	attempt uint32

	ephemeral []step
	steps     []step
	// initFailed means a regular init container failed under
	// restartPolicy Never: the pod has failed, nothing more is started.
	initFailed bool
	// stopSidecars are the running sidecars to stop, the last started
	// first, once the regular containers are done for good.
	stopSidecars []stopSidecar
	garbage      garbage
	// requeue is when the pod wants looking at again for what the plan
	// itself knows (a back-off running out, a container just killed);
	// 0: no reason.
	requeue time.Duration
}

// step is one thing to do to one container.
type step interface {
	String() string
}

// startRun starts a new run of an init or regular container.
type startRun struct {
	c       *v1.Container
	init    bool
	attempt uint32
	// restartOf, when set, is when the run this one replaces finished:
	// the restart goes into the crash-loop back-off.
	restartOf time.Time
}

// startEphemeral starts an ephemeral container, in its target's process
// namespace (target is the target's runtime ID) unless targetErr says
// the target has not run.
type startEphemeral struct {
	index     int
	name      string
	target    string
	targetErr error
}

// startCreated starts a container that was created but never started: a
// kubelet stopped between the two steps. report says whether a failure
// is an event.
type startCreated struct {
	name, id string
	report   bool
}

// killRun stops a running container whose probe failed, for it to be
// restarted.
type killRun struct {
	c      *v1.Container
	id     string
	reason string
}

// backOff holds a crashed container's restart back.
type backOff struct {
	name, message string
	// event means the container was not in CrashLoopBackOff yet: the
	// BackOff event is recorded once per stretch of waiting.
	event bool
}

// clearWaiting drops the waiting reason of a container that runs or is
// done.
type clearWaiting struct{ name string }

// stopSidecar stops a sidecar, at the end of the pod's work or of the pod.
type stopSidecar struct {
	c  *v1.Container
	id string
}

// garbage is what the runtime holds for the pod that is no longer
// needed.
type garbage struct {
	containers, sandboxes []string
}

func (s startRun) String() string {
	kind := "container"
	if s.init {
		kind = "init container"
	}
	out := fmt.Sprintf("start %s %s attempt %d", kind, s.c.Name, s.attempt)
	if !s.restartOf.IsZero() {
		out += " (restart)"
	}
	return out
}

func (s startEphemeral) String() string {
	switch {
	case s.targetErr != nil:
		return fmt.Sprintf("ephemeral container %s: %v", s.name, s.targetErr)
	case s.target != "":
		return fmt.Sprintf("start ephemeral container %s targeting %s", s.name, s.target)
	}
	return "start ephemeral container " + s.name
}

func (s startCreated) String() string { return "start created " + s.id }
func (s killRun) String() string      { return fmt.Sprintf("kill %s: %s", s.id, s.reason) }
func (s clearWaiting) String() string { return "running or done: " + s.name }
func (s stopSidecar) String() string  { return "stop sidecar " + s.id }

func (s backOff) String() string {
	out := "back off " + s.name + ": " + s.message
	if s.event {
		out += " (event)"
	}
	return out
}

// String lists the plan, one action a line, for tests and logs.
func (a podActions) String() string {
	var lines []string
	switch a.sandbox {
	case sandboxCreate:
		if a.killPod {
			lines = append(lines, "kill pod")
		}
		lines = append(lines, fmt.Sprintf("create sandbox attempt %d", a.attempt))
	case sandboxLeave:
		lines = append(lines, "leave sandbox down")
	}
	for _, s := range a.ephemeral {
		lines = append(lines, s.String())
	}
	for _, s := range a.steps {
		lines = append(lines, s.String())
	}
	if a.initFailed {
		lines = append(lines, "init failed")
	}
	for _, s := range a.stopSidecars {
		lines = append(lines, s.String())
	}
	for _, id := range a.garbage.containers {
		lines = append(lines, "remove container "+id)
	}
	for _, id := range a.garbage.sandboxes {
		lines = append(lines, "remove sandbox "+id)
	}
	if a.requeue > 0 {
		lines = append(lines, "requeue "+a.requeue.String())
	}
	return strings.Join(lines, "\n")
}

// LogValue prints the plan in logs, only when the record is written.
func (a podActions) LogValue() slog.Value { return slog.StringValue(a.String()) }

// computePodActions decides the pod's next steps, as upstream's: a
// sandbox first (a new one, with the next attempt, when the last died
// and anything is to run again); ephemeral containers, which wait for
// nothing; init containers one at a time, in order, sidecars among them
// restarted and probed as regular containers; then the regular
// containers under the pod's restart policy and the crash-loop back-off;
// the sidecars stopped once the regular containers are done for good;
// and the old runs and sandboxes removed.
func computePodActions(in syncInput) podActions {
	pod, rtp := in.pod, in.runtime
	var a podActions
	sb := readySandbox(rtp)
	if sb == nil {
		hadSandbox := rtp != nil && len(rtp.Sandboxes) > 0
		switch {
		case hadSandbox && !shouldRestartAnything(pod, rtp):
			a.sandbox = sandboxLeave
		case hadSandbox:
			a.sandbox, a.killPod, a.attempt = sandboxCreate, true, rtp.Sandboxes[0].Attempt+1
		default:
			a.sandbox = sandboxCreate
		}
		return a
	}
	all := rtp.byName()
	// Containers of an older sandbox do not count as this sandbox's runs.
	current := runsIn(rtp, sb.ID)

	// Ephemeral containers come first, as upstream's: a debugger must be
	// able to start while an init container keeps failing.
	for _, i := range ephemeralToStart(pod, all) {
		ec := &pod.Spec.EphemeralContainers[i]
		target, err := ephemeralTarget(ec, current)
		a.ephemeral = append(a.ephemeral, startEphemeral{index: i, name: ec.Name, target: target, targetErr: err})
	}
	for _, ec := range pod.Spec.EphemeralContainers {
		if runs := current[ec.Name]; len(runs) > 0 && starting(runs[0], in.now) {
			a.ephemeral = append(a.ephemeral, startCreated{name: ec.Name, id: runs[0].ID})
		}
	}

	// Init containers one at a time, in order; sidecars among them keep
	// running, and are probed and restarted as regular containers.
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		runs := current[c.Name]
		if len(runs) == 0 {
			continue
		}
		switch cur := runs[0]; {
		case starting(cur, in.now):
			a.steps = append(a.steps, startCreated{name: c.Name, id: cur.ID})
		case cur.State == podstatus.Running && podstatus.IsSidecar(c):
			a.runningOrKill(in, c, cur.ID)
		}
	}
	started := func(c *v1.Container, _ string) bool { return in.sidecarStarted[c.Name] }
	plan := planInit(pod, current, started, in.now)
	if plan.failed {
		a.initFailed = true
		return a
	}
	// Once the regular containers are done for good, sidecars are not
	// restarted but stopped, as upstream.
	finishing := regularContainersDone(pod, current)
	if !finishing {
		for _, i := range plan.start {
			c := &pod.Spec.InitContainers[i]
			a.startOrBackOff(in, c, true, all[c.Name])
		}
	}
	if !plan.done {
		return a
	}

	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		runs := current[c.Name]
		if len(runs) == 0 {
			a.startOrBackOff(in, c, false, all[c.Name])
			continue
		}
		switch cur := runs[0]; cur.State {
		case podstatus.Running:
			a.runningOrKill(in, c, cur.ID)
		case podstatus.Created:
			a.steps = append(a.steps, startCreated{name: c.Name, id: cur.ID, report: true})
		case podstatus.Exited:
			if !shouldRestart(pod.Spec.RestartPolicy, cur.ExitCode) {
				a.steps = append(a.steps, clearWaiting{c.Name})
				continue
			}
			a.startOrBackOff(in, c, false, all[c.Name])
		}
	}
	if finishing {
		a.stopSidecars = sidecarsToStop(pod, current)
	}
	a.garbage = garbageOf(rtp, sb.ID)
	return a
}

// runningOrKill keeps a running container, or kills it when its liveness
// or startup probe failed, for the restart to follow at once.
func (a *podActions) runningOrKill(in syncInput, c *v1.Container, id string) {
	if why, failed := in.probeFailed[c.Name]; failed {
		a.steps = append(a.steps, killRun{c: c, id: id, reason: why})
		a.soonest(time.Millisecond)
		return
	}
	a.steps = append(a.steps, clearWaiting{c.Name})
}

// startOrBackOff starts a container's next run unless the run before
// crashed and its back-off still holds; runs are all its runs, in every
// sandbox, newest first (the attempt counts on across sandboxes).
func (a *podActions) startOrBackOff(in syncInput, c *v1.Container, init bool, runs []container) {
	s := startRun{c: c, init: init}
	if len(runs) > 0 {
		last := runs[0]
		s.attempt = last.Attempt + 1
		if last.State == podstatus.Exited {
			if h := in.backoff[c.Name]; h.held {
				pod := in.pod
				a.steps = append(a.steps, backOff{
					name:    c.Name,
					message: fmt.Sprintf("back-off %s restarting failed container=%s pod=%s_%s(%s)", h.wait, c.Name, pod.Name, pod.Namespace, pod.UID),
					event:   in.waiting[c.Name] != "CrashLoopBackOff",
				})
				a.soonest(max(last.FinishedAt.Add(h.wait).Sub(in.now), 10*time.Millisecond))
				return
			}
			s.restartOf = last.FinishedAt
		}
	}
	a.steps = append(a.steps, s)
}

func (a *podActions) soonest(d time.Duration) {
	if d > 0 && (a.requeue == 0 || d < a.requeue) {
		a.requeue = d
	}
}

// starting reports whether a run was created but never started, recently
// enough to be started now rather than replaced (see createdGrace).
func starting(r container, now time.Time) bool {
	return r.State == podstatus.Created && r.StartedAt.IsZero() && now.Sub(r.CreatedAt) < createdGrace
}

// runsIn groups the runs of one sandbox by container name, newest first.
func runsIn(rtp *podRuntime, sandboxID string) map[string][]container {
	out := map[string][]container{}
	if rtp == nil {
		return out
	}
	for _, c := range rtp.Containers {
		if c.SandboxID == sandboxID {
			out[c.Name] = append(out[c.Name], c)
		}
	}
	return out
}

func shouldRestart(policy v1.RestartPolicy, exitCode int32) bool {
	switch policy {
	case v1.RestartPolicyNever:
		return false
	case v1.RestartPolicyOnFailure:
		return exitCode != 0
	}
	return true
}

// shouldRestartAnything reports whether a pod whose sandbox is gone still
// has containers to run; a finished Never pod does not get a new sandbox.
func shouldRestartAnything(pod *v1.Pod, rtp *podRuntime) bool {
	byName := rtp.byName()
	for _, c := range pod.Spec.Containers {
		runs := byName[c.Name]
		if len(runs) == 0 || runs[0].State != podstatus.Exited || shouldRestart(pod.Spec.RestartPolicy, runs[0].ExitCode) {
			return true
		}
	}
	return false
}

// sidecarsToStop lists the pod's running (or starting) sidecars among
// runs, the last started first, as upstream stops them after the regular
// containers.
func sidecarsToStop(pod *v1.Pod, runs map[string][]container) []stopSidecar {
	var out []stopSidecar
	for i := len(pod.Spec.InitContainers) - 1; i >= 0; i-- {
		c := &pod.Spec.InitContainers[i]
		r := runs[c.Name]
		if !podstatus.IsSidecar(c) || len(r) == 0 || (r[0].State != podstatus.Running && r[0].State != podstatus.Created) {
			continue
		}
		out = append(out, stopSidecar{c: c, id: r[0].ID})
	}
	return out
}

// garbageOf finds the exited runs beyond the two newest of each
// container (the current and the previous, for logs --previous) and the
// sandboxes, other than the current one, that are stopped and hold no
// container any more.
func garbageOf(rtp *podRuntime, current string) garbage {
	var g garbage
	if rtp == nil {
		return g
	}
	seen := map[string]int{}
	for _, c := range rtp.Containers {
		if c.State != podstatus.Exited {
			continue
		}
		seen[c.Name]++
		if seen[c.Name] > 2 {
			g.containers = append(g.containers, c.ID)
		}
	}
	for _, s := range rtp.Sandboxes {
		if s.ID == current || s.Ready {
			continue
		}
		hasContainers := false
		for _, c := range rtp.Containers {
			if c.SandboxID == s.ID {
				hasContainers = true
			}
		}
		if !hasContainers {
			g.sandboxes = append(g.sandboxes, s.ID)
		}
	}
	return g
}
