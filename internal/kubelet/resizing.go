package kubelet

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/orca-project/orca/internal/kubelet/cgroups"
	"github.com/orca-project/orca/internal/kubelet/podstatus"
)

// allocate decides on a resize the pod's spec asks for and returns the
// pod as the kubelet is to run it, with its allocated resources.
func (k *Kubelet) allocate(pod *v1.Pod) *v1.Pod {
	alloc := k.res.ensure(pod)
	want := specAllocation(pod)
	if want.equal(alloc) {
		// Nothing asked, or a waiting resize taken back.
		k.res.updateConditions(pod.UID, func(r *resizeConditions) bool { r.clearPending(); return true })
		return applyAllocation(pod, alloc)
	}
	now := time.Now()
	fits, why := decideResize(pod, k.allocatedPods(pod.UID), k.cfg.Allocatable)
	if !fits {
		if k.res.updateConditions(pod.UID, func(r *resizeConditions) bool {
			return r.setPending(v1.PodReasonDeferred, why, pod.Generation, now)
		}) {
			k.event(pod, v1.EventTypeWarning, "ResizeDeferred", resizeEventMessage("Pod resize Deferred", pod, pod.Generation, why))
		}
		return applyAllocation(pod, alloc)
	}
	k.res.setAllocated(pod.UID, want)
	k.res.updateConditions(pod.UID, func(r *resizeConditions) bool {
		r.clearPending()
		r.clearInProgress()
		return r.setInProgress("", "", pod.Generation, now)
	})
	k.event(pod, v1.EventTypeNormal, "ResizeStarted", resizeEventMessage("Pod resize started", pod, pod.Generation, ""))
	return pod
}

// allocatedPods are the node's other pods as the kubelet runs them: the
// ones it has allocated, with their allocations, until they finish.
func (k *Kubelet) allocatedPods(except types.UID) []*v1.Pod {
	var out []*v1.Pod
	for _, p := range k.Pods() {
		if p.UID == except || p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
			continue
		}
		if a, ok := k.res.allocated(p.UID); ok {
			out = append(out, applyAllocation(p, a))
		}
	}
	return out
}

// runningIDs maps the containers running in the current sandbox to their
// runtime IDs; current holds that sandbox's runs, newest first.
func runningIDs(current map[string][]container) map[string]string {
	out := map[string]string{}
	for name, runs := range current {
		if len(runs) > 0 && runs[0].State == podstatus.Running {
			out[name] = runs[0].ID
		}
	}
	return out
}

// resizeRunning brings the containers running in the sandbox to their
// allocated resources (pod carries them): a restart where a container's
// resize policy asks for one, else CRI updates, memory then cpu. It
// reports whether it restarted a container, after which the caller's
// view of the runs is stale.
func (k *Kubelet) resizeRunning(ctx context.Context, pod *v1.Pod, sb *sandbox, current map[string][]container) bool {
	plan := planResize(pod, runningIDs(current), k.res.actuated(pod.UID))
	if plan.empty() {
		return false
	}
	if k.cfg.Cgroups != nil {
		// The pod's cgroup holds both the old and the new sizes while
		// the containers move (upstream raises it before them and lowers
		// it after), and what they were given after.
		before, after := cgroups.PodValues(k.actuatedPod(pod)), cgroups.PodValues(pod)
		if err := k.cfg.Cgroups.SetPodValues(pod, cgroups.Widest(before, after)); err != nil {
			k.log.Warn("resize pod cgroup", "pod", podKey(pod), "err", err)
		}
		defer func() {
			if err := k.cfg.Cgroups.SetPodValues(pod, cgroups.PodValues(k.actuatedPod(pod))); err != nil {
				k.log.Warn("resize pod cgroup", "pod", podKey(pod), "err", err)
			}
		}()
	}
	for _, st := range plan.restart {
		c := findContainer(pod, st.name)
		k.event(pod, v1.EventTypeNormal, "Killing", fmt.Sprintf("Container %s resize requires restart", c.Name))
		k.stopContainer(ctx, pod, c, st.id, gracePeriod(pod))
		// As upstream, the new run starts in the same pass: a resize is
		// not a crash, so no back-off holds it.
		s := startSpec{c: c, init: isInitContainer(pod, c.Name)}
		if err := k.startContainer(ctx, pod, s, sb, current[st.name][0].Attempt+1); err == nil {
			k.clearWaiting(pod.UID, c.Name)
		}
	}
	if err := k.updateInPlace(ctx, pod, plan); err != nil {
		k.log.Warn("resize pod", "pod", podKey(pod), "err", err)
		var gen int64
		if k.res.updateConditions(pod.UID, func(r *resizeConditions) bool {
			changed := r.setInProgress(v1.PodReasonError, err.Error(), pod.Generation, time.Now())
			gen = r.InProgress.ObservedGeneration
			return changed
		}) {
			k.event(pod, v1.EventTypeWarning, "ResizeError", resizeEventMessage("Pod resize error", pod, gen, err.Error()))
		}
	}
	return len(plan.restart) > 0
}

