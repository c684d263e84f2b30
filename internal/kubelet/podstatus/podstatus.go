// Package podstatus computes a pod's status from what the runtime reports
// about its sandbox and containers and from the kubelet's own knowledge
// (probe results, why a container is waiting). It is a pure function so
// that upstream's phase and condition rules can be table-tested.
package podstatus

import (
	"fmt"
	"sort"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// State is a container instance's runtime state.
type State int

const (
	Created State = iota
	Running
	Exited
	Unknown
)

// Instance is one run of a container, as the runtime reports it.
type Instance struct {
	ID         string
	Attempt    uint32
	State      State
	CreatedAt  time.Time
	StartedAt  time.Time
	FinishedAt time.Time
	ExitCode   int32
	Reason     string
	Message    string
	ImageRef   string
	// Resources is what a running instance holds; nil when unknown.
	Resources *ActualResources
}

// Waiting is why the kubelet has not (re)started a container.
type Waiting struct {
	Reason, Message string
}

// Input is everything the status depends on.
type Input struct {
	Pod *v1.Pod
	// SandboxReady is whether the newest sandbox runs with its network.
	SandboxReady bool
	PodIPs       []string
	HostIPs      []string
	// Instances holds each container's runs by name, newest first.
	Instances map[string][]Instance
	// Waiting says why a container is not running, when the kubelet knows.
	Waiting map[string]Waiting
	// Ready and Started are probe results; a container without the probe
	// is ready (started) as soon as it runs.
	Ready   map[string]bool
	Started map[string]bool
	// Terminating is set while the pod's containers are being stopped for
	// deletion: nothing is ready then.
	Terminating bool
	// Failure, when set, is why the kubelet failed the pod as a whole
	// (past its activeDeadlineSeconds): the phase is Failed with that
	// reason and message.
	Failure *Failure
	// Allocated is the resources the kubelet allocated to each container
	// by name; a container missing here has its spec's.
	Allocated map[string]v1.ResourceRequirements
	// Resize holds the PodResizePending and PodResizeInProgress
	// conditions the kubelet keeps; a finished pod shows neither.
	Resize []v1.PodCondition
	Now    time.Time
}

// Failure is the reason and message of a pod the kubelet failed.
type Failure struct {
	Reason, Message string
	// Condition, when set, is added to the pod's conditions (an evicted
	// pod's DisruptionTarget).
	Condition *v1.PodCondition
}

// Compute returns the pod's new status.
func Compute(in Input) v1.PodStatus {
	pod := in.Pod
	old := pod.Status
	st := v1.PodStatus{
		// The generation of the pod this status judged.
		ObservedGeneration: pod.Generation,
		QOSClass:           old.QOSClass,
		NominatedNodeName:  old.NominatedNodeName,
		StartTime:          old.StartTime,
		Reason:             old.Reason,
		Message:            old.Message,
	}
	if st.QOSClass == "" {
		st.QOSClass = QOSClass(pod)
	}
	if st.StartTime == nil {
		t := metav1.NewTime(in.Now)
		st.StartTime = &t
	}
	for _, ip := range in.HostIPs {
		st.HostIPs = append(st.HostIPs, v1.HostIP{IP: ip})
	}
	if len(in.HostIPs) > 0 {
		st.HostIP = in.HostIPs[0]
	}
	if pod.Spec.HostNetwork {
		in.PodIPs = in.HostIPs
	}
	for _, ip := range in.PodIPs {
		st.PodIPs = append(st.PodIPs, v1.PodIP{IP: ip})
	}
	if len(in.PodIPs) > 0 {
		st.PodIP = in.PodIPs[0]
	}

	for _, c := range pod.Spec.InitContainers {
		st.InitContainerStatuses = append(st.InitContainerStatuses, containerStatus(in, &c, true))
	}
	for _, c := range pod.Spec.Containers {
		st.ContainerStatuses = append(st.ContainerStatuses, containerStatus(in, &c, false))
	}
	for i := range pod.Spec.EphemeralContainers {
		st.EphemeralContainerStatuses = append(st.EphemeralContainerStatuses, ephemeralStatus(in, &pod.Spec.EphemeralContainers[i]))
	}
	st.Phase = Phase(pod.Spec, st.InitContainerStatuses, st.ContainerStatuses, regularStarted(in))
	// A pod that finished stays finished: upstream never moves a terminal
	// phase back.
	if old.Phase == v1.PodSucceeded || old.Phase == v1.PodFailed {
		st.Phase = old.Phase
	}
	if f := in.Failure; f != nil && st.Phase != v1.PodSucceeded {
		st.Phase, st.Reason, st.Message = v1.PodFailed, f.Reason, f.Message
	}
	st.Conditions = conditions(in, st)
	return st
}

func containerStatus(in Input, c *v1.Container, init bool) v1.ContainerStatus {
	cs := v1.ContainerStatus{Name: c.Name, Image: c.Image}
	runs := in.Instances[c.Name]
	if len(runs) == 0 {
		w, ok := in.Waiting[c.Name]
		if !ok {
			w = Waiting{Reason: "ContainerCreating"}
			if init || !initialized(in) {
				w.Reason = "PodInitializing"
			}
			if init && !isNextInit(in, c.Name) {
				w.Reason = "PodInitializing"
			}
		}
		cs.State.Waiting = &v1.ContainerStateWaiting{Reason: w.Reason, Message: w.Message}
		f := false
		cs.Started = &f
		return cs
	}
	cur := runs[0]
	cs.RestartCount = int32(cur.Attempt)
	cs.ContainerID = "containerd://" + cur.ID
	cs.ImageID = cur.ImageRef
	// As upstream, every container with a run reports its allocation and
	// what it holds; only the requests are "allocated".
	alloc := allocatedOf(in, c)
	cs.AllocatedResources = alloc.Requests.DeepCopy()
	cs.Resources = statusResources(alloc, cur)
	if len(runs) > 1 && runs[1].State == Exited {
		cs.LastTerminationState.Terminated = terminated(runs[1])
	}
	started := false
	switch cur.State {
	case Running:
		cs.State.Running = &v1.ContainerStateRunning{StartedAt: metav1.NewTime(cur.StartedAt)}
		started = true
		if s, ok := in.Started[c.Name]; ok {
			started = s
		}
		ready := started
		if r, ok := in.Ready[c.Name]; ok {
			ready = ready && r
		}
		cs.Ready = ready && !in.Terminating
		if init && !IsSidecar(c) {
			// A regular init container is never ready while it runs; a
			// sidecar is, as a regular container.
			cs.Ready = false
		}
	case Exited:
		if w, ok := in.Waiting[c.Name]; ok {
			// Waiting to be restarted: the run that ended is the last state.
			cs.State.Waiting = &v1.ContainerStateWaiting{Reason: w.Reason, Message: w.Message}
			cs.LastTerminationState = v1.ContainerState{Terminated: terminated(cur)}
		} else {
			cs.State.Terminated = terminated(cur)
			if init && !IsSidecar(c) && cur.ExitCode == 0 {
				cs.Ready = true
			}
		}
	default:
		w, ok := in.Waiting[c.Name]
		if !ok {
			w = Waiting{Reason: "ContainerCreating"}
		}
		cs.State.Waiting = &v1.ContainerStateWaiting{Reason: w.Reason, Message: w.Message}
	}
	cs.Started = &started
	return cs
}

// ephemeralStatus is an ephemeral container's status. As upstream's, it
// is never ready and carries no started flag (no probe watches it), and
// it waits as the pod's other containers do before their first run:
// PodInitializing in a pod with init containers. It counts for neither
// the phase nor the conditions.
func ephemeralStatus(in Input, ec *v1.EphemeralContainer) v1.ContainerStatus {
	c := (*v1.Container)(&ec.EphemeralContainerCommon)
	if len(in.Instances[c.Name]) == 0 {
		w, ok := in.Waiting[c.Name]
		if !ok {
			w = Waiting{Reason: "ContainerCreating"}
			if len(in.Pod.Spec.InitContainers) > 0 {
				w.Reason = "PodInitializing"
			}
		}
		return v1.ContainerStatus{Name: c.Name, Image: c.Image, State: v1.ContainerState{
			Waiting: &v1.ContainerStateWaiting{Reason: w.Reason, Message: w.Message},
		}}
	}
	cs := containerStatus(in, c, false)
	cs.Ready, cs.Started = false, nil
	return cs
}

// IsSidecar reports whether an init container is restartable (a sidecar
// container): it keeps running beside the regular containers, and the next
// init container starts once it has started rather than completed.
func IsSidecar(c *v1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways
}

// isNextInit reports whether name is the first init container that has
// not completed (or, a sidecar, started): only that one is "creating",
// the rest are initializing.
func isNextInit(in Input, name string) bool {
	for i := range in.Pod.Spec.InitContainers {
		c := &in.Pod.Spec.InitContainers[i]
		if initDone(in, c) {
			continue
		}
		return c.Name == name
	}
	return false
}

// initDone reports whether an init container lets the next one start: a
// regular one has completed, a sidecar runs and has started.
func initDone(in Input, c *v1.Container) bool {
	runs := in.Instances[c.Name]
	if !IsSidecar(c) {
		return done(runs)
	}
	if len(runs) == 0 || runs[0].State != Running {
		return false
	}
	started, ok := in.Started[c.Name]
	return !ok || started
}

func done(runs []Instance) bool {
	return len(runs) > 0 && runs[0].State == Exited && runs[0].ExitCode == 0
}

func initialized(in Input) bool {
	if regularStarted(in) {
		return true
	}
	for i := range in.Pod.Spec.InitContainers {
		if !initDone(in, &in.Pod.Spec.InitContainers[i]) {
			return false
		}
	}
	return true
}

// regularStarted reports whether any regular container has run: the pod
// was initialized then, even while a sidecar restarts.
func regularStarted(in Input) bool {
	for _, c := range in.Pod.Spec.Containers {
		if len(in.Instances[c.Name]) > 0 {
			return true
		}
	}
	return false
}

func terminated(r Instance) *v1.ContainerStateTerminated {
	reason := r.Reason
	if reason == "" {
		reason = "Completed"
		if r.ExitCode != 0 {
			reason = "Error"
		}
	}
	return &v1.ContainerStateTerminated{
		ExitCode: r.ExitCode, Reason: reason, Message: r.Message,
		StartedAt: metav1.NewTime(r.StartedAt), FinishedAt: metav1.NewTime(r.FinishedAt),
		ContainerID: "containerd://" + r.ID,
	}
}

// Phase follows upstream's getPhase over the container statuses. A
// sidecar keeps the pod Pending until it has started (unless a regular
// container ran already) and counts as running, but its end does not
// count: a pod is done when its regular containers are.
func Phase(spec v1.PodSpec, initStatuses, statuses []v1.ContainerStatus, initialized bool) v1.PodPhase {
	status := func(list []v1.ContainerStatus, name string) (v1.ContainerStatus, bool) {
		for _, s := range list {
			if s.Name == name {
				return s, true
			}
		}
		return v1.ContainerStatus{}, false
	}
	pendingInit, pendingSidecars, failedInit := 0, 0, 0
	var running, waiting, stopped, succeeded, unknown int
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		s, ok := status(initStatuses, c.Name)
		if !IsSidecar(c) {
			switch {
			case !ok:
				pendingInit++
			case s.State.Terminated != nil:
				if s.State.Terminated.ExitCode != 0 {
					failedInit++
				}
			case s.State.Waiting != nil && s.LastTerminationState.Terminated != nil:
				if s.LastTerminationState.Terminated.ExitCode != 0 {
					failedInit++
				}
			default:
				pendingInit++
			}
			continue
		}
		switch {
		case !ok:
			unknown++
		case s.State.Running != nil:
			if s.Started == nil || !*s.Started {
				pendingSidecars++
			}
			running++
		case s.State.Terminated != nil:
		case s.State.Waiting != nil && s.LastTerminationState.Terminated != nil:
		case s.State.Waiting != nil:
			pendingSidecars++
			waiting++
		default:
			pendingSidecars++
			unknown++
		}
	}
	if failedInit > 0 && spec.RestartPolicy == v1.RestartPolicyNever {
		return v1.PodFailed
	}
	for _, c := range spec.Containers {
		s, ok := status(statuses, c.Name)
		switch {
		case !ok:
			unknown++
		case s.State.Running != nil:
			running++
		case s.State.Terminated != nil:
			stopped++
			if s.State.Terminated.ExitCode == 0 {
				succeeded++
			}
		case s.State.Waiting != nil:
			if s.LastTerminationState.Terminated != nil {
				stopped++
			} else {
				waiting++
			}
		default:
			unknown++
		}
	}
	switch {
	case pendingInit > 0 || (pendingSidecars > 0 && !initialized) || waiting > 0:
		return v1.PodPending
	case running > 0 && unknown == 0:
		return v1.PodRunning
	case running == 0 && stopped > 0 && unknown == 0:
		switch {
		case spec.RestartPolicy == v1.RestartPolicyAlways:
			return v1.PodRunning
		case stopped == succeeded:
			return v1.PodSucceeded
		case spec.RestartPolicy == v1.RestartPolicyNever:
			return v1.PodFailed
		default:
			return v1.PodRunning
		}
	}
	return v1.PodPending
}

