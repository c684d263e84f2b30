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
	Default:        registry.Typed(defaultClusterRoleBinding),
	Validate:       registry.TypedValidate(validateClusterRoleBinding),
	ValidateUpdate: registry.TypedValidateUpdate(validateClusterRoleBindingUpdate),
	Table:          clusterrolebindingTable,
	Fields:         clusterrolebindingFields,
}

func defaultClusterRoleBinding(obj *rbacv1.ClusterRoleBinding) {}

func validateClusterRoleBinding(obj *rbacv1.ClusterRoleBinding) field.ErrorList { return nil }

func validateClusterRoleBindingUpdate(obj, old *rbacv1.ClusterRoleBinding) field.ErrorList {
	return nil
}
