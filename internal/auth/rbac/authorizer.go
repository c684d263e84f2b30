package rbac

import (
	"context"
	"errors"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// Source reads the RBAC objects. The API server serves it from its watch
// caches; the objects returned are shared and must not be changed.
type Source interface {
	ClusterRoleBindings() []*rbacv1.ClusterRoleBinding
	RoleBindings(namespace string) []*rbacv1.RoleBinding
	// ClusterRole and Role return a NotFound error for a missing object.
	ClusterRole(name string) (*rbacv1.ClusterRole, error)
	Role(namespace, name string) (*rbacv1.Role, error)
}

// Authorizer is the RBAC authorizer: Allow when a rule of a role bound to
// the user allows the request, NoOpinion otherwise (RBAC never denies
// outright, so that a later authorizer may still allow).
type Authorizer struct{ src Source }

// New returns an RBAC authorizer over src.
func New(src Source) *Authorizer { return &Authorizer{src: src} }

var _ authorizer.UnconditionalAuthorizer = (*Authorizer)(nil)
var _ authorizer.RuleResolver = (*Authorizer)(nil)

// Authorize implements authorizer.Authorizer.
func (a *Authorizer) Authorize(_ context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	var errs []error
	allowed := false
	reason := ""
	a.visitRules(attrs.GetUser(), attrs.GetNamespace(), func(source fmt.Stringer, rule *rbacv1.PolicyRule, err error) bool {
		if err != nil {
			errs = append(errs, err)
			return true
		}
		if RuleAllows(attrs, rule) {
			allowed = true
			reason = fmt.Sprintf("RBAC: allowed by %s", source)
			return false
		}
		return true
	})
	if allowed {
		return authorizer.DecisionAllow, reason, nil
	}
	if len(errs) > 0 {
		// Upstream names what could not be read (a binding to a missing
		// role) in the denial, which helps whoever wrote the binding.
		return authorizer.DecisionNoOpinion, "RBAC: " + errors.Join(errs...).Error(), nil
	}
	return authorizer.DecisionNoOpinion, "", nil
}

// RulesFor implements authorizer.RuleResolver: every rule that applies to
// the user in the namespace (cluster-wide rules included).
func (a *Authorizer) RulesFor(_ context.Context, u user.Info, namespace string) ([]authorizer.ResourceRuleInfo, []authorizer.NonResourceRuleInfo, bool, error) {
	rules, err := a.PolicyRules(u, namespace)
	var res []authorizer.ResourceRuleInfo
	var nonRes []authorizer.NonResourceRuleInfo
	for _, r := range rules {
		if len(r.Resources) > 0 {
			res = append(res, &authorizer.DefaultResourceRuleInfo{Verbs: r.Verbs, APIGroups: r.APIGroups, Resources: r.Resources, ResourceNames: r.ResourceNames})
		}
		if len(r.NonResourceURLs) > 0 {
			nonRes = append(nonRes, &authorizer.DefaultNonResourceRuleInfo{Verbs: r.Verbs, NonResourceURLs: r.NonResourceURLs})
		}
	}
	return res, nonRes, err != nil, err
}

// PolicyRules is the user's whole rule set in the namespace, with the
// errors met on the way (missing roles) joined.
func (a *Authorizer) PolicyRules(u user.Info, namespace string) ([]rbacv1.PolicyRule, error) {
	var rules []rbacv1.PolicyRule
	var errs []error
	a.visitRules(u, namespace, func(_ fmt.Stringer, rule *rbacv1.PolicyRule, err error) bool {
		if err != nil {
			errs = append(errs, err)
		} else {
			rules = append(rules, *rule)
		}
		return true
	})
	return rules, errors.Join(errs...)
}

// bindingSource describes where a rule came from, as upstream's reasons
// do: `ClusterRoleBinding "x" of ClusterRole "y" to User "z"`.
type bindingSource struct {
	binding *rbacv1.ClusterRoleBinding
	rb      *rbacv1.RoleBinding
	subject *rbacv1.Subject
}

func (s bindingSource) String() string {
	if s.binding != nil {
		return fmt.Sprintf("ClusterRoleBinding %q of %s %q to %s", s.binding.Name, s.binding.RoleRef.Kind, s.binding.RoleRef.Name, describeSubject(s.subject, ""))
	}
	return fmt.Sprintf("RoleBinding %q of %s %q to %s", s.rb.Name+"/"+s.rb.Namespace, s.rb.RoleRef.Kind, s.rb.RoleRef.Name, describeSubject(s.subject, s.rb.Namespace))
}

func describeSubject(s *rbacv1.Subject, bindingNamespace string) string {
	switch s.Kind {
	case rbacv1.ServiceAccountKind:
		ns := s.Namespace
		if ns == "" {
			ns = bindingNamespace
		}
		return fmt.Sprintf("%s %q", s.Kind, s.Name+"/"+ns)
	default:
		return fmt.Sprintf("%s %q", s.Kind, s.Name)
	}
}

// visitRules calls visit for every rule bound to the user, cluster-wide
// first, then in the namespace, until visit returns false.
func (a *Authorizer) visitRules(u user.Info, namespace string, visit func(source fmt.Stringer, rule *rbacv1.PolicyRule, err error) bool) {
	if u == nil {
		return
	}
	for _, b := range a.src.ClusterRoleBindings() {
		i, ok := appliesTo(u, b.Subjects, "")
		if !ok {
			continue
		}
		rules, err := a.roleRules(b.RoleRef, "")
		if err != nil {
			if !visit(nil, nil, err) {
				return
			}
			continue
		}
		src := bindingSource{binding: b, subject: &b.Subjects[i]}
		for j := range rules {
			if !visit(src, &rules[j], nil) {
				return
			}
		}
	}
	if namespace == "" {
		return
	}
	for _, b := range a.src.RoleBindings(namespace) {
		i, ok := appliesTo(u, b.Subjects, namespace)
		if !ok {
			continue
		}
		rules, err := a.roleRules(b.RoleRef, namespace)
		if err != nil {
			if !visit(nil, nil, err) {
				return
			}
			continue
		}
		src := bindingSource{rb: b, subject: &b.Subjects[i]}
		for j := range rules {
			if !visit(src, &rules[j], nil) {
				return
			}
		}
	}
}

// roleRules reads the rules a binding's roleRef names.
func (a *Authorizer) roleRules(ref rbacv1.RoleRef, namespace string) ([]rbacv1.PolicyRule, error) {
	switch ref.Kind {
	case "ClusterRole":
		r, err := a.src.ClusterRole(ref.Name)
		if err != nil {
			return nil, err
		}
		return r.Rules, nil
	case "Role":
		if namespace == "" {
			return nil, fmt.Errorf("a ClusterRoleBinding cannot refer to Role %q", ref.Name)
		}
		r, err := a.src.Role(namespace, ref.Name)
		if err != nil {
			return nil, err
		}
		return r.Rules, nil
	}
	return nil, fmt.Errorf("unsupported role reference kind: %q", ref.Kind)
}
