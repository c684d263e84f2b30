package core

import (
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
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

// defaultSecret makes the type Opaque when unset and folds stringData into
// data. stringData is write-only: upstream merges it during conversion and
// never stores or returns it, and its keys win over data's.
func defaultSecret(s *corev1.Secret) {
	if s.Type == "" {
		s.Type = corev1.SecretTypeOpaque
	}
	if len(s.StringData) > 0 {
		if s.Data == nil {
			s.Data = make(map[string][]byte, len(s.StringData))
		}
		for k, v := range s.StringData {
			s.Data[k] = []byte(v)
		}
	}
	s.StringData = nil
}

func validateSecret(s *corev1.Secret) field.ErrorList {
	var allErrs field.ErrorList
	dataPath := field.NewPath("data")
	totalSize := 0
	for key, value := range s.Data {
		for _, msg := range validation.IsConfigMapKey(key) {
			allErrs = append(allErrs, field.Invalid(dataPath.Key(key), key, msg))
		}
		totalSize += len(value)
	}
	if totalSize > corev1.MaxSecretSize {
		allErrs = append(allErrs, field.TooLong(dataPath, "", corev1.MaxSecretSize))
	}

	// Well-known types promise their consumers certain keys.
	switch s.Type {
	case corev1.SecretTypeServiceAccountToken:
		// The token and uid may be filled in later by a controller; the
		// account it belongs to cannot.
		if s.Annotations[corev1.ServiceAccountNameKey] == "" {
			allErrs = append(allErrs, field.Required(field.NewPath("metadata", "annotations").Key(corev1.ServiceAccountNameKey), ""))
		}
	case corev1.SecretTypeOpaque, "":
	case corev1.SecretTypeDockercfg:
		allErrs = append(allErrs, validateJSONKey(s.Data, corev1.DockerConfigKey, dataPath)...)
	case corev1.SecretTypeDockerConfigJson:
		allErrs = append(allErrs, validateJSONKey(s.Data, corev1.DockerConfigJsonKey, dataPath)...)
	case corev1.SecretTypeBasicAuth:
		// Either may be empty, but one of them must be there.
		_, hasUser := s.Data[corev1.BasicAuthUsernameKey]
		_, hasPassword := s.Data[corev1.BasicAuthPasswordKey]
		if !hasUser && !hasPassword {
			allErrs = append(allErrs, field.Required(dataPath.Key(corev1.BasicAuthUsernameKey), ""))
			allErrs = append(allErrs, field.Required(dataPath.Key(corev1.BasicAuthPasswordKey), ""))
		}
	case corev1.SecretTypeSSHAuth:
		if len(s.Data[corev1.SSHAuthPrivateKey]) == 0 {
			allErrs = append(allErrs, field.Required(dataPath.Key(corev1.SSHAuthPrivateKey), ""))
		}
	case corev1.SecretTypeTLS:
		if _, ok := s.Data[corev1.TLSCertKey]; !ok {
			allErrs = append(allErrs, field.Required(dataPath.Key(corev1.TLSCertKey), ""))
		}
		if _, ok := s.Data[corev1.TLSPrivateKeyKey]; !ok {
			allErrs = append(allErrs, field.Required(dataPath.Key(corev1.TLSPrivateKeyKey), ""))
		}
	}
	return allErrs
}

// validateJSONKey requires key in data, holding a JSON object.
func validateJSONKey(data map[string][]byte, key string, dataPath *field.Path) field.ErrorList {
	b, ok := data[key]
	if !ok {
		return field.ErrorList{field.Required(dataPath.Key(key), "")}
	}
	if err := json.Unmarshal(b, &map[string]any{}); err != nil {
		return field.ErrorList{field.Invalid(dataPath.Key(key), "<secret contents redacted>", err.Error())}
	}
	return nil
}

// validateSecretUpdate: the type never changes (consumers rely on its
// keys), and an immutable secret's data is fixed.
func validateSecretUpdate(s, old *corev1.Secret) field.ErrorList {
	allErrs := apivalidation.ValidateImmutableField(s.Type, old.Type, field.NewPath("type"))
	if old.Immutable != nil && *old.Immutable {
		if s.Immutable == nil || !*s.Immutable {
			allErrs = append(allErrs, field.Forbidden(field.NewPath("immutable"), "field is immutable when `immutable` is set"))
		}
		if !semanticEqual(s.Data, old.Data) {
			allErrs = append(allErrs, field.Forbidden(field.NewPath("data"), "field is immutable when `immutable` is set"))
		}
	}
	return allErrs
}
