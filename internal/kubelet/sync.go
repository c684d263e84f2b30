package kubelet

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/orca-project/orca/internal/kubelet/podstatus"
	"github.com/orca-project/orca/internal/kubelet/prober"
)

// resync is how soon a running pod is looked at again without a reason;
// volume contents and probes are refreshed on that beat.
const resync = 10 * time.Second

// syncPod takes the next steps for one pod. It returns when to be called
// again, and finished once the pod is gone from the API and the runtime.
func (k *Kubelet) syncPod(ctx context.Context, uid types.UID, pod *v1.Pod) (time.Duration, bool) {
	rtp := k.state.get(uid)
	if pod == nil {
		// Deleted from the API (or never seen: left over from before a
		// restart). Remove what the runtime still holds.
		if err := k.killPod(ctx, uid, nil, rtp, 2); err != nil {
			k.log.Warn("remove pod left in the runtime", "uid", uid, "err", err)
			return 2 * time.Second, false
		}
		k.removePod(ctx, uid, rtp)
		if k.cfg.Cgroups != nil {
			// A cgroup the runtime has not emptied yet is left behind
			// rather than holding up the volumes' teardown.
			if err := k.cfg.Cgroups.RemovePod(uid, k.activePods()); err != nil {
				k.log.Warn("remove pod cgroup", "uid", uid, "err", err)
			}
		}
		if err := k.cfg.Volumes.Teardown(string(uid)); err != nil {
			// A volume still mounted (a CSI driver not answering) must not
			// be emptied by removing the pod's directory: try again.
			k.log.Warn("tear down volumes", "uid", uid, "err", err)
			return 5 * time.Second, false
		}
		os.RemoveAll(filepath.Join(k.cfg.PodDir, string(uid)))
		return 0, true
	}
	if pod.DeletionTimestamp != nil {
		return k.terminate(ctx, pod, rtp)
	}
	if pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed {
		// Finished: make sure nothing runs any more; keep the containers
		// for logs until the pod is deleted.
		if rtp != nil && anyRunning(rtp) {
			_ = k.killPod(ctx, uid, pod, rtp, gracePeriod(pod))
			k.stopSandboxes(ctx, rtp)
			_ = k.state.refresh(ctx, k.rt, uid)
		}
		return 0, false
	}
	if ev, ok := k.evictionOf(uid); ok {
		return k.failPod(ctx, pod, rtp, ev.failure, ev.grace)
	}
	if rejected, again := k.admit(ctx, pod, rtp); rejected {
		return again, false
	}
	exceeded, left := activeDeadline(pod, time.Now())
	if exceeded {
		k.event(pod, v1.EventTypeNormal, deadlineReason, deadlineMessage)
		return k.failPod(ctx, pod, rtp, &podstatus.Failure{Reason: deadlineReason, Message: deadlineMessage}, gracePeriod(pod))
	}
	// The containers run with what the kubelet allocated, which lags the
	// spec while a resize waits for room.
	allocated := k.allocate(pod)
	again := k.run(ctx, allocated)
	_ = k.state.refresh(ctx, k.rt, uid)
	// Probes start from what runs now, containers this pass started
	// included: the refresh above is the worker's own view, so no relist
	// would tell it again, and a readiness probe left for the next resync
	// kept a new replica unready for up to 10 s.
	k.updateProbes(pod)
	k.trackResize(pod, allocated)
	k.updateStatus(ctx, pod, false)
	if k.finished(pod) {
		k.stopSandboxes(ctx, k.state.get(uid))
	}
	if again <= 0 || again > resync {
		again = resync
	}
	if left > 0 && left < again {
		// Be there when the deadline passes, not at the next resync.
		again = left
	}
	return again, false
}

// failPod stops a pod the kubelet fails as a whole (past its deadline,
// or evicted): its containers get grace seconds, and the status says
// why, as upstream's eviction by a pod sync handler.
func (k *Kubelet) failPod(ctx context.Context, pod *v1.Pod, rtp *podRuntime, f *podstatus.Failure, grace int64) (time.Duration, bool) {
	if err := k.killPod(ctx, pod.UID, pod, rtp, grace); err != nil {
		k.log.Warn("kill pod", "pod", podKey(pod), "err", err)
		return time.Second, false
	}
	k.probes.RemovePod(pod.UID)
	_ = k.state.refresh(ctx, k.rt, pod.UID)
	k.sendStatus(ctx, pod, false, f)
	// Until the Failed phase is stored, the next sync comes back here.
	return time.Second, false
}

