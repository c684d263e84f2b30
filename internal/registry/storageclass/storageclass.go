package storageclass

import (
	"maps"
	"reflect"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilptr "k8s.io/utils/ptr"

	"github.com/orca-project/orca/internal/registry"
)

// Storageclasses is the storageclasses resource.
var Storageclasses = &registry.Resource{
	Group: "storage.k8s.io", Version: "v1", Name: "storageclasses", Singular: "storageclass", Kind: "StorageClass",
	Namespaced:     false,
	ShortNames:     []string{"sc"},
	New:            func() runtime.Object { return &storagev1.StorageClass{} },
	NewList:        func() runtime.Object { return &storagev1.StorageClassList{} },
	Default:        registry.Typed(defaultStorageClass),
	Validate:       registry.TypedValidate(validateStorageClass),
	ValidateUpdate: registry.TypedValidateUpdate(validateStorageClassUpdate),
	Table:          storageclassTable,
	Fields:         storageclassFields,
}

const (
	maxProvisionerParameterSize = 256 * (1 << 10) // 256 kB
	maxProvisionerParameterLen  = 512
)

// Sorted, as upstream lists them from sets.
var (
	supportedReclaimPolicies = []corev1.PersistentVolumeReclaimPolicy{corev1.PersistentVolumeReclaimDelete, corev1.PersistentVolumeReclaimRetain}
	supportedBindingModes    = []storagev1.VolumeBindingMode{storagev1.VolumeBindingImmediate, storagev1.VolumeBindingWaitForFirstConsumer}
)

func defaultStorageClass(obj *storagev1.StorageClass) {
	if obj.ReclaimPolicy == nil {
		obj.ReclaimPolicy = utilptr.To(corev1.PersistentVolumeReclaimDelete)
	}
	if obj.VolumeBindingMode == nil {
		obj.VolumeBindingMode = utilptr.To(storagev1.VolumeBindingImmediate)
	}
}

func validateStorageClass(obj *storagev1.StorageClass) field.ErrorList {
	allErrs := ValidateProvisioner(obj.Provisioner, field.NewPath("provisioner"))
	allErrs = append(allErrs, ValidateParameters(obj.Parameters, true, field.NewPath("parameters"))...)
	allErrs = append(allErrs, validateReclaimPolicy(obj.ReclaimPolicy, field.NewPath("reclaimPolicy"))...)
	allErrs = append(allErrs, validateVolumeBindingMode(obj.VolumeBindingMode, field.NewPath("volumeBindingMode"))...)
	allErrs = append(allErrs, validateAllowedTopologies(obj.AllowedTopologies, field.NewPath("allowedTopologies"))...)
	return allErrs
}

// ValidateProvisioner checks a provisioner name, which a
// VolumeAttributesClass's driver name follows too. Provisioner names are
// matched case-insensitively, hence the lowering.
func ValidateProvisioner(provisioner string, fldPath *field.Path) field.ErrorList {
	if len(provisioner) == 0 {
		return field.ErrorList{field.Required(fldPath, provisioner)}
	}
	var allErrs field.ErrorList
	for _, msg := range utilvalidation.IsQualifiedName(strings.ToLower(provisioner)) {
		allErrs = append(allErrs, field.Invalid(fldPath, provisioner, msg))
	}
	return allErrs
}

// ValidateParameters bounds the parameters, which are copied into every
// provisioning request (or, for a VolumeAttributesClass, every volume
// modification, where allowEmpty is false: such a class must say
// something).
func ValidateParameters(params map[string]string, allowEmpty bool, fldPath *field.Path) field.ErrorList {
	if len(params) > maxProvisionerParameterLen {
		return field.ErrorList{field.TooLong(fldPath, "Provisioner Parameters exceeded max allowed", maxProvisionerParameterLen)}
	}
	var allErrs field.ErrorList
	var totalSize int64
	// Map order would make the error order vary between runs.
	for _, k := range slices.Sorted(maps.Keys(params)) {
		if len(k) < 1 {
			allErrs = append(allErrs, field.Invalid(fldPath, k, "field can not be empty."))
		}
		totalSize += int64(len(k)) + int64(len(params[k]))
	}
	if totalSize > maxProvisionerParameterSize {
		allErrs = append(allErrs, field.TooLong(fldPath, "", maxProvisionerParameterSize))
	}
	if !allowEmpty && len(params) == 0 {
		allErrs = append(allErrs, field.Required(fldPath, "must contain at least one key/value pair"))
	}
	return allErrs
}

