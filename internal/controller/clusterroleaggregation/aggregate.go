package clusterroleaggregation

import (
	"cmp"
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Aggregate is the rules role should hold: for each of its aggregation
// rule's selectors in order, the rules of the ClusterRoles in all that the
// selector matches, taken by role name, each rule once. A role never
// aggregates itself. The order is upstream's, so that upstream and Orca
// write the same list and a role does not flap between two orders.
func Aggregate(role *rbacv1.ClusterRole, all []*rbacv1.ClusterRole) ([]rbacv1.PolicyRule, error) {
	rules := []rbacv1.PolicyRule{}
	if role.AggregationRule == nil {
		return rules, nil
	}
	byName := slices.Clone(all)
	slices.SortFunc(byName, func(a, b *rbacv1.ClusterRole) int { return cmp.Compare(a.Name, b.Name) })
	for i := range role.AggregationRule.ClusterRoleSelectors {
		sel, err := metav1.LabelSelectorAsSelector(&role.AggregationRule.ClusterRoleSelectors[i])
		if err != nil {
			return nil, err
		}
		for _, r := range byName {
			if r.Name == role.Name || !sel.Matches(labels.Set(r.Labels)) {
				continue
			}
			for _, rule := range r.Rules {
				if !slices.ContainsFunc(rules, func(have rbacv1.PolicyRule) bool { return equality.Semantic.DeepEqual(have, rule) }) {
					rules = append(rules, *rule.DeepCopy())
				}
			}
		}
	}
	return rules, nil
}
