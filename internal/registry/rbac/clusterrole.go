package rbac

import (
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
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
	ValidateName:   ValidateRBACName,
	Default:        registry.Typed(defaultClusterRole),
	Validate:       registry.TypedValidate(validateClusterRole),
	ValidateUpdate: registry.TypedValidateUpdate(validateClusterRoleUpdate),
	Table:          clusterroleTable,
	Fields:         clusterroleFields,
}

// Upstream defines no defaults for ClusterRoles.
func defaultClusterRole(obj *rbacv1.ClusterRole) {}

func validateClusterRole(obj *rbacv1.ClusterRole) field.ErrorList {
	allErrs := validatePolicyRules(obj.Rules, false)
	if obj.AggregationRule != nil {
		selectorsPath := field.NewPath("aggregationRule", "clusterRoleSelectors")
		// An aggregated role with nothing to aggregate would silently
		// lose its rules to the aggregation controller.
		if len(obj.AggregationRule.ClusterRoleSelectors) == 0 {
			allErrs = append(allErrs, field.Required(selectorsPath, "at least one clusterRoleSelector required if aggregationRule is non-nil"))
		}
		for i := range obj.AggregationRule.ClusterRoleSelectors {
			selector := &obj.AggregationRule.ClusterRoleSelectors[i]
			idxPath := selectorsPath.Index(i)
			allErrs = append(allErrs, metav1validation.ValidateLabelSelector(selector, metav1validation.LabelSelectorValidationOptions{}, idxPath)...)
			if _, err := metav1.LabelSelectorAsSelector(selector); err != nil {
				allErrs = append(allErrs, field.Invalid(idxPath, selector, "invalid label selector."))
			}
		}
	}
	return allErrs
}

// Rules and aggregation may be rewritten freely; Validate re-checks them.
func validateClusterRoleUpdate(obj, old *rbacv1.ClusterRole) field.ErrorList { return nil }
