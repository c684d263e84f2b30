package rbac

import (
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
)

// Roles is the roles resource.
var Roles = &registry.Resource{
	Group: "rbac.authorization.k8s.io", Version: "v1", Name: "roles", Singular: "role", Kind: "Role",
	Namespaced:     true,
	New:            func() runtime.Object { return &rbacv1.Role{} },
	NewList:        func() runtime.Object { return &rbacv1.RoleList{} },
	ValidateName:   ValidateRBACName,
	Default:        registry.Typed(defaultRole),
	Validate:       registry.TypedValidate(validateRole),
	ValidateUpdate: registry.TypedValidateUpdate(validateRoleUpdate),
	Table:          roleTable,
	Fields:         roleFields,
}

// Upstream defines no defaults for Roles.
func defaultRole(obj *rbacv1.Role) {}

func validateRole(obj *rbacv1.Role) field.ErrorList {
	return validatePolicyRules(obj.Rules, true)
}

// Rules may be rewritten freely; Validate re-checks them.
func validateRoleUpdate(obj, old *rbacv1.Role) field.ErrorList { return nil }
