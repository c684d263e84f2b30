package storage

import (
	"fmt"

	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/core"
)

// Csinodes is the csinodes resource: one object per node, named after it,
// listing the CSI drivers registered there. Its status (the drivers'
// storage health) is written only through /status, which keeps all
// metadata as upstream's status strategy resets it. Upstream keeps
// storageHealth behind CSIVolumeHealth, an alpha gate off by default, and
// drops it from every write that does not find it stored, so with the
// gate off, as here, nothing is ever stored and /status writes nothing;
// its validation is left out for that reason.
var Csinodes = &registry.Resource{
	Group: storagev1.GroupName, Version: "v1", Name: "csinodes", Singular: "csinode", Kind: "CSINode",
	New:                    func() runtime.Object { return &storagev1.CSINode{} },
	NewList:                func() runtime.Object { return &storagev1.CSINodeList{} },
	Status:                 true,
	StatusResetsMetadata:   []string{"labels", "annotations", "finalizers", "ownerReferences"},
	PrepareForStatusUpdate: registry.Typed2(prepareCSINodeStatusUpdate),
	Validate:               registry.TypedValidate(validateCSINode),
	ValidateUpdate:         registry.TypedValidateUpdate(validateCSINodeUpdate),
	ValidateUpdateReplaces: true,
	ValidateStatusUpdate:   func(obj, old runtime.Object) field.ErrorList { return nil },
	Table:                  csinodeTable,
}

// csiNodeIDMaxLength bounds the ID a driver knows its node by.
const csiNodeIDMaxLength = 256

func prepareCSINodeStatusUpdate(n, old *storagev1.CSINode) {
	if len(old.Status.StorageHealth) == 0 {
		n.Status.StorageHealth = nil
	}
}

func validateCSINode(n *storagev1.CSINode) field.ErrorList {
	var allErrs field.ErrorList
	driversPath := field.NewPath("spec", "drivers")
	seen := map[string]bool{}
	for i, d := range n.Spec.Drivers {
		allErrs = append(allErrs, validateCSINodeDriver(&d, seen, driversPath.Index(i))...)
	}
	return allErrs
}

// validateCSINodeDriver is upstream's. Its topology key errors name the
// driver, not the key, as upstream's do.
func validateCSINodeDriver(d *storagev1.CSINodeDriver, seen map[string]bool, fldPath *field.Path) field.ErrorList {
	allErrs := core.ValidateCSIDriverName(d.Name, fldPath.Child("name"))
	idPath := fldPath.Child("nodeID")
	if len(d.NodeID) == 0 {
		allErrs = append(allErrs, field.Required(idPath, d.NodeID))
	}
	if len(d.NodeID) > csiNodeIDMaxLength {
		allErrs = append(allErrs, field.Invalid(idPath, d.NodeID, fmt.Sprintf("must be %d characters or less", csiNodeIDMaxLength)))
	}
	if a := d.Allocatable; a != nil && a.Count != nil && *a.Count < 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("allocatable", "count"), int64(*a.Count), apimachineryvalidation.IsNegativeErrorMsg))
	}
	if seen[d.Name] {
		allErrs = append(allErrs, field.Duplicate(fldPath.Child("name"), d.Name))
	}
	seen[d.Name] = true
	keys := map[string]bool{}
	for _, key := range d.TopologyKeys {
		if len(key) == 0 {
			allErrs = append(allErrs, field.Required(fldPath, key))
		}
		if keys[key] {
			allErrs = append(allErrs, field.Duplicate(fldPath, key))
		}
		keys[key] = true
		for _, msg := range utilvalidation.IsQualifiedName(key) {
			allErrs = append(allErrs, field.Invalid(fldPath, key, msg))
		}
	}
	return allErrs
}

// validateCSINodeUpdate: a driver registered on the node keeps its node
// ID and topology keys for as long as it stays registered; its
// allocatable count may change (MutableCSINodeAllocatableCount, GA).
// Drivers may come and go.
func validateCSINodeUpdate(n, old *storagev1.CSINode) field.ErrorList {
	allErrs := validateCSINode(n)
	driversPath := field.NewPath("spec", "drivers")
	for _, o := range old.Spec.Drivers {
		for _, d := range n.Spec.Drivers {
			if o.Name != d.Name {
				continue
			}
			od, nd := o.DeepCopy(), d.DeepCopy()
			od.Allocatable, nd.Allocatable = nil, nil
			if !apiequality.Semantic.DeepEqual(nd, od) {
				allErrs = append(allErrs, field.Invalid(driversPath, internalCSINodeDriver{Name: nd.Name, NodeID: nd.NodeID, TopologyKeys: nd.TopologyKeys},
					apimachineryvalidation.FieldImmutableErrorMsg))
			}
		}
	}
	return allErrs
}

// internalCSINodeDriver is how upstream's message shows the driver: its
// internal type, which has no JSON names, without its allocatable count.
type internalCSINodeDriver struct {
	Name         string
	NodeID       string
	TopologyKeys []string
	Allocatable  *struct{ Count *int32 }
}
