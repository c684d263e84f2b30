package rbac

import (
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
)

// Rolebindings is the rolebindings resource.
var Rolebindings = &registry.Resource{
	Group: "rbac.authorization.k8s.io", Version: "v1", Name: "rolebindings", Singular: "rolebinding", Kind: "RoleBinding",
	Namespaced:     true,
	New:            func() runtime.Object { return &rbacv1.RoleBinding{} },
	NewList:        func() runtime.Object { return &rbacv1.RoleBindingList{} },
	ValidateName:   ValidateRBACName,
	Default:        registry.Typed(defaultRoleBinding),
	Validate:       registry.TypedValidate(validateRoleBinding),
	ValidateUpdate: registry.TypedValidateUpdate(validateRoleBindingUpdate),
	Table:          rolebindingTable,
	Fields:         rolebindingFields,
}

func defaultRoleBinding(obj *rbacv1.RoleBinding) {
	defaultRoleRef(&obj.RoleRef)
	defaultSubjects(obj.Subjects)
}

// A RoleBinding may grant a namespaced Role or, within its namespace, the
// rules of a ClusterRole.
func validateRoleBinding(obj *rbacv1.RoleBinding) field.ErrorList {
	allErrs := validateRoleRef(obj.RoleRef, []string{"Role", "ClusterRole"})
	allErrs = append(allErrs, validateSubjects(obj.Subjects, true)...)
	return allErrs
}

func validateRoleBindingUpdate(obj, old *rbacv1.RoleBinding) field.ErrorList {
	return validateRoleRefUpdate(obj.RoleRef, old.RoleRef)
}
