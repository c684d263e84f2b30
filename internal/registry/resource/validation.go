package resource

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/operation"
	"k8s.io/apimachinery/pkg/api/validate/content"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry/core"
)

// validationOptions are the options the generated validation asks for,
// named after upstream's feature gates and set as their v1.37 defaults.
var validationOptions = map[string]bool{"DRAPartitionableDevicesType": false}

func createOp() operation.Operation {
	return operation.Operation{Type: operation.Create, Options: validationOptions}
}

func updateOp() operation.Operation {
	return operation.Operation{Type: operation.Update, Options: validationOptions}
}

// declarative keeps what upstream shows of the generated validation's
// errors: its alpha rules only shadow the handwritten ones there.
func declarative(errs field.ErrorList) field.ErrorList {
	var out field.ErrorList
	for _, e := range errs {
		if !e.IsAlpha() {
			out = append(out, e)
		}
	}
	return out
}

// Name rules: drivers are named as CSI drivers are, devices and requests
// are DNS labels, classes DNS subdomains.
var (
	validateDriverName      = core.ValidateCSIDriverName
	validateDeviceName      = core.ValidateDNS1123Label
	validateRequestName     = core.ValidateDNS1123Label
	validateDeviceClassName = core.ValidateDNS1123Subdomain
)

// validatePoolName: a pool name is one or more DNS subdomains joined by
// slashes, at most as long as a node name.
func validatePoolName(name string, fldPath *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	var allErrs field.ErrorList
	if len(name) > resourcev1.PoolNameMaxLength {
		allErrs = append(allErrs, field.TooLong(fldPath, "", resourcev1.PoolNameMaxLength))
	}
	for _, part := range strings.Split(name, "/") {
		allErrs = append(allErrs, core.ValidateDNS1123Subdomain(part, fldPath)...)
	}
	return allErrs
}

func validateLabelValue(value string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, msg := range validation.IsValidLabelValue(value) {
		allErrs = append(allErrs, field.Invalid(fldPath, value, msg))
	}
	return allErrs
}

// validateQualifiedName checks an attribute or capacity name: a C
// identifier, optionally after a driver-style domain and a slash.
func validateQualifiedName(name resourcev1.QualifiedName, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	parts := strings.Split(string(name), "/")
	switch len(parts) {
	case 1:
		allErrs = append(allErrs, validateCIdentifier(parts[0], fldPath)...)
	case 2:
		if parts[0] == "" {
			allErrs = append(allErrs, field.Invalid(fldPath, "", "the domain must not be empty"))
		} else {
			allErrs = append(allErrs, validateDriverName(parts[0], fldPath)...)
		}
		if parts[1] == "" {
			allErrs = append(allErrs, field.Invalid(fldPath, "", "the name must not be empty"))
		} else {
			allErrs = append(allErrs, validateCIdentifier(parts[1], fldPath)...)
		}
	}
	// Like upstream, a name with more slashes passes: upstream means to
	// refuse it one day, with ratcheting for objects already stored.
	return allErrs
}

func validateCIdentifier(id string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(id) > resourcev1.DeviceMaxIDLength {
		allErrs = append(allErrs, field.TooLong(fldPath, "", resourcev1.DeviceMaxIDLength))
	}
	for _, msg := range content.IsCIdentifier(id) {
		allErrs = append(allErrs, field.Invalid(fldPath, id, msg))
	}
	return allErrs
}

