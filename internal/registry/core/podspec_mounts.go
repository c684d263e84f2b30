package core

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func validateVolumeMounts(mounts []corev1.VolumeMount, volDevices map[string]string, vols map[string]corev1.VolumeSource, ctr *corev1.Container, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	mountpoints := sets.Set[string]{}
	devicePaths := sets.Set[string]{}
	for _, d := range volDevices {
		devicePaths.Insert(d)
	}
	for i, mnt := range mounts {
		p := fldPath.Index(i)
		if len(mnt.Name) == 0 {
			allErrs = append(allErrs, field.Required(p.Child("name"), ""))
		}
		if _, ok := vols[mnt.Name]; !ok {
			allErrs = append(allErrs, field.NotFound(p.Child("name"), mnt.Name))
		}
		if len(mnt.MountPath) == 0 {
			allErrs = append(allErrs, field.Required(p.Child("mountPath"), ""))
		}
		if mountpoints.Has(mnt.MountPath) {
			allErrs = append(allErrs, field.Invalid(p.Child("mountPath"), mnt.MountPath, "must be unique"))
		}
		mountpoints.Insert(mnt.MountPath)
		if _, ok := volDevices[mnt.Name]; ok {
			allErrs = append(allErrs, field.Invalid(p.Child("name"), mnt.Name, "must not already exist in volumeDevices"))
		}
		if devicePaths.Has(mnt.MountPath) {
			allErrs = append(allErrs, field.Invalid(p.Child("mountPath"), mnt.MountPath, "must not already exist as a path in volumeDevices"))
		}
		if v, ok := vols[mnt.Name]; ok && v.Image != nil {
			if len(mnt.SubPath) != 0 {
				allErrs = append(allErrs, field.Invalid(p.Child("subPath"), mnt.SubPath, "not allowed in image volume sources"))
			}
			if len(mnt.SubPathExpr) != 0 {
				allErrs = append(allErrs, field.Invalid(p.Child("subPathExpr"), mnt.SubPathExpr, "not allowed in image volume sources"))
			}
		}
		// The paths below lack the index, as upstream's do.
		if len(mnt.SubPath) > 0 {
			allErrs = append(allErrs, validateLocalDescendingPath(mnt.SubPath, fldPath.Child("subPath"))...)
		}
		if len(mnt.SubPathExpr) > 0 {
			if len(mnt.SubPath) > 0 {
				allErrs = append(allErrs, field.Invalid(p.Child("subPathExpr"), mnt.SubPathExpr, "subPathExpr and subPath are mutually exclusive"))
			}
			allErrs = append(allErrs, validateLocalDescendingPath(mnt.SubPathExpr, fldPath.Child("subPathExpr"))...)
		}
		if mnt.MountPropagation != nil {
			allErrs = append(allErrs, validateMountPropagation(*mnt.MountPropagation, ctr, fldPath.Child("mountPropagation"))...)
		}
		allErrs = append(allErrs, validateMountRecursiveReadOnly(mnt, fldPath.Child("recursiveReadOnly"))...)
	}
	return allErrs
}

var supportedMountPropagations = sets.New(
	corev1.MountPropagationBidirectional, corev1.MountPropagationHostToContainer, corev1.MountPropagationNone)

func validateMountPropagation(mp corev1.MountPropagationMode, ctr *corev1.Container, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if !supportedMountPropagations.Has(mp) {
		allErrs = append(allErrs, field.NotSupported(fldPath, mp, sets.List(supportedMountPropagations)))
	}
	privileged := ctr.SecurityContext != nil && ctr.SecurityContext.Privileged != nil && *ctr.SecurityContext.Privileged
	if mp == corev1.MountPropagationBidirectional && !privileged {
		allErrs = append(allErrs, field.Forbidden(fldPath, "Bidirectional mount propagation is available only to privileged containers"))
	}
	return allErrs
}

func validateMountRecursiveReadOnly(mnt corev1.VolumeMount, fldPath *field.Path) field.ErrorList {
	if mnt.RecursiveReadOnly == nil {
		return nil
	}
	var allErrs field.ErrorList
	switch *mnt.RecursiveReadOnly {
	case corev1.RecursiveReadOnlyDisabled:
	case corev1.RecursiveReadOnlyEnabled, corev1.RecursiveReadOnlyIfPossible:
		if !mnt.ReadOnly {
			allErrs = append(allErrs, field.Forbidden(fldPath, "may only be specified when readOnly is true"))
		}
		if mnt.MountPropagation != nil && *mnt.MountPropagation != corev1.MountPropagationNone {
			allErrs = append(allErrs, field.Forbidden(fldPath, "may only be specified when mountPropagation is None or not specified"))
		}
	default:
		allErrs = append(allErrs, field.NotSupported(fldPath, *mnt.RecursiveReadOnly, []corev1.RecursiveReadOnlyMode{
			corev1.RecursiveReadOnlyDisabled, corev1.RecursiveReadOnlyEnabled, corev1.RecursiveReadOnlyIfPossible}))
	}
	return allErrs
}

func validateVolumeDevices(devices []corev1.VolumeDevice, volMounts map[string]string, vols map[string]corev1.VolumeSource, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	devicePaths, deviceNames := sets.Set[string]{}, sets.Set[string]{}
	mountPaths := sets.Set[string]{}
	for _, m := range volMounts {
		mountPaths.Insert(m)
	}
	for i, dev := range devices {
		p := fldPath.Index(i)
		src, matched := vols[dev.Name]
		if len(dev.Name) == 0 {
			allErrs = append(allErrs, field.Required(p.Child("name"), ""))
		}
		if deviceNames.Has(dev.Name) {
			allErrs = append(allErrs, field.Invalid(p.Child("name"), dev.Name, "must be unique"))
		}
		// Block devices only come from claims.
		if matched && src.PersistentVolumeClaim == nil && src.Ephemeral == nil {
			allErrs = append(allErrs, field.Invalid(p.Child("name"), dev.Name, "can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode"))
		}
		if !matched {
			allErrs = append(allErrs, field.NotFound(p.Child("name"), dev.Name))
		}
		if len(dev.DevicePath) == 0 {
			allErrs = append(allErrs, field.Required(p.Child("devicePath"), ""))
		}
		if devicePaths.Has(dev.DevicePath) {
			allErrs = append(allErrs, field.Invalid(p.Child("devicePath"), dev.DevicePath, "must be unique"))
		}
		if len(dev.DevicePath) > 0 && len(validatePathNoBacksteps(dev.DevicePath, p)) > 0 {
			allErrs = append(allErrs, field.Invalid(p.Child("devicePath"), dev.DevicePath, "can not contain backsteps ('..')"))
		} else {
			devicePaths.Insert(dev.DevicePath)
		}
		if _, ok := volMounts[dev.Name]; ok {
			allErrs = append(allErrs, field.Invalid(p.Child("name"), dev.Name, "must not already exist in volumeMounts"))
		}
		if mountPaths.Has(dev.DevicePath) {
			allErrs = append(allErrs, field.Invalid(p.Child("devicePath"), dev.DevicePath, "must not already exist as a path in volumeMounts"))
		}
		if len(dev.Name) > 0 {
			deviceNames.Insert(dev.Name)
		}
	}
	return allErrs
}
