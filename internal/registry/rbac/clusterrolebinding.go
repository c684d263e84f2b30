package rbac

import (
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
)

// Clusterrolebindings is the clusterrolebindings resource.
var Clusterrolebindings = &registry.Resource{
	Group: "rbac.authorization.k8s.io", Version: "v1", Name: "clusterrolebindings", Singular: "clusterrolebinding", Kind: "ClusterRoleBinding",
	Namespaced:     false,
	New:            func() runtime.Object { return &rbacv1.ClusterRoleBinding{} },
	NewList:        func() runtime.Object { return &rbacv1.ClusterRoleBindingList{} },
	ValidateName:   ValidateRBACName,
	Default:        registry.Typed(defaultClusterRoleBinding),
	Validate:       registry.TypedValidate(validateClusterRoleBinding),
	ValidateUpdate: registry.TypedValidateUpdate(validateClusterRoleBindingUpdate),
	Table:          clusterrolebindingTable,
	Fields:         clusterrolebindingFields,
}

func defaultClusterRoleBinding(obj *rbacv1.ClusterRoleBinding) {
	defaultRoleRef(&obj.RoleRef)
	defaultSubjects(obj.Subjects)
}

// A cluster-wide binding has no namespace to find a Role in.
func validateClusterRoleBinding(obj *rbacv1.ClusterRoleBinding) field.ErrorList {
	allErrs := validateRoleRef(obj.RoleRef, []string{"ClusterRole"})
	allErrs = append(allErrs, validateSubjects(obj.Subjects, false)...)
	return allErrs
}

func validateClusterRoleBindingUpdate(obj, old *rbacv1.ClusterRoleBinding) field.ErrorList {
	return validateRoleRefUpdate(obj.RoleRef, old.RoleRef)
}