// finished reports whether a pod whose containers will not be restarted
// has completed (its sandbox can stop).
func (k *Kubelet) finished(pod *v1.Pod) bool {
	p := k.pod(pod.UID)
	return p != nil && (p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed)
}

// run brings the runtime one step closer to the pod's spec and returns
// when it wants to be called again (0: the default resync). It gathers
// what computePodActions decides from, and carries the plan out.
func (k *Kubelet) run(ctx context.Context, pod *v1.Pod) time.Duration {
	if err := k.cfg.Volumes.Prepare(ctx, pod); err != nil {
		k.event(pod, v1.EventTypeWarning, "FailedMount", err.Error())
		return 2 * time.Second
	}
	in := k.syncInput(pod)
	plan := computePodActions(in)
	switch plan.sandbox {
	case sandboxLeave:
		return 0
	case sandboxCreate:
		if again, ok := k.newSandbox(ctx, pod, plan); !ok {
			return again
		}
		// The containers start in the new sandbox in the same pass.
		in = k.syncInput(pod)
		if plan = computePodActions(in); plan.sandbox != sandboxKeep {
			return time.Second
		}
	}
	k.log.Debug("pod plan", "pod", podKey(pod), "plan", plan)
	// The plan's own view of the runtime, not a newer one the relist may
	// have put in the cache since: its sandbox is the one the plan is for.
	rtp := in.runtime
	sb := readySandbox(rtp)

	var again time.Duration
	soonest := func(d time.Duration) {
		if d > 0 && (again == 0 || d < again) {
			again = d
		}
	}
	for _, s := range plan.ephemeral {
		soonest(k.do(ctx, pod, sb, s))
	}
	if k.resizeRunning(ctx, pod, sb, runsIn(rtp, sb.ID)) {
		return 100 * time.Millisecond
	}
	for _, s := range plan.steps {
		soonest(k.do(ctx, pod, sb, s))
	}
	if plan.initFailed {
		return 0
	}
	k.stopSidecars(ctx, pod, plan.stopSidecars, gracePeriod(pod))
	k.removeGarbage(ctx, plan.garbage)
	soonest(plan.requeue)
	return again
}

// syncInput gathers what computePodActions decides from: the runtime's
// view of the pod, and the probes', back-off's and status's word on each
// of its containers.
func (k *Kubelet) syncInput(pod *v1.Pod) syncInput {
	rtp := k.state.get(pod.UID)
	in := syncInput{
		pod:            pod,
		runtime:        rtp,
		probeFailed:    map[string]string{},
		sidecarStarted: map[string]bool{},
		backoff:        map[string]backoffHold{},
		waiting:        map[string]string{},
		now:            time.Now(),
	}
	for name, w := range k.waitingOf(pod.UID) {
		in.waiting[name] = w.reason
	}
	sb := readySandbox(rtp)
	if sb == nil {
		return in
	}
	current, all := runsIn(rtp, sb.ID), rtp.byName()
	// Sidecars are probed as regular containers; regular init containers
	// are not.
	look := func(c *v1.Container, probed bool) {
		if r := current[c.Name]; probed && len(r) > 0 && r[0].State == podstatus.Running {
			if failed, why := k.probeFailed(pod, c, r[0].ID); failed {
				in.probeFailed[c.Name] = why
			}
			if podstatus.IsSidecar(c) {
				in.sidecarStarted[c.Name] = k.sidecarStarted(pod.UID)(c, r[0].ID)
			}
		}
		if r := all[c.Name]; len(r) > 0 && r[0].State == podstatus.Exited {
			in.backoff[c.Name] = restartHold(k.backoff, backoffKey(pod, c), r[0].FinishedAt)
		}
	}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		look(c, podstatus.IsSidecar(c))
	}
	for i := range pod.Spec.Containers {
		look(&pod.Spec.Containers[i], true)
	}
	return in
}

