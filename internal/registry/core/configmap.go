package core

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
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

func defaultConfigMap(obj *corev1.ConfigMap) {}

func validateConfigMap(obj *corev1.ConfigMap) field.ErrorList { return nil }

func validateConfigMapUpdate(obj, old *corev1.ConfigMap) field.ErrorList { return nil }
