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
// when it wants to be called again (0: the default resync).
func (k *Kubelet) run(ctx context.Context, pod *v1.Pod) time.Duration {
	uid := pod.UID
	if err := k.cfg.Volumes.Prepare(ctx, pod); err != nil {
		k.event(pod, v1.EventTypeWarning, "FailedMount", err.Error())
		return 2 * time.Second
	}
	rtp := k.state.get(uid)
	sb := readySandbox(rtp)
	if sb == nil {
		if rtp != nil && len(rtp.Sandboxes) > 0 && !k.shouldRestartAnything(pod, rtp) {
			return 0
		}
		// A sandbox that died takes its containers with it: upstream
		// kills them and starts over in a new sandbox.
		if rtp != nil && len(rtp.Sandboxes) > 0 {
			_ = k.killPod(ctx, uid, pod, rtp, 0)
		}
		var attempt uint32
		if rtp != nil && len(rtp.Sandboxes) > 0 {
			attempt = rtp.Sandboxes[0].Attempt + 1
		}
		id, err := k.createSandbox(ctx, pod, attempt)
		if err != nil {
			k.event(pod, v1.EventTypeWarning, "FailedCreatePodSandBox", fmt.Sprintf("Failed to create pod sandbox: %v", err))
			// A sandbox whose network failed stays behind, not ready, and
			// holds its name: remove it so that the next attempt starts
			// clean.
			if k.state.refresh(ctx, k.rt, uid) == nil {
				k.gcContainers(ctx, k.state.get(uid), "")
			}
			return 2 * time.Second
		}
		if err := k.state.refresh(ctx, k.rt, uid); err != nil {
			return time.Second
		}
		rtp = k.state.get(uid)
		sb = readySandbox(rtp)
		if sb == nil {
			k.log.Warn("new sandbox is not ready", "pod", podKey(pod), "sandbox", id)
			return time.Second
		}
		k.networkReady(ctx, pod, sb)
	}
	byName := rtp.byName()
	// Containers of an older sandbox do not count as this sandbox's runs.
	for name, runs := range byName {
		var cur []container
		for _, c := range runs {
			if c.SandboxID == sb.ID {
				cur = append(cur, c)
			}
		}
		byName[name] = cur
	}

	var again time.Duration
	soonest := func(d time.Duration) {
		if d > 0 && (again == 0 || d < again) {
			again = d
		}
	}
	// Ephemeral containers come first, as upstream's: a debugger must be
	// able to start while an init container keeps failing.
	for _, i := range ephemeralToStart(pod, rtp.byName()) {
		soonest(k.startEphemeral(ctx, pod, &pod.Spec.EphemeralContainers[i], sb, byName))
	}
	for _, ec := range pod.Spec.EphemeralContainers {
		if runs := byName[ec.Name]; len(runs) > 0 && runs[0].State == podstatus.Created && runs[0].StartedAt.IsZero() && time.Since(runs[0].CreatedAt) < createdGrace {
			// Created but never started: a kubelet stopped between the
			// two steps.
			_, _ = k.rt.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: runs[0].ID})
		}
	}
	if k.resizeRunning(ctx, pod, sb, byName) {
		return 100 * time.Millisecond
	}
	// Init containers one at a time, in order; sidecars among them keep
	// running, and are probed and restarted as regular containers.
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		runs := byName[c.Name]
		if len(runs) == 0 {
			continue
		}
		switch cur := runs[0]; {
		case cur.State == podstatus.Created && cur.StartedAt.IsZero() && time.Since(cur.CreatedAt) < createdGrace:
			// Created but never started: a kubelet stopped between the
			// two steps. Start it now.
			_, _ = k.rt.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: cur.ID})
		case cur.State == podstatus.Running && podstatus.IsSidecar(c):
			if failed, why := k.probeFailed(pod, c, cur.ID); failed {
				k.event(pod, v1.EventTypeNormal, "Killing", fmt.Sprintf("Container %s %s, will be restarted", c.Name, why))
				k.stopContainer(ctx, pod, c, cur.ID, gracePeriod(pod))
				soonest(time.Millisecond)
				continue
			}
			k.clearWaiting(pod.UID, c.Name)
		}
	}
	plan := planInit(pod, byName, k.sidecarStarted(pod.UID), time.Now())
	if plan.failed {
		return 0
	}
	// Once the regular containers are done for good, sidecars are not
	// restarted but stopped (below), as upstream.
	finishing := regularContainersDone(pod, byName)
	if !finishing {
		for _, i := range plan.start {
			c := &pod.Spec.InitContainers[i]
			soonest(k.startOrBackoff(ctx, pod, c, true, sb, allRuns(rtp, c.Name)))
		}
	}
	if !plan.done {
		return again
	}

	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		runs := byName[c.Name]
		if len(runs) == 0 {
			if d := k.startOrBackoff(ctx, pod, c, false, sb, allRuns(rtp, c.Name)); d > 0 && (again == 0 || d < again) {
				again = d
			}
			continue
		}
		cur := runs[0]
		switch cur.State {
		case podstatus.Running:
			if failed, why := k.probeFailed(pod, c, cur.ID); failed {
				k.event(pod, v1.EventTypeNormal, "Killing", fmt.Sprintf("Container %s %s, will be restarted", c.Name, why))
				k.stopContainer(ctx, pod, c, cur.ID, gracePeriod(pod))
				again = time.Millisecond
				continue
			}
			k.clearWaiting(pod.UID, c.Name)
		case podstatus.Created:
			// Created but never started: a kubelet stopped between the two
			// steps. Start it now.
			if _, err := k.rt.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: cur.ID}); err != nil {
				k.event(pod, v1.EventTypeWarning, "Failed", fmt.Sprintf("Error: %v", err))
			}
		case podstatus.Exited:
			if !shouldRestart(pod.Spec.RestartPolicy, cur.ExitCode) {
				k.clearWaiting(pod.UID, c.Name)
				continue
			}
			if d := k.startOrBackoff(ctx, pod, c, false, sb, allRuns(rtp, c.Name)); d > 0 && (again == 0 || d < again) {
				again = d
			}
		}
	}
	if finishing {
		k.stopSidecars(ctx, pod, byName, gracePeriod(pod))
	}
	k.gcContainers(ctx, rtp, sb.ID)
	return again
}

