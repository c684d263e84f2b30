package rbac

import (
	"context"
	"errors"
	"fmt"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/component-helpers/auth/rbac/validation"

	"github.com/orca-project/orca/internal/admission"
)

// EscalationCheck refuses role and binding writes that would grant more
// than the writer holds, as upstream's RBAC registry does: a Role or
// ClusterRole only with rules the writer already has where it is written
// (or the escalate verb on it), a binding only to a role whose rules the
// writer has (or the bind verb on that role). Members of system:masters
// may do anything. It runs with admission, where the object and the user
// are known.
type EscalationCheck struct {
	rules *Authorizer
	authz authorizer.UnconditionalAuthorizer
}

// NewEscalationCheck checks writes against rules (the RBAC rules a user
// holds) and asks authz about the escalate and bind verbs.
func NewEscalationCheck(rules *Authorizer, authz authorizer.UnconditionalAuthorizer) *EscalationCheck {
	return &EscalationCheck{rules: rules, authz: authz}
}

// Name implements admission.Plugin.
func (*EscalationCheck) Name() string { return "RBACEscalation" }

// fullAuthority is what setting an aggregationRule needs: it can gather
// any rule.
var fullAuthority = []rbacv1.PolicyRule{
	{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}},
	{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}},
}

// Validate implements admission.Validator.
func (e *EscalationCheck) Validate(ctx context.Context, a *admission.Attributes) error {
	if a.Resource.Group != rbacv1.GroupName || a.Subresource != "" || (a.Operation != admission.Create && a.Operation != admission.Update) {
		return nil
	}
	u := &user.DefaultInfo{Name: a.UserName, Groups: a.Groups}
	for _, g := range a.Groups {
		if g == user.SystemPrivilegedGroup {
			return nil
		}
	}
	switch o := a.Object.(type) {
	case *rbacv1.Role:
		if old, ok := a.OldObject.(*rbacv1.Role); ok && rulesEqual(old.Rules, o.Rules) {
			return nil
		}
		if e.allowed(ctx, u, "escalate", "roles", o.Namespace, o.Name) {
			return nil
		}
		return forbid(a, o.Name, e.confirm(u, o.Namespace, o.Rules))
	case *rbacv1.ClusterRole:
		old, _ := a.OldObject.(*rbacv1.ClusterRole)
		if old != nil && rulesEqual(old.Rules, o.Rules) && aggregationEqual(old.AggregationRule, o.AggregationRule) {
			return nil
		}
		if e.allowed(ctx, u, "escalate", "clusterroles", "", o.Name) {
			return nil
		}
		if err := e.confirm(u, "", o.Rules); err != nil {
			return forbid(a, o.Name, err)
		}
		// An aggregationRule can gather any rule, so it needs full
		// authority to set, change or keep.
		switch {
		case old == nil && o.AggregationRule != nil:
			if e.confirm(u, "", fullAuthority) != nil {
				return forbid(a, o.Name, errors.New("must have cluster-admin privileges to use the aggregationRule"))
			}
		case old != nil && (o.AggregationRule != nil || old.AggregationRule != nil):
			if e.confirm(u, "", fullAuthority) != nil {
				return forbid(a, o.Name, errors.New("must have cluster-admin privileges to use an aggregationRule"))
			}
		}
	case *rbacv1.RoleBinding:
		if old, ok := a.OldObject.(*rbacv1.RoleBinding); ok && old.RoleRef == o.RoleRef {
			return nil
		}
		return e.binding(ctx, a, u, o.Name, o.Namespace, o.RoleRef)
	case *rbacv1.ClusterRoleBinding:
		if old, ok := a.OldObject.(*rbacv1.ClusterRoleBinding); ok && old.RoleRef == o.RoleRef {
			return nil
		}
		return e.binding(ctx, a, u, o.Name, "", o.RoleRef)
	}
	return nil
}

func (e *EscalationCheck) binding(ctx context.Context, a *admission.Attributes, u user.Info, name, namespace string, ref rbacv1.RoleRef) error {
	resource := "clusterroles"
	if ref.Kind == "Role" {
		resource = "roles"
	}
	if e.allowed(ctx, u, "bind", resource, namespace, ref.Name) {
		return nil
	}
	rules, err := e.rules.roleRules(ref, namespace)
	if err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	return forbid(a, name, e.confirm(u, namespace, rules))
}

func (e *EscalationCheck) allowed(ctx context.Context, u user.Info, verb, resource, namespace, name string) bool {
	d, _, _ := e.authz.Authorize(ctx, authorizer.AttributesRecord{
		User: u, Verb: verb, APIGroup: rbacv1.GroupName, Resource: resource, Namespace: namespace, Name: name, ResourceRequest: true,
	})
	return d == authorizer.DecisionAllow
}

// confirm is upstream's ConfirmNoEscalation: the user's own rules where
// the object lives must cover rules.
func (e *EscalationCheck) confirm(u user.Info, namespace string, rules []rbacv1.PolicyRule) error {
	own, resolveErr := e.rules.PolicyRules(u, namespace)
	ok, missing := validation.Covers(own, rules)
	if ok {
		return nil
	}
	parts := make([]string, len(missing))
	for i, r := range missing {
		parts[i] = compactString(r)
	}
	msg := fmt.Sprintf("user %q (groups=%q) is attempting to grant RBAC permissions not currently held:\n%s", u.GetName(), u.GetGroups(), strings.Join(parts, "\n"))
	if resolveErr != nil {
		msg += fmt.Sprintf("; resolution errors: %v", []error{resolveErr})
	}
	return errors.New(msg)
}

func forbid(a *admission.Attributes, name string, err error) error {
	if err == nil {
		return nil
	}
	return apierrors.NewForbidden(a.Resource.GroupResource(), name, err)
}

// compactString is upstream's rule form in escalation messages:
// {APIGroups:[""], Resources:["pods"], Verbs:["get"]}.
func compactString(r rbacv1.PolicyRule) string {
	var parts []string
	add := func(label string, v []string) {
		if len(v) > 0 {
			parts = append(parts, fmt.Sprintf("%s:%q", label, v))
		}
	}
	add("APIGroups", r.APIGroups)
	add("Resources", r.Resources)
	add("NonResourceURLs", r.NonResourceURLs)
	add("ResourceNames", r.ResourceNames)
	add("Verbs", r.Verbs)
	return "{" + strings.Join(parts, ", ") + "}"
}

func rulesEqual(a, b []rbacv1.PolicyRule) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if compactString(a[i]) != compactString(b[i]) {
			return false
		}
	}
	return true
}

func aggregationEqual(a, b *rbacv1.AggregationRule) bool {
	if (a == nil) != (b == nil) {
		return false
	}
	if a == nil {
		return true
	}
	return fmt.Sprint(a.ClusterRoleSelectors) == fmt.Sprint(b.ClusterRoleSelectors)
}
