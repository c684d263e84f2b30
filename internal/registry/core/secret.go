package core

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
)

// Secrets is the secrets resource.
var Secrets = &registry.Resource{
	Group: "", Version: "v1", Name: "secrets", Singular: "secret", Kind: "Secret",
	Namespaced:     true,
	New:            func() runtime.Object { return &corev1.Secret{} },
	NewList:        func() runtime.Object { return &corev1.SecretList{} },
	Default:        registry.Typed(defaultSecret),
	Validate:       registry.TypedValidate(validateSecret),
	ValidateUpdate: registry.TypedValidateUpdate(validateSecretUpdate),
	Table:          secretTable,
	Fields:         secretFields,
}

func defaultSecret(obj *corev1.Secret) {}

func validateSecret(obj *corev1.Secret) field.ErrorList { return nil }

func validateSecretUpdate(obj, old *corev1.Secret) field.ErrorList { return nil }
