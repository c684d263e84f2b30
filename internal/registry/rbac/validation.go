package rbac

import (
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateRBACName checks a role or binding name. RBAC objects are only
// ever addressed by name in a URL path, so upstream requires no more than
// a safe path segment (it ignores prefix: any suffix keeps a valid
// segment valid).
func ValidateRBACName(name string, prefix bool) []string {
	return content.IsPathSegmentName(name)
}

// validatePolicyRule checks one rule. Namespaced roles cannot grant
// non-resource URLs, which are not namespaced.
func validatePolicyRule(rule rbacv1.PolicyRule, isNamespaced bool, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(rule.Verbs) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("verbs"), "verbs must contain at least one value"))
	}
	if len(rule.NonResourceURLs) > 0 {
		if isNamespaced {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("nonResourceURLs"), rule.NonResourceURLs, "namespaced rules cannot apply to non-resource URLs"))
		}
		if len(rule.APIGroups) > 0 || len(rule.Resources) > 0 || len(rule.ResourceNames) > 0 {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("nonResourceURLs"), rule.NonResourceURLs, "rules cannot apply to both regular resources and non-resource URLs"))
		}
		return allErrs
	}
	if len(rule.APIGroups) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("apiGroups"), "resource rules must supply at least one api group"))
	}
	if len(rule.Resources) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("resources"), "resource rules must supply at least one resource"))
	}
	return allErrs
}

func validatePolicyRules(rules []rbacv1.PolicyRule, isNamespaced bool) field.ErrorList {
	var allErrs field.ErrorList
	for i, rule := range rules {
		allErrs = append(allErrs, validatePolicyRule(rule, isNamespaced, field.NewPath("rules").Index(i))...)
	}
	return allErrs
}

// validateRoleRef checks a binding's role reference; kinds lists what the
// binding may point at (a ClusterRoleBinding cannot use a Role, which
// only exists in a namespace).
func validateRoleRef(ref rbacv1.RoleRef, kinds []string) field.ErrorList {
	var allErrs field.ErrorList
	fldPath := field.NewPath("roleRef")
	if ref.APIGroup != rbacv1.GroupName {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("apiGroup"), ref.APIGroup, []string{rbacv1.GroupName}))
	}
	kindOK := false
	for _, k := range kinds {
		kindOK = kindOK || ref.Kind == k
	}
	if !kindOK {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("kind"), ref.Kind, kinds))
	}
	if len(ref.Name) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("name"), ""))
	} else {
		for _, msg := range ValidateRBACName(ref.Name, false) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("name"), ref.Name, msg))
		}
	}
	return allErrs
}

func validateSubjects(subjects []rbacv1.Subject, isNamespaced bool) field.ErrorList {
	var allErrs field.ErrorList
	for i, subject := range subjects {
		allErrs = append(allErrs, validateSubject(subject, isNamespaced, field.NewPath("subjects").Index(i))...)
	}
	return allErrs
}

// validateSubject checks who a binding grants to. A ServiceAccount in a
// cluster-wide binding must say which namespace it lives in; in a
// RoleBinding it defaults to the binding's own namespace.
func validateSubject(subject rbacv1.Subject, isNamespaced bool, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(subject.Name) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("name"), ""))
	}
	switch subject.Kind {
	case rbacv1.ServiceAccountKind:
		if len(subject.Name) > 0 {
			for _, msg := range apimachineryvalidation.ValidateServiceAccountName(subject.Name, false) {
				allErrs = append(allErrs, field.Invalid(fldPath.Child("name"), subject.Name, msg))
			}
		}
		if len(subject.APIGroup) > 0 {
			allErrs = append(allErrs, field.NotSupported(fldPath.Child("apiGroup"), subject.APIGroup, []string{""}))
		}
		if !isNamespaced && len(subject.Namespace) == 0 {
			allErrs = append(allErrs, field.Required(fldPath.Child("namespace"), ""))
		}
	case rbacv1.UserKind, rbacv1.GroupKind:
		// User and group names come from authenticators and may be
		// anything, so only the group is checked.
		if subject.APIGroup != rbacv1.GroupName {
			allErrs = append(allErrs, field.NotSupported(fldPath.Child("apiGroup"), subject.APIGroup, []string{rbacv1.GroupName}))
		}
	default:
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("kind"), subject.Kind, []string{rbacv1.ServiceAccountKind, rbacv1.UserKind, rbacv1.GroupKind}))
	}
	return allErrs
}

// defaultRoleRef and defaultSubjects fill in the API group clients may
// leave out: RBAC's own for roles, users and groups, and the core group
// for service accounts.
func defaultRoleRef(ref *rbacv1.RoleRef) {
	if len(ref.APIGroup) == 0 {
		ref.APIGroup = rbacv1.GroupName
	}
}

func defaultSubjects(subjects []rbacv1.Subject) {
	for i := range subjects {
		s := &subjects[i]
		if len(s.APIGroup) > 0 {
			continue
		}
		switch s.Kind {
		case rbacv1.UserKind, rbacv1.GroupKind:
			s.APIGroup = rbacv1.GroupName
		}
	}
}

// validateRoleRefUpdate forbids re-pointing a binding: a client allowed
// to bind one role must not be able to turn the binding into a grant of
// another. Changing the role means deleting and recreating the binding.
func validateRoleRefUpdate(ref, oldRef rbacv1.RoleRef) field.ErrorList {
	if ref != oldRef {
		return field.ErrorList{field.Invalid(field.NewPath("roleRef"), ref, "cannot change roleRef")}
	}
	return nil
}
