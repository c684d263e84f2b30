package core

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func validateEnv(vars []corev1.EnvVar, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, ev := range vars {
		p := fldPath.Index(i)
		if len(ev.Name) == 0 {
			allErrs = append(allErrs, field.Required(p.Child("name"), ""))
		} else {
			// Upstream has accepted any printable ASCII name but '=' since
			// RelaxedEnvironmentVariableValidation went GA.
			for _, msg := range validation.IsRelaxedEnvVarName(ev.Name) {
				allErrs = append(allErrs, field.Invalid(p.Child("name"), ev.Name, msg))
			}
		}
		allErrs = append(allErrs, validateEnvVarValueFrom(ev, p.Child("valueFrom"))...)
	}
	return allErrs
}

var validEnvDownwardAPIFieldPathExpressions = sets.New(
	"metadata.name",
	"metadata.namespace",
	"metadata.uid",
	"spec.nodeName",
	"spec.serviceAccountName",
	"status.hostIP",
	"status.hostIPs",
	"status.podIP",
	"status.podIPs",
)

func validateEnvVarValueFrom(ev corev1.EnvVar, fldPath *field.Path) field.ErrorList {
	if ev.ValueFrom == nil {
		return nil
	}
	var allErrs field.ErrorList
	n := 0
	if ev.ValueFrom.FieldRef != nil {
		n++
		allErrs = append(allErrs, validateObjectFieldSelector(ev.ValueFrom.FieldRef, validEnvDownwardAPIFieldPathExpressions, fldPath.Child("fieldRef"))...)
	}
	if ev.ValueFrom.ResourceFieldRef != nil {
		n++
		allErrs = append(allErrs, validateContainerResourceFieldSelector(ev.ValueFrom.ResourceFieldRef, fldPath.Child("resourceFieldRef"), false)...)
	}
	if ev.ValueFrom.ConfigMapKeyRef != nil {
		n++
		allErrs = append(allErrs, validateKeySelector(ev.ValueFrom.ConfigMapKeyRef.Name, ev.ValueFrom.ConfigMapKeyRef.Key, fldPath.Child("configMapKeyRef"))...)
	}
	if ev.ValueFrom.SecretKeyRef != nil {
		n++
		allErrs = append(allErrs, validateKeySelector(ev.ValueFrom.SecretKeyRef.Name, ev.ValueFrom.SecretKeyRef.Key, fldPath.Child("secretKeyRef"))...)
	}
	if ev.ValueFrom.FileKeyRef != nil {
		n++
	}
	switch {
	case n == 0:
		allErrs = append(allErrs, field.Invalid(fldPath, "", "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`"))
	case len(ev.Value) != 0:
		allErrs = append(allErrs, field.Invalid(fldPath, "", "may not be specified when `value` is not empty"))
	case n > 1:
		allErrs = append(allErrs, field.Invalid(fldPath, "", "may not have more than one field specified at a time"))
	}
	return allErrs
}

func validateKeySelector(name, key string, fldPath *field.Path) field.ErrorList {
	allErrs := validateName(apivalidation.NameIsDNSSubdomain, name, false, fldPath.Child("name"))
	if len(key) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("key"), ""))
	} else {
		for _, msg := range validation.IsConfigMapKey(key) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("key"), key, msg))
		}
	}
	return allErrs
}

// downwardAPIFieldLabels are the pod fields the v1 downward API can name at
// all; which of them a given consumer accepts is a narrower set.
var downwardAPIFieldLabels = sets.New(
	"metadata.annotations",
	"metadata.labels",
	"metadata.name",
	"metadata.namespace",
	"metadata.uid",
	"spec.nodeName",
	"spec.restartPolicy",
	"spec.serviceAccountName",
	"spec.schedulerName",
	"status.phase",
	"status.hostIP",
	"status.hostIPs",
	"status.podIP",
	"status.podIPs",
)

// splitSubscriptedPath splits "metadata.labels['key']" into its path and
// subscript.
func splitSubscriptedPath(fieldPath string) (string, string, bool) {
	if !strings.HasSuffix(fieldPath, "']") {
		return fieldPath, "", false
	}
	before, after, ok := strings.Cut(strings.TrimSuffix(fieldPath, "']"), "['")
	if !ok || len(before) == 0 {
		return fieldPath, "", false
	}
	return before, after, true
}

func validateObjectFieldSelector(fs *corev1.ObjectFieldSelector, expressions sets.Set[string], fldPath *field.Path) field.ErrorList {
	if len(fs.APIVersion) == 0 {
		return field.ErrorList{field.Required(fldPath.Child("apiVersion"), "")}
	}
	if len(fs.FieldPath) == 0 {
		return field.ErrorList{field.Required(fldPath.Child("fieldPath"), "")}
	}
	// The conversion step upstream does first (ConvertDownwardAPIFieldLabel).
	internal := fs.FieldPath
	var convErr error
	switch p, _, subscripted := splitSubscriptedPath(fs.FieldPath); {
	case fs.APIVersion != "v1":
		convErr = fmt.Errorf("unsupported pod version: %s", fs.APIVersion)
	case subscripted && p != "metadata.annotations" && p != "metadata.labels":
		convErr = fmt.Errorf("field label does not support subscript: %s", fs.FieldPath)
	case subscripted:
	case fs.FieldPath == "spec.host":
		internal = "spec.nodeName"
	case !downwardAPIFieldLabels.Has(fs.FieldPath):
		convErr = fmt.Errorf("field label not supported: %s", fs.FieldPath)
	}
	if convErr != nil {
		return field.ErrorList{field.Invalid(fldPath.Child("fieldPath"), fs.FieldPath, fmt.Sprintf("error converting fieldPath: %v", convErr))}
	}
	if p, subscript, ok := splitSubscriptedPath(internal); ok {
		switch p {
		case "metadata.annotations":
			return validateQualifiedName(strings.ToLower(subscript), fldPath)
		case "metadata.labels":
			return validateQualifiedName(subscript, fldPath)
		default:
			return field.ErrorList{field.Invalid(fldPath, p, "does not support subscript")}
		}
	}
	if !expressions.Has(internal) {
		return field.ErrorList{field.NotSupported(fldPath.Child("fieldPath"), internal, sets.List(expressions))}
	}
	return nil
}

