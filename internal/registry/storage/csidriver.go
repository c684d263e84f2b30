package storage

import (
	"slices"
	"time"

	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilptr "k8s.io/utils/ptr"

	"github.com/orca-project/orca/internal/registry"
)

// Csidrivers is the csidrivers resource. Its generation counts changes to
// the spec from 0, as upstream's strategy bumps it without starting it.
//
// The fields of upstream's feature gates are kept as v1.37 has them:
// seLinuxMount (SELinuxMountReadWriteOncePod), nodeAllocatableUpdatePeriodSeconds
// (MutableCSINodeAllocatableCount) and serviceAccountTokenInSecrets
// (CSIServiceAccountTokenSecrets) are GA, and preventPodSchedulingIfMissing
// (VolumeLimitScaling) is beta and on, so none is dropped and the two
// booleans are defaulted and required.
var Csidrivers = &registry.Resource{
	Group: storagev1.GroupName, Version: "v1", Name: "csidrivers", Singular: "csidriver", Kind: "CSIDriver",
	New:              func() runtime.Object { return &storagev1.CSIDriver{} },
	NewList:          func() runtime.Object { return &storagev1.CSIDriverList{} },
	Default:          registry.Typed(defaultCSIDriver),
	PrepareForUpdate: registry.Typed2(prepareCSIDriverUpdate),
	Validate:         registry.TypedValidate(validateCSIDriver),
	ValidateUpdate:   registry.TypedValidateUpdate(validateCSIDriverUpdate),
	Table:            csidriverTable,
}

// minTokenExpiration and maxTokenExpiration bound what a driver may ask
// of the tokens the kubelet requests for it.
const (
	minTokenExpiration = 10 * time.Minute
	maxTokenExpiration = 1 << 32 // seconds
	// minAllocatableUpdatePeriod is the shortest period at which the
	// kubelet may refresh a driver's allocatable volume count.
	minAllocatableUpdatePeriod = 10 // seconds
)

// Sorted, as upstream lists them from a set.
var supportedFSGroupPolicies = []storagev1.FSGroupPolicy{
	storagev1.FileFSGroupPolicy, storagev1.NoneFSGroupPolicy, storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy,
}

// defaultCSIDriver is upstream's SetDefaults_CSIDriver.
func defaultCSIDriver(d *storagev1.CSIDriver) {
	spec := &d.Spec
	if spec.AttachRequired == nil {
		spec.AttachRequired = utilptr.To(true)
	}
	if spec.PodInfoOnMount == nil {
		spec.PodInfoOnMount = utilptr.To(false)
	}
	if spec.StorageCapacity == nil {
		spec.StorageCapacity = utilptr.To(false)
	}
	if spec.FSGroupPolicy == nil {
		spec.FSGroupPolicy = utilptr.To(storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy)
	}
	if len(spec.VolumeLifecycleModes) == 0 {
		spec.VolumeLifecycleModes = []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent}
	}
	if spec.RequiresRepublish == nil {
		spec.RequiresRepublish = utilptr.To(false)
	}
	if spec.SELinuxMount == nil {
		spec.SELinuxMount = utilptr.To(false)
	}
	if spec.PreventPodSchedulingIfMissing == nil {
		spec.PreventPodSchedulingIfMissing = utilptr.To(false)
	}
}

func prepareCSIDriverUpdate(d, old *storagev1.CSIDriver) {
	if !apiequality.Semantic.DeepEqual(d.Spec, old.Spec) {
		d.Generation = old.Generation + 1
	}
}

func validateCSIDriver(d *storagev1.CSIDriver) field.ErrorList {
	return validateCSIDriverSpec(&d.Spec, field.NewPath("spec"))
}

