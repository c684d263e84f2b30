package networking

import (
	"k8s.io/apimachinery/pkg/api/validate/content"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The references of this group (an IPAddress's parent, an Ingress
// backend's resource, an IngressClass's parameters) all name an object of
// any kind the way upstream checks it: the group, when given, is a DNS
// subdomain, and the other names are path segments of its URL.

// validateReferenceGroup checks an optional API group. An IPAddress's
// parent has the core group when its group is empty; the references of
// ingresses say so with no group at all, and an empty one is an error.
func validateReferenceGroup(fldPath *field.Path, group *string) field.ErrorList {
	if group == nil {
		return nil
	}
	return invalidEach(fldPath, *group, utilvalidation.IsDNS1123Subdomain(*group))
}

// validatePathSegment checks a name that stands in a URL path; an empty
// name is an error only when it is required.
func validatePathSegment(fldPath *field.Path, value string, required bool) field.ErrorList {
	if value == "" {
		if required {
			return field.ErrorList{field.Required(fldPath, "")}
		}
		return nil
	}
	return invalidEach(fldPath, value, content.IsPathSegmentName(value))
}

// validateTypedReference checks the apiGroup, kind and name of a
// reference to an object of another kind, as upstream's
// validateIngressTypedLocalObjectReference does and
// validateIngressClassParametersReference begins.
func validateTypedReference(fldPath *field.Path, group *string, kind, name string) field.ErrorList {
	errs := validateReferenceGroup(fldPath.Child("apiGroup"), group)
	errs = append(errs, validatePathSegment(fldPath.Child("kind"), kind, true)...)
	return append(errs, validatePathSegment(fldPath.Child("name"), name, true)...)
}

// invalidEach turns each message of a string check into an Invalid error
// on value, the way upstream reports the helpers that return messages.
func invalidEach(fldPath *field.Path, value any, msgs []string) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range msgs {
		errs = append(errs, field.Invalid(fldPath, value, msg))
	}
	return errs
}
