package core

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func validatePodSpecificAnnotations(annotations map[string]string, spec *corev1.PodSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if value, isMirror := annotations[corev1.MirrorPodAnnotationKey]; isMirror && len(spec.NodeName) == 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Key(corev1.MirrorPodAnnotationKey), value, "must set spec.nodeName if mirror pod annotation is set"))
	}
	if v, ok := annotations[corev1.PodDeletionCost]; ok && !isValidDeletionCost(v) {
		allErrs = append(allErrs, field.Invalid(fldPath.Key(corev1.PodDeletionCost), v, "must be a 32bit integer"))
	}
	if p, ok := annotations[corev1.SeccompPodAnnotationKey]; ok {
		allErrs = append(allErrs, validateSeccompProfileAnnotation(p, fldPath.Child(corev1.SeccompPodAnnotationKey))...)
	}
	for k, v := range annotations {
		if strings.HasPrefix(k, corev1.SeccompContainerAnnotationKeyPrefix) {
			allErrs = append(allErrs, validateSeccompProfileAnnotation(v, fldPath.Child(k))...)
		}
		if name, ok := strings.CutPrefix(k, corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix); ok {
			found := false
			visitContainers(spec, field.NewPath("spec"), func(c *corev1.Container, _ *field.Path) {
				found = found || c.Name == name
			})
			if !found {
				allErrs = append(allErrs, field.Invalid(fldPath.Key(k), name, "container not found"))
			}
			if v != "" && v != corev1.DeprecatedAppArmorBetaProfileRuntimeDefault && v != corev1.DeprecatedAppArmorBetaProfileNameUnconfined &&
				!strings.HasPrefix(v, corev1.DeprecatedAppArmorBetaProfileNamePrefix) {
				allErrs = append(allErrs, field.Invalid(fldPath.Key(k), v, fmt.Sprintf("invalid AppArmor profile name: %q", v)))
			}
		}
	}
	return allErrs
}

// isValidDeletionCost: a plain int32, without the "+" sign or leading
// zeros strconv would accept, so that each cost has one spelling.
func isValidDeletionCost(v string) bool {
	if (len(v) > 0 && v[0] == '+') || (len(v) > 1 && v[0] == '0') {
		return false
	}
	_, err := strconv.ParseInt(v, 10, 32)
	return err == nil
}

func validateSeccompProfileAnnotation(p string, fldPath *field.Path) field.ErrorList {
	switch {
	case p == corev1.SeccompProfileRuntimeDefault, p == corev1.DeprecatedSeccompProfileDockerDefault, p == corev1.SeccompProfileNameUnconfined:
		return nil
	case strings.HasPrefix(p, corev1.SeccompLocalhostProfileNamePrefix):
		return validateLocalDescendingPath(strings.TrimPrefix(p, corev1.SeccompLocalhostProfileNamePrefix), fldPath)
	}
	return field.ErrorList{field.Invalid(fldPath, p, "must be a valid seccomp profile")}
}
