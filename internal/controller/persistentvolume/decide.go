// Package persistentvolume binds PersistentVolumeClaims to
// PersistentVolumes as upstream's PV controller (persistent-volume-binder)
// does: the smallest Available volume that matches a claim's class,
// capacity, access modes, volume mode and selector; pre-binding from
// either side (claimRef, volumeName); the bind-completed,
// bound-by-controller and storage-provisioner annotations; the claim
// phases Pending, Bound and Lost and the volume phases Available, Bound,
// Released and Failed; the reclaim policies; retroactive default classes.
//
// Every provisioner is external here, as CSI drivers are upstream: the
// controller annotates a claim with its class's provisioner and waits
// for that provisioner (Orca's built-in local-path one, or a CSI
// driver's external-provisioner) to create a volume pre-bound to the
// claim, which the next pass binds. Deleting the storage of a released
// volume is likewise the provisioner's.
//
// The decisions are pure functions of the objects (decide.go); the
// controller carries them out (controller.go). The binding is two writes
// to two objects with no transaction between them, as upstream's: the
// volume's claimRef first, then the claim's volumeName, so that a pass
// interrupted between them finds the volume already promised and
// finishes the claim.
package persistentvolume

import (
	"fmt"
	"sort"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/storage/volume"

	"github.com/orca-project/orca/internal/admission/defaultstorageclass"
)

// NoProvisioner is the provisioner of classes whose volumes an
// administrator creates by hand (local volumes, typically).
const NoProvisioner = "kubernetes.io/no-provisioner"

// Upstream's event reasons.
const (
	reasonFailedBinding        = "FailedBinding"
	reasonWaitForFirstConsumer = "WaitForFirstConsumer"
	reasonExternalProvisioning = "ExternalProvisioning"
	reasonProvisioningFailed   = "ProvisioningFailed"
	reasonClaimLost            = "ClaimLost"
	reasonClaimMisbound        = "ClaimMisbound"
	reasonVolumeFailedDelete   = "VolumeFailedDelete"
	reasonVolumeFailedRecycle  = "VolumeFailedRecycle"
)

type event struct{ typ, reason, msg string }

// claimVerdict is what a pass does with one claim; at most one of bind,
// setClass and provision is set.
type claimVerdict struct {
	// bind: bind this volume and the claim to each other (idempotent:
	// also finishes a half-done binding and repairs statuses).
	bind *v1.PersistentVolume
	// setClass gives a claim without a class the default one.
	setClass string
	// provision annotates the claim for this external provisioner.
	provision string
	// phase is recorded in the claim's status when nothing above applies.
	phase v1.PersistentVolumeClaimPhase
	event *event
	// eventOnChange: the event is posted only when the phase changes.
	eventOnChange bool
	err           error
}

// decideClaim decides for one claim over the cluster's volumes and
// classes (classes by name).
func decideClaim(c *v1.PersistentVolumeClaim, volumes []*v1.PersistentVolume, classes map[string]*storagev1.StorageClass) claimVerdict {
	if metav1.HasAnnotation(c.ObjectMeta, volume.AnnBindCompleted) {
		return decideBoundClaim(c, volumes)
	}
	if c.Spec.VolumeName != "" {
		return decidePreboundClaim(c, volumes)
	}
	// Retroactive default: a claim created while no class was the
	// default gets the one there is now, as upstream.
	if c.Spec.StorageClassName == nil && !metav1.HasAnnotation(c.ObjectMeta, v1.BetaStorageClassAnnotation) {
		list := make([]*storagev1.StorageClass, 0, len(classes))
		for _, sc := range classes {
			list = append(list, sc)
		}
		if d := defaultstorageclass.Default(list); d != nil {
			return claimVerdict{setClass: d.Name}
		}
	}
	className := volume.GetPersistentVolumeClaimClass(c)
	class := classes[className]
	delay := class != nil && class.VolumeBindingMode != nil && *class.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer
	pv, err := bestMatch(c, volumes, delay)
	if err != nil {
		return claimVerdict{err: fmt.Errorf("error finding PV for claim %q: %w", claimKey(c), err)}
	}
	if pv != nil {
		return claimVerdict{bind: pv}
	}
	pending := claimVerdict{phase: v1.ClaimPending}
	switch {
	case delay && !volume.IsDelayBindingProvisioning(c):
		// The scheduler binds or provisions once a pod uses the claim.
		pending.event = &event{v1.EventTypeNormal, reasonWaitForFirstConsumer, "waiting for first consumer to be created before binding"}
	case className != "" && class == nil:
		pending.event = &event{v1.EventTypeWarning, reasonProvisioningFailed, fmt.Sprintf("storageclass.storage.k8s.io %q not found", className)}
	case className != "" && class.Provisioner == NoProvisioner:
		// Volumes of such a class come from an administrator.
	case className != "":
		pending.provision = class.Provisioner
		pending.event = &event{v1.EventTypeNormal, reasonExternalProvisioning, fmt.Sprintf(
			"Waiting for a volume to be created either by the external provisioner '%s' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.",
			class.Provisioner)}
	default:
		pending.event = &event{v1.EventTypeNormal, reasonFailedBinding, "no persistent volumes available for this claim and no storage class is set"}
	}
	return pending
}