// updateInPlace gives running containers their allocated memory, then
// their allocated cpu, as upstream's doPodResizeAction: each update
// carries the other resource as the container has it, and the first
// failure stops the rest, for the next sync to retry.
func (k *Kubelet) updateInPlace(ctx context.Context, pod *v1.Pod, plan resizePlan) error {
	if err := k.checkMemoryDecrease(ctx, plan.memory); err != nil {
		return err
	}
	for _, phase := range []struct {
		name  v1.ResourceName
		steps []resizeStep
	}{{v1.ResourceMemory, plan.memory}, {v1.ResourceCPU, plan.cpu}} {
		for _, st := range phase.steps {
			c := findContainer(pod, st.name)
			given := k.res.actuated(pod.UID)[st.name]
			next := withResource(given, c.Resources, phase.name)
			target := *c
			target.Resources = next
			_, err := k.rt.UpdateContainerResources(ctx, &runtimeapi.UpdateContainerResourcesRequest{
				ContainerId: st.id, Linux: k.resources(pod, &target),
			})
			if err != nil {
				return fmt.Errorf("update %s of container %q: %w", phase.name, st.name, err)
			}
			k.res.setActuated(pod.UID, st.name, next)
			k.state.forgetStatus(st.id)
		}
	}
	return nil
}

// actuatedPod is the pod with the resources its containers were given,
// where the kubelet knows them.
func (k *Kubelet) actuatedPod(pod *v1.Pod) *v1.Pod {
	given := k.res.actuated(pod.UID)
	out := pod.DeepCopy()
	for _, cs := range [][]v1.Container{out.Spec.InitContainers, out.Spec.Containers} {
		for i := range cs {
			if r, ok := given[cs[i].Name]; ok {
				cs[i].Resources = r
			}
		}
	}
	return out
}

// checkMemoryDecrease refuses to set a memory limit at or below what a
// container uses now, as upstream: the kernel would reclaim or kill.
func (k *Kubelet) checkMemoryDecrease(ctx context.Context, steps []resizeStep) error {
	var errs []error
	for _, st := range steps {
		if st.desired.memLimit == 0 || (st.current.memLimit != 0 && st.desired.memLimit >= st.current.memLimit) {
			continue
		}
		resp, err := k.rt.ContainerStats(ctx, &runtimeapi.ContainerStatsRequest{ContainerId: st.id})
		if err != nil || resp.Stats == nil || resp.Stats.Memory == nil || resp.Stats.Memory.UsageBytes == nil {
			errs = append(errs, fmt.Errorf("missing container %q memory usage", st.name))
			continue
		}
		if usage := resp.Stats.Memory.UsageBytes.Value; usage >= uint64(st.desired.memLimit) {
			errs = append(errs, fmt.Errorf("attempting to set container %q memory limit (%d) below current usage (%d)", st.name, st.desired.memLimit, usage))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("cannot decrease memory limits: %w", utilerrors.NewAggregate(errs))
	}
	return nil
}

// withResource is r with one resource's request and limit taken from
// from (or dropped, where from has none).
func withResource(r, from v1.ResourceRequirements, name v1.ResourceName) v1.ResourceRequirements {
	out := *r.DeepCopy()
	set := func(list *v1.ResourceList, src v1.ResourceList) {
		q, ok := src[name]
		switch {
		case ok && *list == nil:
			*list = v1.ResourceList{name: q.DeepCopy()}
		case ok:
			(*list)[name] = q.DeepCopy()
		default:
			delete(*list, name)
		}
	}
	set(&out.Requests, from.Requests)
	set(&out.Limits, from.Limits)
	return out
}

// trackResize sets PodResizeInProgress while a running container lacks
// its allocation and clears it, with upstream's event, once none does.
func (k *Kubelet) trackResize(pod, allocated *v1.Pod) {
	running := map[string]string{}
	if rtp := k.state.get(pod.UID); rtp != nil {
		if sb := readySandbox(rtp); sb != nil {
			running = runningIDs(currentRuns(rtp, sb.ID))
		}
	}
	if resizeInProgress(allocated, running, k.res.actuated(pod.UID)) {
		k.res.updateConditions(pod.UID, func(r *resizeConditions) bool {
			return r.setInProgress("", "", pod.Generation, time.Now())
		})
		return
	}
	var gen int64
	if k.res.updateConditions(pod.UID, func(r *resizeConditions) bool {
		g, cleared := r.clearInProgress()
		gen = g
		return cleared
	}) {
		k.event(pod, v1.EventTypeNormal, "ResizeCompleted", resizeEventMessage("Pod resize completed", allocated, gen, ""))
	}
}

// currentRuns groups the runs of one sandbox by container name.
func currentRuns(rtp *podRuntime, sandboxID string) map[string][]container {
	out := map[string][]container{}
	for name, runs := range rtp.byName() {
		for _, r := range runs {
			if r.SandboxID == sandboxID {
				out[name] = append(out[name], r)
			}
		}
	}
	return out
}

func isInitContainer(pod *v1.Pod, name string) bool {
	for _, c := range pod.Spec.InitContainers {
		if c.Name == name {
			return true
		}
	}
	return false
}