// newSandbox replaces a pod's sandbox as plan says: what is left of the
// old one is stopped, and the new one gets the pod's network. It reports
// whether the new sandbox is ready, else when to try again.
func (k *Kubelet) newSandbox(ctx context.Context, pod *v1.Pod, plan podActions) (time.Duration, bool) {
	uid := pod.UID
	if plan.killPod {
		_ = k.killPod(ctx, uid, pod, k.state.get(uid), 0)
	}
	id, err := k.createSandbox(ctx, pod, plan.attempt)
	if err != nil {
		k.event(pod, v1.EventTypeWarning, "FailedCreatePodSandBox", fmt.Sprintf("Failed to create pod sandbox: %v", err))
		// A sandbox whose network failed stays behind, not ready, and
		// holds its name: remove it so that the next attempt starts
		// clean.
		if k.state.refresh(ctx, k.rt, uid) == nil {
			k.gcContainers(ctx, k.state.get(uid), "")
		}
		return 2 * time.Second, false
	}
	if err := k.state.refresh(ctx, k.rt, uid); err != nil {
		return time.Second, false
	}
	sb := readySandbox(k.state.get(uid))
	if sb == nil {
		k.log.Warn("new sandbox is not ready", "pod", podKey(pod), "sandbox", id)
		return time.Second, false
	}
	k.networkReady(ctx, pod, sb)
	return 0, true
}

// do carries out one step of a plan in the sandbox sb, and returns when
// to look at the pod again for what the doing found (0: no reason).
func (k *Kubelet) do(ctx context.Context, pod *v1.Pod, sb *sandbox, s step) time.Duration {
	switch s := s.(type) {
	case startRun:
		if !s.restartOf.IsZero() {
			recordRestart(k.backoff, backoffKey(pod, s.c), s.restartOf)
		}
		if err := k.startContainer(ctx, pod, startSpec{c: s.c, init: s.init}, sb, s.attempt); err != nil {
			return err.retry
		}
		k.clearWaiting(pod.UID, s.c.Name)
	case startEphemeral:
		c := (*v1.Container)(&pod.Spec.EphemeralContainers[s.index].EphemeralContainerCommon)
		if s.targetErr != nil {
			k.setWaiting(pod.UID, c.Name, "CreateContainerConfigError", s.targetErr.Error())
			k.event(pod, v1.EventTypeWarning, "Failed", "Error: "+s.targetErr.Error())
			return 2 * time.Second
		}
		if err := k.startContainer(ctx, pod, startSpec{c: c, target: s.target}, sb, 0); err != nil {
			return err.retry
		}
		k.clearWaiting(pod.UID, c.Name)
	case startCreated:
		if _, err := k.rt.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: s.id}); err != nil && s.report {
			k.event(pod, v1.EventTypeWarning, "Failed", fmt.Sprintf("Error: %v", err))
		}
	case killRun:
		k.event(pod, v1.EventTypeNormal, "Killing", fmt.Sprintf("Container %s %s, will be restarted", s.c.Name, s.reason))
		k.stopContainer(ctx, pod, s.c, s.id, gracePeriod(pod))
	case backOff:
		if s.event {
			k.event(pod, v1.EventTypeWarning, "BackOff", fmt.Sprintf("Back-off restarting failed container %s in pod %s_%s(%s)", s.name, pod.Name, pod.Namespace, pod.UID))
		}
		k.setWaiting(pod.UID, s.name, "CrashLoopBackOff", s.message)
	case clearWaiting:
		k.clearWaiting(pod.UID, s.name)
	default:
		panic(fmt.Sprintf("kubelet: unknown step %T", s))
	}
	return 0
}

// sidecarStarted tells whether a running sidecar has started: it passed
// its startup probe, or has none.
func (k *Kubelet) sidecarStarted(uid types.UID) func(c *v1.Container, id string) bool {
	return func(c *v1.Container, id string) bool {
		if c.StartupProbe == nil {
			return true
		}
		ok, known, has, _ := k.probes.Result(uid, c.Name, prober.Startup, id)
		return has && known && ok
	}
}

// stopSidecars stops sidecars in the order given, within grace seconds
// for all of them.
func (k *Kubelet) stopSidecars(ctx context.Context, pod *v1.Pod, sidecars []stopSidecar, grace int64) {
	start := time.Now()
	for _, s := range sidecars {
		left := grace - int64(time.Since(start).Seconds())
		if grace > 0 && left < 2 {
			left = 2
		}
		k.stopContainer(ctx, pod, s.c, s.id, max(left, 0))
	}
}

