package pvcprotection

import (
	"slices"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/storage/ephemeral"
)

// The Unused condition's reasons and messages, as upstream writes them.
const (
	reasonUsed    = "PodUsingPVC"
	messageUsed   = "A pod is currently referencing this PVC"
	reasonUnused  = "NoPodsUsingPVC"
	messageUnused = "No pods are currently referencing this PVC"
)

// action is what sync does with a claim's finalizer.
type action int

const (
	keep action = iota
	addFinalizer
	// checkUse: the claim is being deleted and has the finalizer, which
	// goes once no pod blocks the deletion.
	checkUse
)

// decide is what a claim's finalizer needs: adding when the claim is
// live and lacks it (made before the StorageObjectInUseProtection
// admission plugin ran), a look at the claim's pods when it is being
// deleted and still has it.
func decide(pvc *v1.PersistentVolumeClaim) action {
	has := slices.Contains(pvc.Finalizers, Finalizer)
	switch {
	case pvc.DeletionTimestamp != nil && has:
		return checkUse
	case pvc.DeletionTimestamp == nil && !has:
		return addFinalizer
	}
	return keep
}

// tracksUnused: the Unused condition is kept on live, Bound claims only
// (upstream leaves claims the binder is still working on alone).
func tracksUnused(pvc *v1.PersistentVolumeClaim) bool {
	return pvc.DeletionTimestamp == nil && pvc.Status.Phase == v1.ClaimBound
}

// unusedCondition is the Unused condition to write given whether a pod
// uses the claim, nil when the claim's present condition already says
// so. The time is when the claim last changed between used and unused.
func unusedCondition(pvc *v1.PersistentVolumeClaim, used bool, now metav1.Time) *v1.PersistentVolumeClaimCondition {
	var cur *v1.PersistentVolumeClaimCondition
	for i := range pvc.Status.Conditions {
		if pvc.Status.Conditions[i].Type == v1.PersistentVolumeClaimUnused {
			cur = &pvc.Status.Conditions[i]
			break
		}
	}
	cond := &v1.PersistentVolumeClaimCondition{Type: v1.PersistentVolumeClaimUnused, LastTransitionTime: now}
	switch {
	case used && (cur == nil || cur.Status == v1.ConditionTrue):
		cond.Status, cond.Reason, cond.Message = v1.ConditionFalse, reasonUsed, messageUsed
	case !used && (cur == nil || cur.Status != v1.ConditionTrue):
		cond.Status, cond.Reason, cond.Message = v1.ConditionTrue, reasonUnused, messageUnused
	default:
		return nil
	}
	return cond
}

// withCondition is conditions with cond in place of the one of its type,
// or appended.
func withCondition(conditions []v1.PersistentVolumeClaimCondition, cond v1.PersistentVolumeClaimCondition) []v1.PersistentVolumeClaimCondition {
	out := slices.Clone(conditions)
	for i := range out {
		if out[i].Type == cond.Type {
			out[i] = cond
			return out
		}
	}
	return append(out, cond)
}

// claimNames are the claims pod refers to, through
// spec.volumes[].persistentVolumeClaim and generic ephemeral volumes
// (whose claim is named <pod>-<volume>), in volume order.
func claimNames(pod *v1.Pod) []string {
	var names []string
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		switch {
		case vol.PersistentVolumeClaim != nil:
			names = append(names, vol.PersistentVolumeClaim.ClaimName)
		case vol.Ephemeral != nil:
			names = append(names, ephemeral.VolumeClaimName(pod, vol))
		}
	}
	return names
}

// claimKeys are pod's claims as namespace/name keys.
func claimKeys(pod *v1.Pod) []string {
	names := claimNames(pod)
	keys := make([]string, len(names))
	for i, n := range names {
		keys[i] = pod.Namespace + "/" + n
	}
	return keys
}

// firstPod is the first of pods for which match holds, nil when none.
func firstPod(pvc *v1.PersistentVolumeClaim, pods []*v1.Pod, match func(*v1.Pod, *v1.PersistentVolumeClaim) bool) *v1.Pod {
	for _, p := range pods {
		if match(p, pvc) {
			return p
		}
	}
	return nil
}

// podBlocksDeletion is upstream's rule for the finalizer. Only a
// scheduled pod counts: the kubelet sees pods once they are bound, and
// the scheduler does not bind a pod whose claim is being deleted. A pod
// counts until its object is gone, whatever its phase, since its volumes
// may still be mounted after it has finished (the kubelet unmounts them
// before the pod is removed). The claim of a generic ephemeral volume,
// which the pod owns, is let go once the pod is shut down, so that a pod
// finalizer waiting for the claim and the claim waiting for the pod
// cannot block each other.
func podBlocksDeletion(pod *v1.Pod, pvc *v1.PersistentVolumeClaim) bool {
	if pod.Spec.NodeName == "" || pod.Namespace != pvc.Namespace {
		return false
	}
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		if vol.PersistentVolumeClaim != nil && vol.PersistentVolumeClaim.ClaimName == pvc.Name {
			return true
		}
		if vol.Ephemeral != nil && !podIsShutDown(pod) &&
			ephemeral.VolumeClaimName(pod, vol) == pvc.Name && ephemeral.VolumeIsForPod(pod, pvc) == nil {
			return true
		}
	}
	return false
}

// podUsesClaim is upstream's rule for the Unused condition: a pod that
// has not terminated, scheduled or not, refers to the claim (an
// ephemeral volume's claim only when the pod owns it).
func podUsesClaim(pod *v1.Pod, pvc *v1.PersistentVolumeClaim) bool {
	if podTerminated(pod) || pod.Namespace != pvc.Namespace {
		return false
	}
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		if vol.PersistentVolumeClaim != nil && vol.PersistentVolumeClaim.ClaimName == pvc.Name {
			return true
		}
		if vol.Ephemeral != nil && ephemeral.VolumeClaimName(pod, vol) == pvc.Name && ephemeral.VolumeIsForPod(pod, pvc) == nil {
			return true
		}
	}
	return false
}

// podIsShutDown is a pod the kubelet is done with or that was force
// deleted: being deleted with a grace period of zero.
func podIsShutDown(pod *v1.Pod) bool {
	return pod.DeletionTimestamp != nil && pod.DeletionGracePeriodSeconds != nil && *pod.DeletionGracePeriodSeconds == 0
}

// podTerminated is upstream's IsPodTerminated: the pod failed or
// succeeded, or it is being deleted and none of its containers runs.
func podTerminated(pod *v1.Pod) bool {
	s := &pod.Status
	return s.Phase == v1.PodFailed || s.Phase == v1.PodSucceeded ||
		pod.DeletionTimestamp != nil && notRunning(s.InitContainerStatuses) && notRunning(s.ContainerStatuses) && notRunning(s.EphemeralContainerStatuses)
}

// notRunning: every container is waiting or terminated (or there are none).
func notRunning(statuses []v1.ContainerStatus) bool {
	for _, st := range statuses {
		if st.State.Terminated == nil && st.State.Waiting == nil {
			return false
		}
	}
	return true
}
