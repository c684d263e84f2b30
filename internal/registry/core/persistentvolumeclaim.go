package core

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
)

// Persistentvolumeclaims is the persistentvolumeclaims resource.
var Persistentvolumeclaims = &registry.Resource{
	Group: "", Version: "v1", Name: "persistentvolumeclaims", Singular: "persistentvolumeclaim", Kind: "PersistentVolumeClaim",
	Namespaced:     true,
	ShortNames:     []string{"pvc"},
	Status:         true,
	New:            func() runtime.Object { return &corev1.PersistentVolumeClaim{} },
	NewList:        func() runtime.Object { return &corev1.PersistentVolumeClaimList{} },
	Default:        registry.Typed(defaultPersistentVolumeClaim),
	Validate:       registry.TypedValidate(validatePersistentVolumeClaim),
	ValidateUpdate: registry.TypedValidateUpdate(validatePersistentVolumeClaimUpdate),
	Table:          persistentvolumeclaimTable,
	Fields:         persistentvolumeclaimFields,
}

func defaultPersistentVolumeClaim(pvc *corev1.PersistentVolumeClaim) {
	if pvc.Status.Phase == "" {
		pvc.Status.Phase = corev1.ClaimPending
	}
	DefaultPersistentVolumeClaimSpec(&pvc.Spec)
	roundUpResourceList(pvc.Status.Capacity)
	roundUpResourceList(pvc.Status.AllocatedResources)
}

func validatePersistentVolumeClaim(pvc *corev1.PersistentVolumeClaim) field.ErrorList {
	return ValidatePersistentVolumeClaimSpec(&pvc.Spec, field.NewPath("spec"))
}

// validatePersistentVolumeClaimUpdate: a claim is fixed once made, so that
// quota and limit ranges cannot be gamed. The binder may set volumeName
// once; a bound claim may grow its storage request (or shrink it back, not
// below what was allocated) and change its volume attributes class; an
// older client may move the class from the beta annotation to the field.
func validatePersistentVolumeClaimUpdate(pvc, old *corev1.PersistentVolumeClaim) field.ErrorList {
	var allErrs field.ErrorList
	newSpec, oldSpec := pvc.Spec.DeepCopy(), old.Spec.DeepCopy()
	if len(old.Spec.VolumeName) == 0 {
		oldSpec.VolumeName = newSpec.VolumeName
	}
	if storageClassUpgradeFromAnnotation(old, pvc) {
		newSpec.StorageClassName = nil
	} else {
		allErrs = append(allErrs, validateImmutableAnnotation(pvc.Annotations[corev1.BetaStorageClassAnnotation], old.Annotations[corev1.BetaStorageClassAnnotation], corev1.BetaStorageClassAnnotation)...)
		if storageClassUpgradeFromNil(old, pvc) {
			newSpec.StorageClassName = oldSpec.StorageClassName
		}
	}
	if pvc.Status.Phase == corev1.ClaimBound {
		if newSpec.Resources.Requests != nil {
			newSpec.Resources.Requests[corev1.ResourceStorage] = old.Spec.Resources.Requests[corev1.ResourceStorage]
		}
		if newSpec.VolumeAttributesClassName != nil {
			newSpec.VolumeAttributesClassName = oldSpec.VolumeAttributesClassName
		}
	}
	if !semanticEqual(*newSpec, *oldSpec) {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("spec"),
			fmt.Sprintf("spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n%v", specDiff(*oldSpec, *newSpec))))
	}

	oldSize := old.Spec.Resources.Requests[corev1.ResourceStorage]
	newSize := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	statusSize := old.Status.Capacity[corev1.ResourceStorage]
	// Shrinking back is allowed (RecoverVolumeExpansionFailure) so that a
	// failed expansion can be undone, but never to or below what the
	// volume actually has.
	if newSize.Cmp(oldSize) < 0 && newSize.Cmp(statusSize) <= 0 {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("spec", "resources", "requests", "storage"), "field can not be less than status.capacity"))
	}
	// Upstream reports this one without "spec".
	allErrs = append(allErrs, apivalidation.ValidateImmutableField(pvc.Spec.VolumeMode, old.Spec.VolumeMode, field.NewPath("volumeMode"))...)
	if old.Spec.VolumeAttributesClassName != nil && !semanticEqual(old.Spec.VolumeAttributesClassName, pvc.Spec.VolumeAttributesClassName) {
		p := field.NewPath("spec", "volumeAttributesClassName")
		if pvc.Spec.VolumeAttributesClassName == nil {
			allErrs = append(allErrs, field.Forbidden(p, "update from non-nil value to nil is forbidden"))
		} else if len(*pvc.Spec.VolumeAttributesClassName) == 0 {
			allErrs = append(allErrs, field.Forbidden(p, "update from non-nil value to an empty string is forbidden"))
		}
	}
	return allErrs
}

func validateImmutableAnnotation(newVal, oldVal, annotation string) field.ErrorList {
	if oldVal != newVal {
		return field.ErrorList{field.Invalid(field.NewPath("metadata").Child("annotations", annotation), newVal, fieldImmutableErrorMsg)}
	}
	return nil
}

// storageClassUpgradeFromAnnotation: the old claim named its class in the
// beta annotation only, and the new one moves that same class to the field.
func storageClassUpgradeFromAnnotation(old, pvc *corev1.PersistentVolumeClaim) bool {
	oldSC, oldHas := old.Annotations[corev1.BetaStorageClassAnnotation]
	newSC, newHas := pvc.Annotations[corev1.BetaStorageClassAnnotation]
	return oldHas && old.Spec.StorageClassName == nil &&
		pvc.Spec.StorageClassName != nil && *pvc.Spec.StorageClassName == oldSC &&
		(!newHas || newSC == oldSC)
}

// storageClassUpgradeFromNil: a claim with no class may be given one (the
// default class admission does this), if it agrees with any annotation.
func storageClassUpgradeFromNil(old, pvc *corev1.PersistentVolumeClaim) bool {
	oldSC, oldHas := old.Annotations[corev1.BetaStorageClassAnnotation]
	return pvc.Spec.StorageClassName != nil && old.Spec.StorageClassName == nil &&
		(!oldHas || *pvc.Spec.StorageClassName == oldSC)
}