// updateProbes gives every running container of the pod's current sandbox
// its probe workers, and stops those of containers no longer running.
func (k *Kubelet) updateProbes(pod *v1.Pod) {
	rtp := k.state.get(pod.UID)
	sb := readySandbox(rtp)
	running := map[string]string{}
	ip := ""
	if sb != nil {
		for name, runs := range rtp.byName() {
			for _, r := range runs {
				// The newest run in this sandbox is the current one.
				if r.SandboxID == sb.ID {
					if r.State == podstatus.Running {
						running[name] = r.ID
					}
					break
				}
			}
		}
		if len(sb.IPs) > 0 {
			ip = sb.IPs[0]
		}
	}
	if pod.Spec.HostNetwork && len(k.cfg.HostIPs) > 0 {
		ip = k.cfg.HostIPs[0]
	}
	k.probes.Update(pod, running, ip)
}

func backoffKey(pod *v1.Pod, c *v1.Container) string {
	return string(pod.UID) + "/" + c.Name
}

func (k *Kubelet) probeFailed(pod *v1.Pod, c *v1.Container, id string) (bool, string) {
	if ok, known, has, _ := k.probes.Result(pod.UID, c.Name, prober.Liveness, id); has && known && !ok {
		return true, "failed liveness probe"
	}
	if ok, known, has, _ := k.probes.Result(pod.UID, c.Name, prober.Startup, id); has && known && !ok {
		return true, "failed startup probe"
	}
	return false, ""
}

func readySandbox(rtp *podRuntime) *sandbox {
	if rtp == nil || len(rtp.Sandboxes) == 0 || !rtp.Sandboxes[0].Ready {
		return nil
	}
	return &rtp.Sandboxes[0]
}

func anyRunning(rtp *podRuntime) bool {
	for _, c := range rtp.Containers {
		if c.State == podstatus.Running || c.State == podstatus.Created {
			return true
		}
	}
	for _, s := range rtp.Sandboxes {
		if s.Ready {
			return true
		}
	}
	return false
}

func gracePeriod(pod *v1.Pod) int64 {
	if pod.DeletionGracePeriodSeconds != nil {
		return *pod.DeletionGracePeriodSeconds
	}
	if pod.Spec.TerminationGracePeriodSeconds != nil {
		return *pod.Spec.TerminationGracePeriodSeconds
	}
	return v1.DefaultTerminationGracePeriodSeconds
}

// gcContainers removes the pod's garbage (see garbageOf) around the
// sandbox current.
func (k *Kubelet) gcContainers(ctx context.Context, rtp *podRuntime, current string) {
	k.removeGarbage(ctx, garbageOf(rtp, current))
}

func (k *Kubelet) removeGarbage(ctx context.Context, g garbage) {
	for _, id := range g.containers {
		_, _ = k.rt.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: id})
	}
	for _, id := range g.sandboxes {
		_, _ = k.rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: id})
	}
}

// terminate stops a pod being deleted: preStop hooks and SIGTERM within
// the grace period, then SIGKILL; it reports the final status and removes
// the pod from the API.
func (k *Kubelet) terminate(ctx context.Context, pod *v1.Pod, rtp *podRuntime) (time.Duration, bool) {
	if err := k.killPod(ctx, pod.UID, pod, rtp, gracePeriod(pod)); err != nil {
		k.log.Warn("kill pod", "pod", podKey(pod), "err", err)
		return time.Second, false
	}
	k.probes.RemovePod(pod.UID)
	_ = k.state.refresh(ctx, k.rt, pod.UID)
	k.updateStatus(ctx, pod, true)
	k.removePod(ctx, pod.UID, k.state.get(pod.UID))
	if err := k.cfg.Volumes.Teardown(string(pod.UID)); err != nil {
		k.log.Warn("tear down volumes", "pod", podKey(pod), "err", err)
	}
	zero := int64(0)
	err := k.cfg.Client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
		GracePeriodSeconds: &zero,
		Preconditions:      &metav1.Preconditions{UID: &pod.UID},
	})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		k.log.Warn("delete terminated pod", "pod", podKey(pod), "err", err)
		return time.Second, false
	}
	// The informer's delete event ends the worker (pod == nil path).
	return time.Second, false
}

