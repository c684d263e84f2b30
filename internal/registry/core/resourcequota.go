package core

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
)

// Resourcequotas is the resourcequotas resource.
var Resourcequotas = &registry.Resource{
	Group: "", Version: "v1", Name: "resourcequotas", Singular: "resourcequota", Kind: "ResourceQuota",
	Namespaced:     true,
	ShortNames:     []string{"quota"},
	Status:         true,
	New:            func() runtime.Object { return &corev1.ResourceQuota{} },
	NewList:        func() runtime.Object { return &corev1.ResourceQuotaList{} },
	Default:        registry.Typed(defaultResourceQuota),
	Validate:       registry.TypedValidate(validateResourceQuota),
	ValidateUpdate: registry.TypedValidateUpdate(validateResourceQuotaUpdate),
	Table:          resourcequotaTable,
	Fields:         resourcequotaFields,
}

func defaultResourceQuota(obj *corev1.ResourceQuota) {}

func validateResourceQuota(obj *corev1.ResourceQuota) field.ErrorList { return nil }

func validateResourceQuotaUpdate(obj, old *corev1.ResourceQuota) field.ErrorList { return nil }
