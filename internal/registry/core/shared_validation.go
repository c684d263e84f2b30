package core

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The checks below are the core group's rules that other groups apply to
// core types they embed (a RuntimeClass's tolerations and overhead, a
// ResourceSlice's node selector), so that every group reports them with
// the same paths and messages.

// ValidateTolerations checks pod tolerations found at fldPath.
func ValidateTolerations(tolerations []corev1.Toleration, fldPath *field.Path) field.ErrorList {
	return validateTolerations(tolerations, fldPath)
}

// ValidateContainerResourceRequirements checks resource names and
// quantities as a container's are checked, without resource claims.
func ValidateContainerResourceRequirements(req *corev1.ResourceRequirements, fldPath *field.Path) field.ErrorList {
	return validateResourceRequirements(req, validateContainerResourceName, nil, fldPath)
}

// ValidateNodeSelector checks a required node selector (at least one
// term, valid requirements).
func ValidateNodeSelector(ns *corev1.NodeSelector, fldPath *field.Path) field.ErrorList {
	return validateNodeSelector(ns, false, fldPath)
}

// ValidateCSIDriverName checks a driver name as a CSI driver's: required,
// at most 63 characters, a DNS subdomain once lower-cased. DRA drivers
// follow the same rule.
func ValidateCSIDriverName(name string, fldPath *field.Path) field.ErrorList {
	return validateCSIDriverName(name, fldPath)
}

// ValidateContainerResourceName checks a resource name as a container's
// requests and limits name it (an HPA's container resource metric).
func ValidateContainerResourceName(value corev1.ResourceName, fldPath *field.Path) field.ErrorList {
	return validateContainerResourceName(value, fldPath)
}

// ValidateNonnegativeQuantity reports a quantity below zero.
func ValidateNonnegativeQuantity(value resource.Quantity, fldPath *field.Path) field.ErrorList {
	return validateNonnegativeQuantity(value, fldPath)
}

// ValidateDNS1123Label reports each way value is not a DNS label.
func ValidateDNS1123Label(value string, fldPath *field.Path) field.ErrorList {
	return validateDNS1123Label(value, fldPath)
}

// ValidateDNS1123Subdomain reports each way value is not a DNS subdomain.
func ValidateDNS1123Subdomain(value string, fldPath *field.Path) field.ErrorList {
	return validateDNS1123Subdomain(value, fldPath)
}

// ValidateTemplateObjectMeta checks the metadata of an object template (a
// claim template's claim): labels and annotations, and nothing else set.
func ValidateTemplateObjectMeta(meta *metav1.ObjectMeta, fldPath *field.Path) field.ErrorList {
	return validateTemplateObjectMeta(meta, fldPath)
}

// ValidateInlinePersistentVolumeSpec checks the persistent volume spec a
// VolumeAttachment carries for a migrated in-tree volume: a CSI source,
// and none of what belongs to a volume object (capacity, claim, class,
// node affinity).
func ValidateInlinePersistentVolumeSpec(spec *corev1.PersistentVolumeSpec, fldPath *field.Path) field.ErrorList {
	return validatePersistentVolumeSpec(spec, "", true, fldPath)
}

// DefaultInlinePersistentVolumeSpec fills in an inline persistent volume
// spec's defaults: those of its source and rounded quantities, not the
// reclaim policy or volume mode a volume object gets.
func DefaultInlinePersistentVolumeSpec(spec *corev1.PersistentVolumeSpec) {
	roundUpResourceList(spec.Capacity)
	defaultPersistentVolumeSource(&spec.PersistentVolumeSource)
}