// bestMatch is upstream's findBestMatchForClaim: the volumes are tried
// by their sets of access modes, fewest modes first, among those that
// hold every mode the claim asks for, so that a claim takes a volume no
// broader than it needs before a smaller one that is.
func bestMatch(c *v1.PersistentVolumeClaim, volumes []*v1.PersistentVolume, delay bool) (*v1.PersistentVolume, error) {
	groups := map[int][]*v1.PersistentVolume{}
	var sizes []int
	for _, pv := range volumes {
		if !volume.CheckAccessModes(c, pv) {
			continue
		}
		n := len(pv.Spec.AccessModes)
		if _, ok := groups[n]; !ok {
			sizes = append(sizes, n)
		}
		groups[n] = append(groups[n], pv)
	}
	sort.Ints(sizes)
	for _, n := range sizes {
		pv, err := volume.FindMatchingVolume(c, groups[n], nil, nil, delay, true)
		if err != nil || pv != nil {
			return pv, err
		}
	}
	return nil, nil
}

// decidePreboundClaim decides for a claim whose creator named the volume.
func decidePreboundClaim(c *v1.PersistentVolumeClaim, volumes []*v1.PersistentVolume) claimVerdict {
	pv := find(volumes, c.Spec.VolumeName)
	switch {
	case pv == nil:
		// It may be created later.
		return claimVerdict{phase: v1.ClaimPending}
	case pv.Spec.ClaimRef == nil:
		if err := satisfies(pv, c); err != nil {
			return claimVerdict{phase: v1.ClaimPending, event: &event{v1.EventTypeWarning, reasonFailedBinding,
				fmt.Sprintf("Cannot bind to requested volume %q: %v", pv.Name, err)}}
		}
		return claimVerdict{bind: pv}
	case volume.IsVolumeBoundToClaim(pv, c):
		return claimVerdict{bind: pv}
	case !metav1.HasAnnotation(c.ObjectMeta, volume.AnnBoundByController):
		// The volume is another claim's: wait for it to be released.
		return claimVerdict{phase: v1.ClaimPending}
	default:
		return claimVerdict{err: fmt.Errorf("invalid binding of claim %q to volume %q: volume already claimed by %q",
			claimKey(c), c.Spec.VolumeName, refKey(pv.Spec.ClaimRef))}
	}
}

// decideBoundClaim decides for a claim that was bound once.
func decideBoundClaim(c *v1.PersistentVolumeClaim, volumes []*v1.PersistentVolume) claimVerdict {
	if c.Spec.VolumeName == "" {
		return claimVerdict{phase: v1.ClaimLost, eventOnChange: true,
			event: &event{v1.EventTypeWarning, reasonClaimLost, "Bound claim has lost reference to PersistentVolume. Data on the volume is lost!"}}
	}
	pv := find(volumes, c.Spec.VolumeName)
	switch {
	case pv == nil:
		return claimVerdict{phase: v1.ClaimLost, eventOnChange: true,
			event: &event{v1.EventTypeWarning, reasonClaimLost, "Bound claim has lost its PersistentVolume. Data on the volume is lost!"}}
	case pv.Spec.ClaimRef == nil, volume.IsVolumeBoundToClaim(pv, c):
		// An unbound volume was bound once: bind it again. A bound one:
		// make sure both statuses say so.
		return claimVerdict{bind: pv}
	default:
		return claimVerdict{phase: v1.ClaimLost, eventOnChange: true,
			event: &event{v1.EventTypeWarning, reasonClaimMisbound, "Two claims are bound to the same volume, this one is bound incorrectly"}}
	}
}

