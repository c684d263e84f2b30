package kubelet

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/orca-project/orca/internal/kubelet/podstatus"
)

// eviction is a pod the eviction manager fails: its workers kill it
// within grace seconds and report the failure.
type eviction struct {
	failure *podstatus.Failure
	grace   int64
}

func (k *Kubelet) evictionOf(uid types.UID) (eviction, bool) {
	k.evictMu.Lock()
	defer k.evictMu.Unlock()
	ev, ok := k.evictions[uid]
	return ev, ok
}

// activePods are the pods admitted and not finished, the ones holding
// the node's resources.
func (k *Kubelet) activePods() []*v1.Pod {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []*v1.Pod
	for _, p := range k.pods {
		if p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed || p.DeletionTimestamp != nil {
			continue
		}
		out = append(out, p)
	}
	return out
}

// ActivePods are the pods that run or are about to, for the eviction
// manager; those it is evicting are left out.
func (k *Kubelet) ActivePods() []*v1.Pod {
	var out []*v1.Pod
	for _, p := range k.activePods() {
		if _, evicting := k.evictionOf(p.UID); !evicting {
			out = append(out, p)
		}
	}
	return out
}

// Evict fails a pod for the eviction manager, as upstream's killPodFunc:
// its worker kills it within grace seconds and sets phase Failed with
// reason Evicted, the message and the DisruptionTarget condition. It
// waits, up to the grace period and half a minute, for the containers
// to stop.
func (k *Kubelet) Evict(ctx context.Context, pod *v1.Pod, grace int64, message string, condition v1.PodCondition) bool {
	k.evictMu.Lock()
	k.evictions[pod.UID] = eviction{failure: &podstatus.Failure{Reason: "Evicted", Message: message, Condition: &condition}, grace: grace}
	k.evictMu.Unlock()
	k.kick(pod.UID)
	deadline := time.Now().Add(time.Duration(grace)*time.Second + 30*time.Second)
	for time.Now().Before(deadline) {
		if rtp := k.state.get(pod.UID); rtp == nil || !anyRunning(rtp) {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(200 * time.Millisecond):
		}
	}
	return false
}

// DeleteAllUnusedContainers removes every exited container that is not
// the newest run of its name in its pod's current sandbox, and the
// sandboxes no container needs, as upstream's container GC does for the
// eviction manager. The newest run stays for `kubectl logs`.
//
// It works from the last relist (a second old at most) rather than
// relisting itself, which would hide changes from the relist loop.
func (k *Kubelet) DeleteAllUnusedContainers(ctx context.Context) error {
	for _, uid := range k.state.podUIDs() {
		rtp := k.state.get(uid)
		if rtp == nil {
			continue
		}
		current := ""
		if len(rtp.Sandboxes) > 0 {
			current = rtp.Sandboxes[0].ID
		}
		seen := map[string]bool{}
		for _, c := range rtp.Containers {
			newest := !seen[c.Name] && c.SandboxID == current
			seen[c.Name] = true
			if c.State == podstatus.Exited && !newest {
				_, _ = k.rt.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: c.ID})
			}
		}
		_ = k.state.refresh(ctx, k.rt, uid)
		k.gcContainers(ctx, k.state.get(uid), current)
	}
	return nil
}
