package core

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
)

// Configmaps is the configmaps resource.
var Configmaps = &registry.Resource{
	Group: "", Version: "v1", Name: "configmaps", Singular: "configmap", Kind: "ConfigMap",
	Namespaced:     true,
	ShortNames:     []string{"cm"},
	New:            func() runtime.Object { return &corev1.ConfigMap{} },
	NewList:        func() runtime.Object { return &corev1.ConfigMapList{} },
	Default:        registry.Typed(defaultConfigMap),
	Validate:       registry.TypedValidate(validateConfigMap),
	ValidateUpdate: registry.TypedValidateUpdate(validateConfigMapUpdate),
	Table:          configmapTable,
	Fields:         configmapFields,
}

func defaultConfigMap(cm *corev1.ConfigMap) {
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
}

// validateConfigMap: keys are file names (they become files in volumes), a
// key lives in data or binaryData but not both, and the whole fits in the
// 1 MiB etcd is comfortable with.
func validateConfigMap(cm *corev1.ConfigMap) field.ErrorList {
	var allErrs field.ErrorList
	dataPath, binaryPath := field.NewPath("data"), field.NewPath("binaryData")
	totalSize := 0
	for key, value := range cm.Data {
		for _, msg := range validation.IsConfigMapKey(key) {
			allErrs = append(allErrs, field.Invalid(dataPath.Key(key), key, msg))
		}
		if _, dup := cm.BinaryData[key]; dup {
			allErrs = append(allErrs, field.Invalid(dataPath.Key(key), key, "duplicate of key present in binaryData"))
		}
		totalSize += len(value)
	}
	for key, value := range cm.BinaryData {
		for _, msg := range validation.IsConfigMapKey(key) {
			allErrs = append(allErrs, field.Invalid(binaryPath.Key(key), key, msg))
		}
		totalSize += len(value)
	}
	if totalSize > corev1.MaxSecretSize {
		// The empty path says the error is about the whole object.
		allErrs = append(allErrs, field.TooLong(field.NewPath(""), "", corev1.MaxSecretSize))
	}
	return allErrs
}

// validateConfigMapUpdate: once immutable, a config map's contents (and its
// immutability) are fixed; only metadata may change, and it may be deleted.
func validateConfigMapUpdate(cm, old *corev1.ConfigMap) field.ErrorList {
	var allErrs field.ErrorList
	if old.Immutable != nil && *old.Immutable {
		if cm.Immutable == nil || !*cm.Immutable {
			allErrs = append(allErrs, field.Forbidden(field.NewPath("immutable"), "field is immutable when `immutable` is set"))
		}
		if !semanticEqual(cm.Data, old.Data) {
			allErrs = append(allErrs, field.Forbidden(field.NewPath("data"), "field is immutable when `immutable` is set"))
		}
		if !semanticEqual(cm.BinaryData, old.BinaryData) {
			allErrs = append(allErrs, field.Forbidden(field.NewPath("binaryData"), "field is immutable when `immutable` is set"))
		}
	}
	return allErrs
}
