package core

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
)

// Serviceaccounts is the serviceaccounts resource. Upstream checks nothing
// of a service account beyond its metadata, which the server validates, so
// its hooks have nothing to do.
var Serviceaccounts = &registry.Resource{
	Group: "", Version: "v1", Name: "serviceaccounts", Singular: "serviceaccount", Kind: "ServiceAccount",
	Namespaced:     true,
	ShortNames:     []string{"sa"},
	New:            func() runtime.Object { return &corev1.ServiceAccount{} },
	NewList:        func() runtime.Object { return &corev1.ServiceAccountList{} },
	Default:        registry.Typed(defaultServiceAccount),
	Validate:       registry.TypedValidate(validateServiceAccount),
	ValidateUpdate: registry.TypedValidateUpdate(validateServiceAccountUpdate),
	Table:          serviceaccountTable,
	Fields:         serviceaccountFields,
}

func defaultServiceAccount(obj *corev1.ServiceAccount) {}

func validateServiceAccount(obj *corev1.ServiceAccount) field.ErrorList { return nil }

func validateServiceAccountUpdate(obj, old *corev1.ServiceAccount) field.ErrorList { return nil }