// startEphemeral starts an ephemeral container, in its target's process
// namespace when it names one; current holds the runs of this sandbox.
func (k *Kubelet) startEphemeral(ctx context.Context, pod *v1.Pod, ec *v1.EphemeralContainer, sb *sandbox, current map[string][]container) time.Duration {
	c := (*v1.Container)(&ec.EphemeralContainerCommon)
	target, err := ephemeralTarget(ec, current)
	if err != nil {
		k.setWaiting(pod.UID, c.Name, "CreateContainerConfigError", err.Error())
		k.event(pod, v1.EventTypeWarning, "Failed", "Error: "+err.Error())
		return 2 * time.Second
	}
	if err := k.startContainer(ctx, pod, startSpec{c: c, target: target}, sb, 0); err != nil {
		return err.retry
	}
	k.clearWaiting(pod.UID, c.Name)
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

// stopSidecars stops a pod's running sidecars, the last started first, as
// upstream stops them after the regular containers.
func (k *Kubelet) stopSidecars(ctx context.Context, pod *v1.Pod, runs map[string][]container, grace int64) {
	start := time.Now()
	for i := len(pod.Spec.InitContainers) - 1; i >= 0; i-- {
		c := &pod.Spec.InitContainers[i]
		r := runs[c.Name]
		if !podstatus.IsSidecar(c) || len(r) == 0 || (r[0].State != podstatus.Running && r[0].State != podstatus.Created) {
			continue
		}
		left := grace - int64(time.Since(start).Seconds())
		if grace > 0 && left < 2 {
			left = 2
		}
		k.stopContainer(ctx, pod, c, r[0].ID, max(left, 0))
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

// startOrBackoff starts a container's next run unless it is in back-off.
func (k *Kubelet) startOrBackoff(ctx context.Context, pod *v1.Pod, c *v1.Container, init bool, sb *sandbox, runs []container) time.Duration {
	var attempt uint32
	if len(runs) > 0 {
		attempt = runs[0].Attempt + 1
		last := runs[0]
		if last.State == podstatus.Exited {
			if wait, left, blocked := restartGate(k.backoff, backoffKey(pod, c), last.FinishedAt, time.Now()); blocked {
				msg := fmt.Sprintf("back-off %s restarting failed container=%s pod=%s_%s(%s)", wait, c.Name, pod.Name, pod.Namespace, pod.UID)
				if w, ok := k.waitingOf(pod.UID)[c.Name]; !ok || w.reason != "CrashLoopBackOff" {
					k.event(pod, v1.EventTypeWarning, "BackOff", fmt.Sprintf("Back-off restarting failed container %s in pod %s_%s(%s)", c.Name, pod.Name, pod.Namespace, pod.UID))
				}
				k.setWaiting(pod.UID, c.Name, "CrashLoopBackOff", msg)
				return max(left, 10*time.Millisecond)
			}
		}
	}
	if err := k.startContainer(ctx, pod, startSpec{c: c, init: init}, sb, attempt); err != nil {
		return err.retry
	}
	k.clearWaiting(pod.UID, c.Name)
	return 0
}

func backoffKey(pod *v1.Pod, c *v1.Container) string {
	return string(pod.UID) + "/" + c.Name
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
func (k *Kubelet) shouldRestartAnything(pod *v1.Pod, rtp *podRuntime) bool {
	byName := rtp.byName()
	for _, c := range pod.Spec.Containers {
		runs := byName[c.Name]
		if len(runs) == 0 || runs[0].State != podstatus.Exited || shouldRestart(pod.Spec.RestartPolicy, runs[0].ExitCode) {
			return true
		}
	}
	return false
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

func allRuns(rtp *podRuntime, name string) []container {
	if rtp == nil {
		return nil
	}
	return rtp.byName()[name]
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

// gcContainers removes exited runs beyond the two newest of each
// container (the current and the previous, for logs --previous) and the
// containers of sandboxes that are no longer current.
func (k *Kubelet) gcContainers(ctx context.Context, rtp *podRuntime, current string) {
	if rtp == nil {
		return
	}
	seen := map[string]int{}
	for _, c := range rtp.Containers {
		if c.State != podstatus.Exited {
			continue
		}
		seen[c.Name]++
		if seen[c.Name] > 2 {
			_, _ = k.rt.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: c.ID})
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
			_, _ = k.rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: s.ID})
		}
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
		k.stopSidecars(ctx, pod, runs, max(left, 0))
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