var validContainerResourceFieldPathExpressions = sets.New(
	"limits.cpu",
	"limits.memory",
	"limits.ephemeral-storage",
	"requests.cpu",
	"requests.memory",
	"requests.ephemeral-storage",
)

const (
	hugepagesRequestsPrefixDownwardAPI = "requests.hugepages-"
	hugepagesLimitsPrefixDownwardAPI   = "limits.hugepages-"
)

func validateContainerResourceFieldSelector(fs *corev1.ResourceFieldSelector, fldPath *field.Path, volume bool) field.ErrorList {
	var allErrs field.ErrorList
	switch {
	case volume && len(fs.ContainerName) == 0:
		allErrs = append(allErrs, field.Required(fldPath.Child("containerName"), ""))
	case len(fs.Resource) == 0:
		allErrs = append(allErrs, field.Required(fldPath.Child("resource"), ""))
	case !validContainerResourceFieldPathExpressions.Has(fs.Resource) &&
		!strings.HasPrefix(fs.Resource, hugepagesRequestsPrefixDownwardAPI) &&
		!strings.HasPrefix(fs.Resource, hugepagesLimitsPrefixDownwardAPI):
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("resource"), fs.Resource, sets.List(validContainerResourceFieldPathExpressions)))
	}
	return append(allErrs, validateContainerResourceDivisor(fs.Resource, fs.Divisor, fldPath)...)
}

var (
	validDivisorsForCPU    = sets.New("1m", "1")
	validDivisorsForBinary = sets.New("1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei")
)

const binaryDivisors = "1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei"

func validateContainerResourceDivisor(rName string, divisor resource.Quantity, fldPath *field.Path) field.ErrorList {
	// A zero divisor means "unset", which the kubelet reads as 1.
	if divisor.Cmp(resource.Quantity{}) == 0 {
		return nil
	}
	var allErrs field.ErrorList
	d := divisor.String()
	switch rName {
	case "limits.cpu", "requests.cpu":
		if !validDivisorsForCPU.Has(d) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("divisor"), rName, "only divisor's values 1m and 1 are supported with the cpu resource"))
		}
	case "limits.memory", "requests.memory":
		if !validDivisorsForBinary.Has(d) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("divisor"), rName, "only divisor's values "+binaryDivisors+" are supported with the memory resource"))
		}
	case "limits.ephemeral-storage", "requests.ephemeral-storage":
		if !validDivisorsForBinary.Has(d) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("divisor"), rName, "only divisor's values "+binaryDivisors+" are supported with the local ephemeral storage resource"))
		}
	}
	if (strings.HasPrefix(rName, hugepagesRequestsPrefixDownwardAPI) || strings.HasPrefix(rName, hugepagesLimitsPrefixDownwardAPI)) && !validDivisorsForBinary.Has(d) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("divisor"), rName, "only divisor's values "+binaryDivisors+" are supported with the hugepages resource"))
	}
	return allErrs
}

func validateEnvFrom(vars []corev1.EnvFromSource, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, ev := range vars {
		p := fldPath.Index(i)
		if len(ev.Prefix) > 0 {
			for _, msg := range validation.IsRelaxedEnvVarName(ev.Prefix) {
				allErrs = append(allErrs, field.Invalid(p.Child("prefix"), ev.Prefix, msg))
			}
		}
		n := 0
		if ev.ConfigMapRef != nil {
			n++
			allErrs = append(allErrs, validateEnvSourceName(ev.ConfigMapRef.Name, p.Child("configMapRef"))...)
		}
		if ev.SecretRef != nil {
			n++
			allErrs = append(allErrs, validateEnvSourceName(ev.SecretRef.Name, p.Child("secretRef"))...)
		}
		if n == 0 {
			allErrs = append(allErrs, field.Invalid(fldPath, "", "must specify one of: `configMapRef` or `secretRef`"))
		} else if n > 1 {
			allErrs = append(allErrs, field.Invalid(fldPath, "", "may not have more than one field specified at a time"))
		}
	}
	return allErrs
}

func validateEnvSourceName(name string, fldPath *field.Path) field.ErrorList {
	if len(name) == 0 {
		return field.ErrorList{field.Required(fldPath.Child("name"), "")}
	}
	// Upstream checks these names as prefixes, which tolerates a trailing dash.
	return validateName(apivalidation.NameIsDNSSubdomain, name, true, fldPath.Child("name"))
}
