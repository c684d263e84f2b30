package rbac

import (
	"context"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// fakeSource holds RBAC objects in maps.
type fakeSource struct {
	crbs         []*rbacv1.ClusterRoleBinding
	rbs          []*rbacv1.RoleBinding
	clusterRoles map[string]*rbacv1.ClusterRole
	roles        map[string]*rbacv1.Role // namespace/name
}

func (f *fakeSource) ClusterRoleBindings() []*rbacv1.ClusterRoleBinding { return f.crbs }
func (f *fakeSource) RoleBindings(ns string) []*rbacv1.RoleBinding {
	var out []*rbacv1.RoleBinding
	for _, b := range f.rbs {
		if b.Namespace == ns {
			out = append(out, b)
		}
	}
	return out
}
func (f *fakeSource) ClusterRole(name string) (*rbacv1.ClusterRole, error) {
	if r, ok := f.clusterRoles[name]; ok {
		return r, nil
	}
	return nil, apierrors.NewNotFound(rbacv1.Resource("clusterroles"), name)
}
func (f *fakeSource) Role(ns, name string) (*rbacv1.Role, error) {
	if r, ok := f.roles[ns+"/"+name]; ok {
		return r, nil
	}
	return nil, apierrors.NewNotFound(rbacv1.Resource("roles"), name)
}

func rule(verbs, groups, resources, names []string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: verbs, APIGroups: groups, Resources: resources, ResourceNames: names}
}

func l(s ...string) []string { return s }

func res(verb, group, resource, sub, ns, name string) authorizer.AttributesRecord {
	return authorizer.AttributesRecord{Verb: verb, APIGroup: group, Resource: resource, Subresource: sub, Namespace: ns, Name: name, ResourceRequest: true}
}