// Recycle is left out: it is deprecated and no provisioner implements it.
func validateReclaimPolicy(policy *corev1.PersistentVolumeReclaimPolicy, fldPath *field.Path) field.ErrorList {
	if policy == nil || len(*policy) == 0 || slices.Contains(supportedReclaimPolicies, *policy) {
		return nil
	}
	return field.ErrorList{field.NotSupported(fldPath, *policy, supportedReclaimPolicies)}
}

func validateVolumeBindingMode(mode *storagev1.VolumeBindingMode, fldPath *field.Path) field.ErrorList {
	if mode == nil {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	if !slices.Contains(supportedBindingModes, *mode) {
		return field.ErrorList{field.NotSupported(fldPath, *mode, supportedBindingModes)}
	}
	return nil
}

func validateAllowedTopologies(terms []corev1.TopologySelectorTerm, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	var seen []map[string][]string
	for i, term := range terms {
		idxPath := fldPath.Index(i)
		exprs, errs := validateTopologySelectorTerm(term, idxPath)
		allErrs = append(allErrs, errs...)
		for _, other := range seen {
			if reflect.DeepEqual(exprs, other) {
				allErrs = append(allErrs, field.Duplicate(idxPath.Child("matchLabelExpressions"), ""))
			}
		}
		seen = append(seen, exprs)
	}
	return allErrs
}

// validateTopologySelectorTerm returns the term's requirements as sorted
// value sets per key, so that terms differing only in order compare equal.
func validateTopologySelectorTerm(term corev1.TopologySelectorTerm, fldPath *field.Path) (map[string][]string, field.ErrorList) {
	var allErrs field.ErrorList
	exprs := map[string][]string{}
	exprsPath := fldPath.Child("matchLabelExpressions")
	for i, req := range term.MatchLabelExpressions {
		idxPath := exprsPath.Index(i)
		valuesPath := idxPath.Child("values")
		if len(req.Values) == 0 {
			allErrs = append(allErrs, field.Required(valuesPath, ""))
		}
		var values []string
		for j, v := range req.Values {
			if slices.Contains(values, v) {
				allErrs = append(allErrs, field.Duplicate(valuesPath.Index(j), v))
				continue
			}
			values = append(values, v)
		}
		slices.Sort(values)
		allErrs = append(allErrs, metav1validation.ValidateLabelName(req.Key, idxPath.Child("key"))...)
		if _, exists := exprs[req.Key]; exists {
			allErrs = append(allErrs, field.Duplicate(idxPath.Child("key"), req.Key))
		}
		exprs[req.Key] = values
	}
	return exprs, allErrs
}

// Volumes already provisioned from a class were made with its settings;
// changing them would make the class lie about those volumes.
func validateStorageClassUpdate(obj, old *storagev1.StorageClass) field.ErrorList {
	var allErrs field.ErrorList
	if !apiequality.Semantic.DeepEqual(obj.Parameters, old.Parameters) {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("parameters"), "updates to parameters are forbidden."))
	}
	if obj.Provisioner != old.Provisioner {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("provisioner"), "updates to provisioner are forbidden."))
	}
	if utilptr.Deref(obj.ReclaimPolicy, "") != utilptr.Deref(old.ReclaimPolicy, "") {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("reclaimPolicy"), "updates to reclaimPolicy are forbidden."))
	}
	allErrs = append(allErrs, apimachineryvalidation.ValidateImmutableField(obj.VolumeBindingMode, old.VolumeBindingMode, field.NewPath("volumeBindingMode"))...)
	return allErrs
}