func conditions(in Input, st v1.PodStatus) []v1.PodCondition {
	old := in.Pod.Status.Conditions
	cond := func(t v1.PodConditionType, ok bool, reason, msg string) v1.PodCondition {
		// Each condition the kubelet writes says which generation of the
		// pod it judged, as upstream's (observedGeneration).
		c := v1.PodCondition{Type: t, Status: v1.ConditionFalse, Reason: reason, Message: msg, ObservedGeneration: in.Pod.Generation}
		if ok {
			c.Status, c.Reason, c.Message = v1.ConditionTrue, "", ""
		}
		c.LastTransitionTime = metav1.NewTime(in.Now)
		for _, o := range old {
			if o.Type == t && o.Status == c.Status {
				c.LastTransitionTime = o.LastTransitionTime
			}
		}
		return c
	}
	var out []v1.PodCondition
	terminal := st.Phase == v1.PodSucceeded || st.Phase == v1.PodFailed
	out = append(out, cond(v1.PodReadyToStartContainers, in.SandboxReady && !terminal, "", ""))

	// An init container is initialized once it completed or, a sidecar,
	// started; once a regular container ran the pod stays initialized.
	var incomplete []string
	for i, s := range st.InitContainerStatuses {
		ok := s.Ready
		if IsSidecar(&in.Pod.Spec.InitContainers[i]) {
			ok = s.Started != nil && *s.Started
		}
		if !ok {
			incomplete = append(incomplete, s.Name)
		}
	}
	initOK := len(incomplete) == 0 || st.Phase == v1.PodSucceeded || regularStarted(in)
	out = append(out, cond(v1.PodInitialized, initOK, "ContainersNotInitialized", fmt.Sprintf("containers with incomplete status: [%s]", strings.Join(incomplete, " "))))

	// Sidecars count for readiness, before the regular containers.
	var unready []string
	for i, s := range st.InitContainerStatuses {
		if IsSidecar(&in.Pod.Spec.InitContainers[i]) && !s.Ready {
			unready = append(unready, s.Name)
		}
	}
	for _, s := range st.ContainerStatuses {
		if !s.Ready {
			unready = append(unready, s.Name)
		}
	}
	ready := len(unready) == 0 && !terminal
	reason, msg := "ContainersNotReady", fmt.Sprintf("containers with unready status: [%s]", strings.Join(unready, " "))
	switch st.Phase {
	case v1.PodSucceeded:
		reason, msg = "PodCompleted", ""
	case v1.PodFailed:
		reason, msg = "PodFailed", ""
	}
	out = append(out, cond(v1.ContainersReady, ready, reason, msg))

	gatesOK := true
	var missing []string
	for _, g := range in.Pod.Spec.ReadinessGates {
		found := false
		for _, o := range old {
			if o.Type == g.ConditionType && o.Status == v1.ConditionTrue {
				found = true
			}
		}
		if !found {
			gatesOK = false
			missing = append(missing, string(g.ConditionType))
		}
	}
	podReady := cond(v1.PodReady, ready && gatesOK, reason, msg)
	if ready && !gatesOK {
		podReady.Reason, podReady.Message = "ReadinessGatesNotReady", fmt.Sprintf("corresponding condition of pod readiness gate %q does not exist.", missing[0])
	}
	out = append(out, podReady)
	// A pod the kubelet runs is scheduled; upstream's kubelet restates it
	// so that the condition carries the generation it observed.
	out = append(out, cond(v1.PodScheduled, true, "", ""))
	if !terminal {
		out = append(out, in.Resize...)
	}

	// Conditions the kubelet does not own (readiness gates,
	// DisruptionTarget) are kept as they are.
	owned := map[v1.PodConditionType]bool{v1.PodReadyToStartContainers: true, v1.PodInitialized: true, v1.ContainersReady: true, v1.PodReady: true, v1.PodScheduled: true,
		v1.PodResizePending: true, v1.PodResizeInProgress: true}
	var failed *v1.PodCondition
	if in.Failure != nil && in.Failure.Condition != nil && st.Phase == v1.PodFailed {
		failed = in.Failure.Condition
	}
	for _, o := range old {
		if !owned[o.Type] && (failed == nil || o.Type != failed.Type) {
			out = append(out, o)
		}
	}
	if failed != nil {
		c := *failed
		for _, o := range old {
			// The same condition again keeps its first transition time,
			// so that the status settles.
			if o.Type == c.Type && o.Status == c.Status && o.Reason == c.Reason && o.Message == c.Message {
				c.LastTransitionTime = o.LastTransitionTime
			}
		}
		out = append(out, c)
	}
	order := map[v1.PodConditionType]int{v1.PodReadyToStartContainers: 0, v1.PodInitialized: 1, v1.PodReady: 2, v1.ContainersReady: 3, v1.PodScheduled: 4, v1.PodResizePending: 5, v1.PodResizeInProgress: 6}
	sort.SliceStable(out, func(i, j int) bool {
		oi, ok1 := order[out[i].Type]
		oj, ok2 := order[out[j].Type]
		if !ok1 {
			oi = 10
		}
		if !ok2 {
			oj = 10
		}
		return oi < oj
	})
	return out
}

// QOSClass classifies a pod as upstream does: Guaranteed when every
// container has equal cpu and memory requests and limits, BestEffort when
// none has any, Burstable otherwise.
func QOSClass(pod *v1.Pod) v1.PodQOSClass {
	any, guaranteed := false, true
	all := append(append([]v1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...)
	for _, c := range all {
		for _, r := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory} {
			req, hasReq := c.Resources.Requests[r]
			lim, hasLim := c.Resources.Limits[r]
			if hasReq || hasLim {
				any = true
			}
			if !hasLim || (hasReq && req.Cmp(lim) != 0) {
				guaranteed = false
			}
		}
	}
	switch {
	case !any:
		return v1.PodQOSBestEffort
	case guaranteed:
		return v1.PodQOSGuaranteed
	}
	return v1.PodQOSBurstable
}