// validateRawExtension checks opaque driver parameters: present, within
// maxLength, and a JSON object.
func validateRawExtension(raw runtime.RawExtension, fldPath *field.Path, maxLength int) field.ErrorList {
	var v any
	switch {
	case len(raw.Raw) == 0:
		return field.ErrorList{field.Required(fldPath, "")}
	case len(raw.Raw) > maxLength:
		// Too large to be worth parsing.
		return field.ErrorList{field.TooLong(fldPath, "", maxLength)}
	}
	if err := json.Unmarshal(raw.Raw, &v); err != nil {
		return field.ErrorList{field.Invalid(fldPath, "<value omitted>", fmt.Sprintf("error parsing data as JSON: %v", err.Error()))}
	}
	if v == nil {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	if _, isObject := v.(map[string]any); !isObject {
		return field.ErrorList{field.Invalid(fldPath, "<value omitted>", "must be a valid JSON object")}
	}
	return nil
}

// validateDeviceConfiguration checks a class's or claim's configuration:
// opaque parameters for a driver (whose name the generated rules check).
func validateDeviceConfiguration(config resourcev1.DeviceConfiguration, fldPath *field.Path) field.ErrorList {
	if config.Opaque == nil {
		return field.ErrorList{field.Required(fldPath.Child("opaque"), "")}
	}
	return validateRawExtension(config.Opaque.Parameters, fldPath.Child("opaque", "parameters"), resourcev1.OpaqueParametersMaxLength)
}

// validateSelector checks a device selector. Upstream compiles the CEL
// expression and bounds its cost; only its length is checked here.
func validateSelector(selector resourcev1.DeviceSelector, fldPath *field.Path) field.ErrorList {
	if selector.CEL == nil {
		return field.ErrorList{field.Required(fldPath.Child("cel"), "")}
	}
	if len(selector.CEL.Expression) > resourcev1.CELSelectorExpressionMaxLength {
		return field.ErrorList{field.TooLong(fldPath.Child("cel", "expression"), "", resourcev1.CELSelectorExpressionMaxLength)}
	}
	return nil
}

// validateSelectors checks each selector unless there are too many, which
// the generated rules report (and upstream then looks no further).
func validateSelectors(selectors []resourcev1.DeviceSelector, fldPath *field.Path) field.ErrorList {
	if len(selectors) > resourcev1.DeviceSelectorsMaxSize {
		return nil
	}
	var allErrs field.ErrorList
	for i, s := range selectors {
		allErrs = append(allErrs, validateSelector(s, fldPath.Index(i))...)
	}
	return allErrs
}

// validateDeviceTaint checks a taint's key and value; its effect is the
// generated rules'.
func validateDeviceTaint(taint resourcev1.DeviceTaint, fldPath *field.Path) field.ErrorList {
	allErrs := metav1validation.ValidateLabelName(taint.Key, fldPath.Child("key"))
	if taint.Value != "" {
		allErrs = append(allErrs, validateLabelValue(taint.Value, fldPath.Child("value"))...)
	}
	return allErrs
}

// validateDeviceToleration checks a toleration's value against its
// operator; key, operator and effect are the generated rules'.
func validateDeviceToleration(t resourcev1.DeviceToleration, fldPath *field.Path) field.ErrorList {
	switch t.Operator {
	case resourcev1.DeviceTolerationOpExists:
		if t.Value != "" {
			return field.ErrorList{field.Invalid(fldPath.Child("value"), t.Value, "must be empty for operator `Exists`")}
		}
	case resourcev1.DeviceTolerationOpEqual:
		return validateLabelValue(t.Value, fldPath.Child("value"))
	}
	return nil
}

func validateDeviceTolerations(tolerations []resourcev1.DeviceToleration, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, t := range tolerations {
		allErrs = append(allErrs, validateDeviceToleration(t, fldPath.Index(i))...)
	}
	return allErrs
}

// validateBindingConditions checks the conditions a device (or its
// allocation) waits for before a pod may bind: label names, no repeats,
// none both a success and a failure condition, and both kinds or
// neither.
func validateBindingConditions(conditions, failureConditions []string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	condPath, failPath := fldPath.Child("bindingConditions"), fldPath.Child("bindingFailureConditions")
	if len(conditions) <= resourcev1.BindingConditionsMaxSize {
		for i, c := range conditions {
			allErrs = append(allErrs, metav1validation.ValidateLabelName(c, condPath.Index(i))...)
		}
	}
	if len(failureConditions) <= resourcev1.BindingFailureConditionsMaxSize {
		for i, c := range failureConditions {
			allErrs = append(allErrs, metav1validation.ValidateLabelName(c, failPath.Index(i))...)
		}
	}
	for i, c := range conditions {
		if slices.Contains(conditions[:i], c) {
			allErrs = append(allErrs, field.Duplicate(condPath.Index(i), c))
		}
	}
	for i, c := range failureConditions {
		if slices.Contains(failureConditions[:i], c) {
			allErrs = append(allErrs, field.Duplicate(failPath.Index(i), c))
		}
		if slices.Contains(conditions, c) {
			allErrs = append(allErrs, field.Invalid(failPath.Index(i), c, "bindingFailureConditions must not overlap with bindingConditions"))
		}
	}
	if len(conditions) == 0 && len(failureConditions) > 0 {
		allErrs = append(allErrs, field.Invalid(condPath, conditions, "bindingConditions are required to use bindingFailureConditions"))
	}
	if len(failureConditions) == 0 && len(conditions) > 0 {
		allErrs = append(allErrs, field.Invalid(failPath, failureConditions, "bindingFailureConditions are required to use bindingConditions"))
	}
	return allErrs
}

// semverRE is semver.org 2.0.0's grammar, as upstream checks a device's
// version attributes.
var semverRE = regexp.MustCompile(`^` +
	`(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)` +
	`(-(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(\.(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*)?` +
	`(\+[0-9a-zA-Z-]+(\.[0-9a-zA-Z-]+)*)?` +
	`$`)
