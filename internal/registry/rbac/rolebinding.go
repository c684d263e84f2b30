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
	Default:        registry.Typed(defaultRoleBinding),
	Validate:       registry.TypedValidate(validateRoleBinding),
	ValidateUpdate: registry.TypedValidateUpdate(validateRoleBindingUpdate),
	Table:          rolebindingTable,
	Fields:         rolebindingFields,
}

func defaultRoleBinding(obj *rbacv1.RoleBinding) {}

func validateRoleBinding(obj *rbacv1.RoleBinding) field.ErrorList { return nil }

func validateRoleBindingUpdate(obj, old *rbacv1.RoleBinding) field.ErrorList { return nil }