// validateCSIDriverSpec is upstream's. The path of attachRequired is
// upstream's too, misspelt "attachedRequired".
func validateCSIDriverSpec(spec *storagev1.CSIDriverSpec, fldPath *field.Path) field.ErrorList {
	allErrs := requiredBool(spec.AttachRequired, fldPath.Child("attachedRequired"))
	allErrs = append(allErrs, requiredBool(spec.PodInfoOnMount, fldPath.Child("podInfoOnMount"))...)
	allErrs = append(allErrs, requiredBool(spec.StorageCapacity, fldPath.Child("storageCapacity"))...)
	if p := spec.FSGroupPolicy; p != nil && !slices.Contains(supportedFSGroupPolicies, *p) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("fsGroupPolicy"), p, supportedFSGroupPolicies))
	}
	allErrs = append(allErrs, validateTokenRequests(spec.TokenRequests, fldPath.Child("tokenRequests"))...)
	for _, mode := range spec.VolumeLifecycleModes {
		switch mode {
		case storagev1.VolumeLifecyclePersistent, storagev1.VolumeLifecycleEphemeral:
		default:
			allErrs = append(allErrs, field.NotSupported(fldPath.Child("volumeLifecycleModes"), mode,
				[]storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent, storagev1.VolumeLifecycleEphemeral}))
		}
	}
	allErrs = append(allErrs, requiredBool(spec.SELinuxMount, fldPath.Child("seLinuxMount"))...)
	if p := spec.NodeAllocatableUpdatePeriodSeconds; p != nil && *p < minAllocatableUpdatePeriod {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("nodeAllocatableUpdatePeriodSeconds"), *p, "must be greater than or equal to 10 seconds"))
	}
	if s := spec.ServiceAccountTokenInSecrets; s != nil && len(spec.TokenRequests) == 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("serviceAccountTokenInSecrets"), s, "serviceAccountTokenInSecrets is set but no tokenRequests are specified"))
	}
	allErrs = append(allErrs, requiredBool(spec.PreventPodSchedulingIfMissing, fldPath.Child("preventPodSchedulingIfMissing"))...)
	return allErrs
}

func requiredBool(v *bool, fldPath *field.Path) field.ErrorList {
	if v == nil {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	return nil
}

// validateTokenRequests: audiences are distinct (at most one empty), and
// expirations lie between 10 minutes and 2^32 seconds. A repeated
// audience is reported alone.
func validateTokenRequests(requests []storagev1.TokenRequest, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	seen := map[string]bool{}
	for i, r := range requests {
		path := fldPath.Index(i)
		if seen[r.Audience] {
			allErrs = append(allErrs, field.Duplicate(path.Child("audience"), r.Audience))
			continue
		}
		seen[r.Audience] = true
		if r.ExpirationSeconds == nil {
			continue
		}
		if s := *r.ExpirationSeconds; s < int64(minTokenExpiration.Seconds()) {
			allErrs = append(allErrs, field.Invalid(path.Child("expirationSeconds"), s, "may not specify a duration less than 10 minutes"))
		}
		if s := *r.ExpirationSeconds; s > maxTokenExpiration {
			allErrs = append(allErrs, field.Invalid(path.Child("expirationSeconds"), s, "may not specify a duration larger than 2^32 seconds"))
		}
	}
	return allErrs
}

// validateCSIDriverUpdate: whether a driver needs attaching, and which
// kinds of volume it serves, are fixed once pods may use it. Upstream
// also states the second declaratively, but as an alpha rule, so its own
// message stands. The spec itself is checked by Validate.
func validateCSIDriverUpdate(d, old *storagev1.CSIDriver) field.ErrorList {
	specPath := field.NewPath("spec")
	allErrs := apimachineryvalidation.ValidateImmutableField(d.Spec.AttachRequired, old.Spec.AttachRequired, specPath.Child("attachedRequired"))
	return append(allErrs, apimachineryvalidation.ValidateImmutableField(d.Spec.VolumeLifecycleModes, old.Spec.VolumeLifecycleModes, specPath.Child("volumeLifecycleModes"))...)
}