func TestRuleAllows(t *testing.T) {
	for _, tc := range []struct {
		name  string
		rule  rbacv1.PolicyRule
		attrs authorizer.AttributesRecord
		want  bool
	}{
		{"exact", rule(l("get"), l(""), l("pods"), nil), res("get", "", "pods", "", "ns", "p"), true},
		{"other verb", rule(l("get"), l(""), l("pods"), nil), res("list", "", "pods", "", "ns", ""), false},
		{"verb *", rule(l("*"), l(""), l("pods"), nil), res("deletecollection", "", "pods", "", "ns", ""), true},
		{"other group", rule(l("get"), l("apps"), l("pods"), nil), res("get", "", "pods", "", "ns", "p"), false},
		{"group *", rule(l("get"), l("*"), l("deployments"), nil), res("get", "apps", "deployments", "", "ns", "d"), true},
		{"resource * covers subresources", rule(l("get"), l(""), l("*"), nil), res("get", "", "pods", "log", "ns", "p"), true},
		{"resource does not cover its subresource", rule(l("get"), l(""), l("pods"), nil), res("get", "", "pods", "log", "ns", "p"), false},
		{"resource/subresource", rule(l("get"), l(""), l("pods/log"), nil), res("get", "", "pods", "log", "ns", "p"), true},
		{"resource/subresource is not the resource", rule(l("get"), l(""), l("pods/log"), nil), res("get", "", "pods", "", "ns", "p"), false},
		{"*/subresource", rule(l("update"), l("*"), l("*/scale"), nil), res("update", "apps", "deployments", "scale", "ns", "d"), true},
		{"*/subresource of another", rule(l("update"), l("*"), l("*/scale"), nil), res("update", "apps", "deployments", "status", "ns", "d"), false},
		{"resourceNames match", rule(l("get"), l(""), l("configmaps"), l("a", "b")), res("get", "", "configmaps", "", "ns", "b"), true},
		{"resourceNames miss", rule(l("get"), l(""), l("configmaps"), l("a")), res("get", "", "configmaps", "", "ns", "c"), false},
		{"resourceNames and a list", rule(l("list"), l(""), l("configmaps"), l("a")), res("list", "", "configmaps", "", "ns", ""), false},
		{"non-resource exact", rbacv1.PolicyRule{Verbs: l("get"), NonResourceURLs: l("/healthz")}, authorizer.AttributesRecord{Verb: "get", Path: "/healthz"}, true},
		{"non-resource star", rbacv1.PolicyRule{Verbs: l("get"), NonResourceURLs: l("/healthz*")}, authorizer.AttributesRecord{Verb: "get", Path: "/healthz/etcd"}, true},
		{"non-resource prefix star", rbacv1.PolicyRule{Verbs: l("get"), NonResourceURLs: l("/apis/*")}, authorizer.AttributesRecord{Verb: "get", Path: "/apis/apps/v1"}, true},
		{"non-resource other", rbacv1.PolicyRule{Verbs: l("get"), NonResourceURLs: l("/healthz")}, authorizer.AttributesRecord{Verb: "get", Path: "/metrics"}, false},
		{"non-resource rule for a resource request", rbacv1.PolicyRule{Verbs: l("get"), NonResourceURLs: l("*")}, res("get", "", "pods", "", "ns", "p"), false},
		{"resource rule for a path", rule(l("*"), l("*"), l("*"), nil), authorizer.AttributesRecord{Verb: "get", Path: "/metrics"}, false},
	} {
		if got := RuleAllows(tc.attrs, &tc.rule); got != tc.want {
			t.Errorf("%s: RuleAllows = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestAuthorize(t *testing.T) {
	src := &fakeSource{
		clusterRoles: map[string]*rbacv1.ClusterRole{
			"view":   {ObjectMeta: metav1.ObjectMeta{Name: "view"}, Rules: []rbacv1.PolicyRule{rule(l("get", "list", "watch"), l(""), l("pods", "configmaps"), nil)}},
			"health": {ObjectMeta: metav1.ObjectMeta{Name: "health"}, Rules: []rbacv1.PolicyRule{{Verbs: l("get"), NonResourceURLs: l("/healthz")}}},
		},
		roles: map[string]*rbacv1.Role{
			"team/deployer": {ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "deployer"}, Rules: []rbacv1.PolicyRule{rule(l("create"), l("apps"), l("deployments"), nil)}},
		},
		crbs: []*rbacv1.ClusterRoleBinding{
			{ObjectMeta: metav1.ObjectMeta{Name: "everyone-health"}, RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "health"}, Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, Name: "system:unauthenticated"}, {Kind: rbacv1.GroupKind, Name: "system:authenticated"}}},
			{ObjectMeta: metav1.ObjectMeta{Name: "auditors"}, RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "view"}, Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, Name: "auditors"}}},
			{ObjectMeta: metav1.ObjectMeta{Name: "dangling"}, RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "missing"}, Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "carol"}}},
		},
		rbs: []*rbacv1.RoleBinding{
			{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "alice-view"}, RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "view"}, Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "alice"}}},
			{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "ci-deploy"}, RoleRef: rbacv1.RoleRef{Kind: "Role", Name: "deployer"}, Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "ci"}}},
			{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "other-sa"}, RoleRef: rbacv1.RoleRef{Kind: "Role", Name: "deployer"}, Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "bot", Namespace: "tools"}}},
		},
	}
	a := New(src)
	alice := &user.DefaultInfo{Name: "alice", Groups: l("system:authenticated")}
	auditor := &user.DefaultInfo{Name: "bob", Groups: l("auditors", "system:authenticated")}
	ci := &user.DefaultInfo{Name: "system:serviceaccount:team:ci", Groups: l("system:serviceaccounts", "system:serviceaccounts:team", "system:authenticated")}
	bot := &user.DefaultInfo{Name: "system:serviceaccount:tools:bot"}
	anon := &user.DefaultInfo{Name: "system:anonymous", Groups: l("system:unauthenticated")}
	carol := &user.DefaultInfo{Name: "carol"}
	with := func(u user.Info, r authorizer.AttributesRecord) authorizer.AttributesRecord { r.User = u; return r }
	for _, tc := range []struct {
		name   string
		attrs  authorizer.AttributesRecord
		want   authorizer.Decision
		reason string
	}{
		{"rolebinding to a clusterrole, its namespace", with(alice, res("list", "", "pods", "", "team", "")), authorizer.DecisionAllow, `RBAC: allowed by RoleBinding "alice-view/team" of ClusterRole "view" to User "alice"`},
		{"rolebinding does not reach other namespaces", with(alice, res("list", "", "pods", "", "other", "")), authorizer.DecisionNoOpinion, ""},
		{"rolebinding does not reach the cluster scope", with(alice, res("list", "", "pods", "", "", "")), authorizer.DecisionNoOpinion, ""},
		{"group binding, every namespace", with(auditor, res("get", "", "configmaps", "", "anywhere", "c")), authorizer.DecisionAllow, `RBAC: allowed by ClusterRoleBinding "auditors" of ClusterRole "view" to Group "auditors"`},
		{"group binding, cluster scope", with(auditor, res("list", "", "pods", "", "", "")), authorizer.DecisionAllow, `RBAC: allowed by ClusterRoleBinding "auditors" of ClusterRole "view" to Group "auditors"`},
		{"view cannot write", with(auditor, res("delete", "", "pods", "", "team", "p")), authorizer.DecisionNoOpinion, ""},
		{"service account in the binding's namespace", with(ci, res("create", "apps", "deployments", "", "team", "")), authorizer.DecisionAllow, `RBAC: allowed by RoleBinding "ci-deploy/team" of Role "deployer" to ServiceAccount "ci/team"`},
		{"service account of another namespace", with(bot, res("create", "apps", "deployments", "", "team", "")), authorizer.DecisionAllow, `RBAC: allowed by RoleBinding "other-sa/team" of Role "deployer" to ServiceAccount "bot/tools"`},
		{"anonymous health", with(anon, authorizer.AttributesRecord{Verb: "get", Path: "/healthz"}), authorizer.DecisionAllow, `RBAC: allowed by ClusterRoleBinding "everyone-health" of ClusterRole "health" to Group "system:unauthenticated"`},
		{"anonymous api", with(anon, authorizer.AttributesRecord{Verb: "get", Path: "/api"}), authorizer.DecisionNoOpinion, ""},
		{"binding to a missing role names it", with(carol, res("get", "", "pods", "", "team", "p")), authorizer.DecisionNoOpinion, `RBAC: clusterroles.rbac.authorization.k8s.io "missing" not found`},
	} {
		got, reason, err := a.Authorize(context.Background(), tc.attrs)
		if err != nil || got != tc.want || reason != tc.reason {
			t.Errorf("%s: got %v %q %v, want %v %q", tc.name, got, reason, err, tc.want, tc.reason)
		}
	}
	rules, err := a.PolicyRules(alice, "team")
	if err != nil || len(rules) != 2 || !strings.Contains(rules[1].Verbs[0], "get") {
		t.Errorf("alice's rules in team: %v %v", rules, err)
	}
}
