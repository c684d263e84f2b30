package core

import (
	"fmt"
	"path"
	"path/filepath"
	"reflect"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"
)

// Messages shared with upstream's pkg/apis/core/validation, kept verbatim
// because clients (and people) match on them.
const (
	isNegativeErrorMsg     = apivalidation.IsNegativeErrorMsg
	isInvalidQuotaResource = `must be a standard resource for quota`
	fieldImmutableErrorMsg = apivalidation.FieldImmutableErrorMsg
	isNotIntegerErrorMsg   = `must be an integer`
	isNotPositiveErrorMsg  = `must be greater than zero`
	fileModeErrorMsg       = "must be a number between 0 and 0777 (octal), both inclusive"
	// maxClientIPServiceAffinitySeconds is upstream's internal
	// core.MaxClientIPServiceAffinitySeconds, which k8s.io/api does not export.
	maxClientIPServiceAffinitySeconds = 86400
)

var supportedPortProtocols = sets.New(corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP)

func validateDNS1123Label(value string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, msg := range validation.IsDNS1123Label(value) {
		allErrs = append(allErrs, field.Invalid(fldPath, value, msg))
	}
	return allErrs
}

func validateDNS1123Subdomain(value string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, msg := range validation.IsDNS1123Subdomain(value) {
		allErrs = append(allErrs, field.Invalid(fldPath, value, msg))
	}
	return allErrs
}

func validateQualifiedName(value string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, msg := range validation.IsQualifiedName(value) {
		allErrs = append(allErrs, field.Invalid(fldPath, value, msg))
	}
	return allErrs
}

// validateName turns the messages of a name rule (NameIsDNSSubdomain and
// friends) into Invalid errors at fldPath.
func validateName(nameFn apivalidation.ValidateNameFunc, value string, prefix bool, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, msg := range nameFn(value, prefix) {
		allErrs = append(allErrs, field.Invalid(fldPath, value, msg))
	}
	return allErrs
}

func validateNonnegativeQuantity(value resource.Quantity, fldPath *field.Path) field.ErrorList {
	if value.Cmp(resource.Quantity{}) < 0 {
		return field.ErrorList{field.Invalid(fldPath, value.String(), isNegativeErrorMsg)}
	}
	return nil
}

func validatePositiveQuantityValue(value resource.Quantity, fldPath *field.Path) field.ErrorList {
	if value.Cmp(resource.Quantity{}) <= 0 {
		return field.ErrorList{field.Invalid(fldPath, value.String(), isNotPositiveErrorMsg)}
	}
	return nil
}

// validatePathNoBacksteps rejects any ".." element, assuming (as upstream
// does) that the API server and the nodes share path conventions.
func validatePathNoBacksteps(targetPath string, fldPath *field.Path) field.ErrorList {
	for _, item := range strings.Split(filepath.ToSlash(targetPath), "/") {
		if item == ".." {
			// One error is enough to make the point, even for ../../..
			return field.ErrorList{field.Invalid(fldPath, targetPath, "must not contain '..'")}
		}
	}
	return nil
}

// validateLocalDescendingPath requires a relative path without "..".
func validateLocalDescendingPath(targetPath string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if path.IsAbs(targetPath) {
		allErrs = append(allErrs, field.Invalid(fldPath, targetPath, "must be a relative path"))
	}
	return append(allErrs, validatePathNoBacksteps(targetPath, fldPath)...)
}

// validateLocalNonReservedPath is validateLocalDescendingPath that also
// rejects names starting with "..", which the atomic writer of projected
// volumes reserves for itself.
func validateLocalNonReservedPath(targetPath string, fldPath *field.Path) field.ErrorList {
	allErrs := validateLocalDescendingPath(targetPath, fldPath)
	// The ".." element check above already covers "../".
	if strings.HasPrefix(targetPath, "..") && !strings.HasPrefix(targetPath, "../") {
		allErrs = append(allErrs, field.Invalid(fldPath, targetPath, "must not start with '..'"))
	}
	return allErrs
}

func validatePortNumOrName(port intstr.IntOrString, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	switch port.Type {
	case intstr.Int:
		for _, msg := range validation.IsValidPortNum(port.IntValue()) {
			allErrs = append(allErrs, field.Invalid(fldPath, port.IntValue(), msg))
		}
	case intstr.String:
		for _, msg := range validation.IsValidPortName(port.StrVal) {
			allErrs = append(allErrs, field.Invalid(fldPath, port.StrVal, msg))
		}
	default:
		allErrs = append(allErrs, field.InternalError(fldPath, fmt.Errorf("unknown type: %v", port.Type)))
	}
	return allErrs
}

// validateNonSpecialIP rejects addresses that make no sense as a service or
// endpoint address: unspecified, loopback and link-local ones.
func validateNonSpecialIP(ipAddress string, fldPath *field.Path) field.ErrorList {
	ip := netutils.ParseIPSloppy(ipAddress)
	if ip == nil {
		return field.ErrorList{field.Invalid(fldPath, ipAddress, "must be a valid IP address")}
	}
	var allErrs field.ErrorList
	if ip.IsUnspecified() {
		allErrs = append(allErrs, field.Invalid(fldPath, ipAddress, fmt.Sprintf("may not be unspecified (%v)", ipAddress)))
	}
	if ip.IsLoopback() {
		allErrs = append(allErrs, field.Invalid(fldPath, ipAddress, "may not be in the loopback range (127.0.0.0/8, ::1/128)"))
	}
	if ip.IsLinkLocalUnicast() {
		allErrs = append(allErrs, field.Invalid(fldPath, ipAddress, "may not be in the link-local range (169.254.0.0/16, fe80::/10)"))
	}
	if ip.IsLinkLocalMulticast() {
		allErrs = append(allErrs, field.Invalid(fldPath, ipAddress, "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"))
	}
	return allErrs
}

// validateFieldAllowList reports, as Forbidden, every field of the struct
// value that is set but not in allowedFields. Listing what is allowed (not
// what is forbidden) means a field added to the API later is rejected until
// someone decides otherwise.
func validateFieldAllowList(value any, allowedFields map[string]bool, errorText string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	t, v := reflect.TypeOf(value), reflect.ValueOf(value)
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if allowedFields[f.Name] || !f.IsExported() {
			continue
		}
		if !v.Field(i).IsZero() {
			r, n := utf8.DecodeRuneInString(f.Name)
			lcName := string(unicode.ToLower(r)) + f.Name[n:]
			allErrs = append(allErrs, field.Forbidden(fldPath.Child(lcName), errorText))
		}
	}
	return allErrs
}

// allPtrFieldsNil reports whether every pointer field of the struct *obj is
// nil; defaulting uses it to spot a volume that names no source at all.
func allPtrFieldsNil(obj any) bool {
	v := reflect.ValueOf(obj).Elem()
	for i := 0; i < v.NumField(); i++ {
		if f := v.Field(i); f.Kind() == reflect.Pointer && !f.IsNil() {
			return false
		}
	}
	return true
}

// specDiff renders the difference between two values for the tail of a
// Forbidden message, as upstream does. A value cmp cannot walk must not turn
// a validation error into a crash, so a panic just drops the diff.
func specDiff(old, new any) (diff string) {
	defer func() {
		if recover() != nil {
			diff = ""
		}
	}()
	return cmp.Diff(old, new)
}

// semanticEqual compares API values the way upstream does: quantities by
// value, times by instant.
func semanticEqual(a, b any) bool {
	return apiequality.Semantic.DeepEqual(a, b)
}

func ptrTo[T any](v T) *T { return &v }
