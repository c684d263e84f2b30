package storage

import (
	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
)

// Csistoragecapacities is the csistoragecapacities resource: what a CSI
// driver reports it can still provision for a storage class in a part of
// the cluster (its node topology), which the scheduler may consult.
// Upstream's warnings about label values in the node topology are not
// given.
var Csistoragecapacities = &registry.Resource{
	Group: storagev1.GroupName, Version: "v1", Name: "csistoragecapacities", Singular: "csistoragecapacity", Kind: "CSIStorageCapacity",
	Namespaced:             true,
	New:                    func() runtime.Object { return &storagev1.CSIStorageCapacity{} },
	NewList:                func() runtime.Object { return &storagev1.CSIStorageCapacityList{} },
	Validate:               registry.TypedValidate(validateCSIStorageCapacity),
	ValidateUpdate:         registry.TypedValidateUpdate(validateCSIStorageCapacityUpdate),
	ValidateUpdateReplaces: true,
	Table:                  csistoragecapacityTable,
}

func validateCSIStorageCapacity(c *storagev1.CSIStorageCapacity) field.ErrorList {
	return validateCSIStorageCapacityFields(c, false)
}

// validateCSIStorageCapacityFields is upstream's ValidateCSIStorageCapacity
// without the metadata, which the server checks. The maximum volume size
// is not checked, as upstream does not.
func validateCSIStorageCapacityFields(c *storagev1.CSIStorageCapacity, allowInvalidLabelValues bool) field.ErrorList {
	opts := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: allowInvalidLabelValues}
	allErrs := metav1validation.ValidateLabelSelector(c.NodeTopology, opts, field.NewPath("nodeTopology"))
	allErrs = append(allErrs, dnsSubdomain(c.StorageClassName, field.NewPath("storageClassName"))...)
	if q := c.Capacity; q != nil && q.Cmp(resource.Quantity{}) < 0 {
		allErrs = append(allErrs, field.Invalid(field.NewPath("capacity"), q.String(), apimachineryvalidation.IsNegativeErrorMsg))
	}
	return allErrs
}

// validateCSIStorageCapacityUpdate: the node topology and class are what
// the capacity was asked for, so they never change; a selector already
// stored with label values that are now refused may stay. The capacity
// itself is what changes.
func validateCSIStorageCapacityUpdate(c, old *storagev1.CSIStorageCapacity) field.ErrorList {
	strict := metav1validation.LabelSelectorValidationOptions{}
	oldInvalid := len(metav1validation.ValidateLabelSelector(old.NodeTopology, strict, nil)) > 0
	allErrs := validateCSIStorageCapacityFields(c, oldInvalid)
	if !apiequality.Semantic.DeepEqual(c.NodeTopology, old.NodeTopology) {
		allErrs = append(allErrs, field.Invalid(field.NewPath("nodeTopology"), c.NodeTopology, apimachineryvalidation.FieldImmutableErrorMsg))
	}
	if c.StorageClassName != old.StorageClassName {
		allErrs = append(allErrs, field.Invalid(field.NewPath("storageClassName"), c.StorageClassName, apimachineryvalidation.FieldImmutableErrorMsg))
	}
	return allErrs
}
