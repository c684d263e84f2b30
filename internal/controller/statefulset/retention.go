package statefulset

import (
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// retentionPolicy is the set's claim retention policy, Retain when unset.
func retentionPolicy(set *appsv1.StatefulSet) appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy {
	p := appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
		WhenDeleted: appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
		WhenScaled:  appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
	}
	if r := set.Spec.PersistentVolumeClaimRetentionPolicy; r != nil {
		if r.WhenDeleted != "" {
			p.WhenDeleted = r.WhenDeleted
		}
		if r.WhenScaled != "" {
			p.WhenScaled = r.WhenScaled
		}
	}
	return p
}

// setClaimOwners gives claim the owner references the retention policy
// asks for, as upstream's updateClaimOwnerRefForSetAndPod: whenDeleted:
// Delete makes the set an owner (the garbage collector deletes the claim
// with the set); whenScaled: Delete makes a condemned pod the owner (the
// claim goes with the pod). It reports whether claim changed.
func setClaimOwners(claim *v1.PersistentVolumeClaim, set *appsv1.StatefulSet, pod *v1.Pod) bool {
	policy := retentionPolicy(set)
	const del = appsv1.DeletePersistentVolumeClaimRetentionPolicyType
	scaledDown := !inRange(set, ordinalOf(pod))
	setRef := metav1.OwnerReference{APIVersion: controllerKind.GroupVersion().String(), Kind: controllerKind.Kind, Name: set.Name, UID: set.UID}
	podRef := metav1.OwnerReference{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID}
	changed := false
	wantSet := policy.WhenDeleted == del && !(policy.WhenScaled == del && scaledDown)
	wantPod := policy.WhenScaled == del && scaledDown
	if wantSet {
		changed = addOwner(claim, setRef) || changed
	} else {
		changed = removeOwner(claim, set.UID) || changed
	}
	if wantPod && pod.UID != "" {
		changed = addOwner(claim, podRef) || changed
	} else if !wantPod {
		changed = removeOwner(claim, pod.UID) || changed
	}
	return changed
}

func addOwner(obj metav1.Object, ref metav1.OwnerReference) bool {
	refs := obj.GetOwnerReferences()
	for _, r := range refs {
		if r.UID == ref.UID {
			return false
		}
	}
	obj.SetOwnerReferences(append(refs, ref))
	return true
}

func removeOwner(obj metav1.Object, uid types.UID) bool {
	if uid == "" {
		return false
	}
	refs := obj.GetOwnerReferences()
	out := refs[:0:0]
	for _, r := range refs {
		if r.UID != uid {
			out = append(out, r)
		}
	}
	if len(out) == len(refs) {
		return false
	}
	obj.SetOwnerReferences(out)
	return true
}

// claimOwnersMatch is a pod whose existing claims already carry the owners
// the policy asks for. Missing claims match: they are created later.
func claimOwnersMatch(set *appsv1.StatefulSet, pod *v1.Pod, claims map[string]*v1.PersistentVolumeClaim) bool {
	o := ordinalOf(pod)
	for _, t := range set.Spec.VolumeClaimTemplates {
		c, ok := claims[ClaimName(set, t.Name, o)]
		if !ok {
			continue
		}
		if setClaimOwners(c.DeepCopy(), set, pod) {
			return false
		}
	}
	return true
}

// missingClaims reports whether one of the pod's claims does not exist.
func missingClaims(set *appsv1.StatefulSet, pod *v1.Pod, claims map[string]*v1.PersistentVolumeClaim) bool {
	o := ordinalOf(pod)
	for _, t := range set.Spec.VolumeClaimTemplates {
		if _, ok := claims[ClaimName(set, t.Name, o)]; !ok {
			return true
		}
	}
	return false
}

// claimIsStale is a claim of the pod about to be created that a former
// pod of the same name still owns: with whenScaled: Delete the garbage
// collector is about to remove it.
func claimIsStale(set *appsv1.StatefulSet, pod *v1.Pod, claims map[string]*v1.PersistentVolumeClaim) bool {
	if retentionPolicy(set).WhenScaled != appsv1.DeletePersistentVolumeClaimRetentionPolicyType {
		return false
	}
	o := ordinalOf(pod)
	for _, t := range set.Spec.VolumeClaimTemplates {
		c, ok := claims[ClaimName(set, t.Name, o)]
		if !ok {
			continue
		}
		for _, r := range c.OwnerReferences {
			if r.Kind == "Pod" && r.Name == pod.Name && r.UID != pod.UID {
				return true
			}
		}
	}
	return false
}
