package rbac

import (
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
)

// Clusterroles is the clusterroles resource.
var Clusterroles = &registry.Resource{
	Group: "rbac.authorization.k8s.io", Version: "v1", Name: "clusterroles", Singular: "clusterrole", Kind: "ClusterRole",
	Namespaced:     false,
	New:            func() runtime.Object { return &rbacv1.ClusterRole{} },
	NewList:        func() runtime.Object { return &rbacv1.ClusterRoleList{} },
	Default:        registry.Typed(defaultClusterRole),
	Validate:       registry.TypedValidate(validateClusterRole),
	ValidateUpdate: registry.TypedValidateUpdate(validateClusterRoleUpdate),
	Table:          clusterroleTable,
	Fields:         clusterroleFields,
}

func defaultClusterRole(obj *rbacv1.ClusterRole) {}

func validateClusterRole(obj *rbacv1.ClusterRole) field.ErrorList { return nil }

func validateClusterRoleUpdate(obj, old *rbacv1.ClusterRole) field.ErrorList { return nil }