// satisfies is upstream's check of a volume a claim asked for by name.
func satisfies(pv *v1.PersistentVolume, c *v1.PersistentVolumeClaim) error {
	if pv.DeletionTimestamp != nil {
		return fmt.Errorf("the volume is marked for deletion %q", pv.Name)
	}
	want := c.Spec.Resources.Requests[v1.ResourceStorage]
	have := pv.Spec.Capacity[v1.ResourceStorage]
	switch {
	case have.Cmp(want) < 0:
		return fmt.Errorf("requested PV is too small")
	case volume.GetPersistentVolumeClass(pv) != volume.GetPersistentVolumeClaimClass(c):
		return fmt.Errorf("storageClassName does not match")
	case volume.CheckVolumeModeMismatches(&c.Spec, &pv.Spec):
		return fmt.Errorf("incompatible volumeMode")
	case !volume.CheckAccessModes(c, pv):
		return fmt.Errorf("incompatible accessMode")
	}
	return nil
}

// volumeVerdict is what a pass does with one volume.
type volumeVerdict struct {
	// phase to record, with message, when it differs.
	phase   v1.PersistentVolumePhase
	message string
	// unbind clears the claimRef (bound by the controller) or its UID
	// (pre-bound by a user, who keeps the reservation).
	unbind bool
	// syncClaim asks for the claim to be looked at: a volume promised to
	// it (by a provisioner or the scheduler) waits for the claim's side.
	syncClaim bool
	event     *event
}

// decideVolume decides for one volume; claim is the claim its claimRef
// names as the cluster has it, nil when there is none of that name.
func decideVolume(pv *v1.PersistentVolume, claim *v1.PersistentVolumeClaim) volumeVerdict {
	ref := pv.Spec.ClaimRef
	if ref == nil || ref.UID == "" {
		// Free, or reserved for a claim by name that will bind it.
		return volumeVerdict{phase: v1.VolumeAvailable, syncClaim: ref != nil}
	}
	if claim == nil || claim.UID != ref.UID {
		return decideReleased(pv)
	}
	switch claim.Spec.VolumeName {
	case "":
		// The claim's side of the binding is still to be written.
		return volumeVerdict{phase: pv.Status.Phase, syncClaim: true}
	case pv.Name:
		return volumeVerdict{phase: v1.VolumeBound}
	}
	// The claim went to another volume.
	if metav1.HasAnnotation(pv.ObjectMeta, volume.AnnDynamicallyProvisioned) && pv.Spec.PersistentVolumeReclaimPolicy == v1.PersistentVolumeReclaimDelete {
		// Made for this claim, which does not want it: give it back.
		return decideReleased(pv)
	}
	return volumeVerdict{phase: v1.VolumeAvailable, unbind: true}
}

// decideReleased is a volume whose claim is gone: Released, then the
// reclaim policy. Deleting storage is the provisioner's (every one is
// external here); a volume no provisioner made cannot be deleted or
// recycled and fails, as upstream without a plugin for it.
func decideReleased(pv *v1.PersistentVolume) volumeVerdict {
	if pv.Status.Phase != v1.VolumeReleased && pv.Status.Phase != v1.VolumeFailed {
		return volumeVerdict{phase: v1.VolumeReleased}
	}
	if pv.Status.Phase == v1.VolumeFailed {
		return volumeVerdict{phase: v1.VolumeFailed, message: pv.Status.Message}
	}
	switch pv.Spec.PersistentVolumeReclaimPolicy {
	case v1.PersistentVolumeReclaimDelete:
		if metav1.HasAnnotation(pv.ObjectMeta, volume.AnnDynamicallyProvisioned) {
			return volumeVerdict{phase: v1.VolumeReleased}
		}
		msg := fmt.Sprintf("error getting deleter volume plugin for volume %q: no deletable volume plugin matched", pv.Name)
		return volumeVerdict{phase: v1.VolumeFailed, message: msg, event: &event{v1.EventTypeWarning, reasonVolumeFailedDelete, msg}}
	case v1.PersistentVolumeReclaimRecycle:
		msg := "No recycler plugin found for the volume!"
		return volumeVerdict{phase: v1.VolumeFailed, message: msg, event: &event{v1.EventTypeWarning, reasonVolumeFailedRecycle, msg}}
	}
	// Retain: the data and the volume stay for an administrator.
	return volumeVerdict{phase: v1.VolumeReleased}
}

func find(volumes []*v1.PersistentVolume, name string) *v1.PersistentVolume {
	for _, pv := range volumes {
		if pv.Name == name {
			return pv
		}
	}
	return nil
}

func claimKey(c *v1.PersistentVolumeClaim) string { return c.Namespace + "/" + c.Name }

func refKey(r *v1.ObjectReference) string { return r.Namespace + "/" + r.Name }
