// Package rbac is Orca's RBAC authorizer: whether a user may do what a
// request asks, from the Roles, ClusterRoles and their bindings, with
// upstream's matching rules (verbs, API groups, resources with
// subresources and */subresource, resource names, non-resource URLs with
// a trailing *). It also resolves a user's whole rule set, for
// SelfSubjectRulesReview and for refusing role and binding writes that
// would grant more than the writer holds (escalation).
//
// Matching and rule resolution are pure functions over a Source, which
// the API server implements over its own watch caches.
package rbac

import (
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// RuleAllows reports whether one rule allows the request.
func RuleAllows(a authorizer.Attributes, rule *rbacv1.PolicyRule) bool {
	if !verbMatches(rule, a.GetVerb()) {
		return false
	}
	if !a.IsResourceRequest() {
		return nonResourceURLMatches(rule, a.GetPath())
	}
	combined := a.GetResource()
	if a.GetSubresource() != "" {
		combined += "/" + a.GetSubresource()
	}
	return apiGroupMatches(rule, a.GetAPIGroup()) &&
		resourceMatches(rule, combined, a.GetSubresource()) &&
		resourceNameMatches(rule, a.GetName())
}

func verbMatches(rule *rbacv1.PolicyRule, verb string) bool {
	for _, v := range rule.Verbs {
		if v == rbacv1.VerbAll || v == verb {
			return true
		}
	}
	return false
}

func apiGroupMatches(rule *rbacv1.PolicyRule, group string) bool {
	for _, g := range rule.APIGroups {
		if g == rbacv1.APIGroupAll || g == group {
			return true
		}
	}
	return false
}

// resourceMatches: "*", the exact resource or resource/subresource, or
// "*/subresource" for a request of that subresource of any resource.
func resourceMatches(rule *rbacv1.PolicyRule, combined, subresource string) bool {
	for _, r := range rule.Resources {
		if r == rbacv1.ResourceAll || r == combined {
			return true
		}
		if subresource != "" && r == "*/"+subresource {
			return true
		}
	}
	return false
}

func resourceNameMatches(rule *rbacv1.PolicyRule, name string) bool {
	if len(rule.ResourceNames) == 0 {
		return true
	}
	for _, n := range rule.ResourceNames {
		if n == name {
			return true
		}
	}
	return false
}

func nonResourceURLMatches(rule *rbacv1.PolicyRule, path string) bool {
	for _, u := range rule.NonResourceURLs {
		if u == rbacv1.NonResourceAll || u == path {
			return true
		}
		if strings.HasSuffix(u, "*") && strings.HasPrefix(path, strings.TrimRight(u, "*")) {
			return true
		}
	}
	return false
}

// appliesTo reports whether a binding's subject names the user. A
// service-account subject without a namespace means the binding's own, as
// upstream allows for RoleBindings.
func appliesTo(u user.Info, subjects []rbacv1.Subject, bindingNamespace string) (int, bool) {
	for i, s := range subjects {
		switch s.Kind {
		case rbacv1.UserKind:
			if u.GetName() == s.Name {
				return i, true
			}
		case rbacv1.GroupKind:
			for _, g := range u.GetGroups() {
				if g == s.Name {
					return i, true
				}
			}
		case rbacv1.ServiceAccountKind:
			ns := s.Namespace
			if ns == "" {
				ns = bindingNamespace
			}
			if ns != "" && serviceaccount.MatchesUsername(ns, s.Name, u.GetName()) {
				return i, true
			}
		}
	}
	return 0, false
}

// RulesAllow reports whether any of the rules allows the request.
func RulesAllow(a authorizer.Attributes, rules []rbacv1.PolicyRule) bool {
	for i := range rules {
		if RuleAllows(a, &rules[i]) {
			return true
		}
	}
	return false
}