// killPod stops every container of the pod and its sandboxes. pod may be
// nil when the API object is gone; grace is in seconds. Sidecars stop
// after the other containers, the last started first, as upstream's, so
// that the others' preStop hooks can still use them.
func (k *Kubelet) killPod(ctx context.Context, uid types.UID, pod *v1.Pod, rtp *podRuntime, grace int64) error {
	if rtp == nil {
		return nil
	}
	start := time.Now()
	var sidecars []container
	done := make(chan struct{}, len(rtp.Containers))
	n := 0
	for _, c := range rtp.Containers {
		if c.State != podstatus.Running && c.State != podstatus.Created {
			continue
		}
		var spec *v1.Container
		if pod != nil {
			spec = findContainer(pod, c.Name)
		}
		if c.Init && spec != nil && podstatus.IsSidecar(spec) {
			sidecars = append(sidecars, c)
			continue
		}
		n++
		go func(c container, spec *v1.Container) {
			defer func() { done <- struct{}{} }()
			k.stopContainer(ctx, pod, spec, c.ID, grace)
		}(c, spec)
	}
	for i := 0; i < n; i++ {
		<-done
	}
	if len(sidecars) > 0 {
		runs := map[string][]container{}
		for _, c := range sidecars {
			runs[c.Name] = append(runs[c.Name], c)
		}
		left := grace - int64(time.Since(start).Seconds())
		if grace > 0 && left < 2 {
			left = 2
		}
		k.stopSidecars(ctx, pod, sidecarsToStop(pod, runs), max(left, 0))
	}
	k.stopSandboxes(ctx, rtp)
	return nil
}

func (k *Kubelet) stopSandboxes(ctx context.Context, rtp *podRuntime) {
	if rtp == nil {
		return
	}
	for _, s := range rtp.Sandboxes {
		if s.Ready {
			if _, err := k.rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: s.ID}); err != nil {
				k.log.Warn("stop sandbox", "sandbox", s.ID, "err", err)
			}
		}
	}
}

// removePod removes the pod's containers and sandboxes from the runtime.
func (k *Kubelet) removePod(ctx context.Context, uid types.UID, rtp *podRuntime) {
	if rtp == nil {
		return
	}
	for _, c := range rtp.Containers {
		_, _ = k.rt.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: c.ID})
	}
	for _, s := range rtp.Sandboxes {
		_, _ = k.rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: s.ID})
		_, _ = k.rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: s.ID})
	}
	_ = k.state.refresh(ctx, k.rt, uid)
}

// stopContainer runs the preStop hook and stops the container within
// grace seconds (SIGTERM, then SIGKILL from the runtime).
func (k *Kubelet) stopContainer(ctx context.Context, pod *v1.Pod, c *v1.Container, id string, grace int64) {
	start := time.Now()
	if pod != nil && c != nil {
		k.event(pod, v1.EventTypeNormal, "Killing", fmt.Sprintf("Stopping container %s", c.Name))
		if c.Lifecycle != nil && c.Lifecycle.PreStop != nil && grace > 0 {
			hctx, cancel := context.WithTimeout(ctx, time.Duration(grace)*time.Second)
			if msg, err := k.runHook(hctx, pod, c, id, c.Lifecycle.PreStop); err != nil {
				k.event(pod, v1.EventTypeWarning, "FailedPreStopHook", fmt.Sprintf("PreStopHook failed: %s", msg))
			}
			cancel()
		}
	}
	left := grace - int64(time.Since(start).Seconds())
	if grace > 0 && left < 2 {
		// Upstream's minimum: the container gets two seconds after a
		// preStop hook that used up the grace period.
		left = 2
	}
	if left < 0 {
		left = 0
	}
	if _, err := k.rt.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: id, Timeout: left}); err != nil {
		k.log.Warn("stop container", "container", id, "err", err)
	}
}

// findContainer returns the container of that name among all the pod's
// kinds of container; an ephemeral container's fields are a container's.
func findContainer(pod *v1.Pod, name string) *v1.Container {
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == name {
			return &pod.Spec.InitContainers[i]
		}
	}
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			return &pod.Spec.Containers[i]
		}
	}
	if ec := findEphemeral(pod, name); ec != nil {
		return (*v1.Container)(&ec.EphemeralContainerCommon)
	}
	return nil
}

func podKey(pod *v1.Pod) string { return pod.Namespace + "/" + pod.Name }

func (k *Kubelet) event(pod *v1.Pod, typ, reason, msg string) {
	if k.rec != nil && pod != nil {
		k.rec.Event(pod, typ, reason, msg)
	}
}
