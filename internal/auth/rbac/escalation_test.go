package rbac

import (
	"context"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/admission"
)

func TestEscalationCheck(t *testing.T) {
	podReader := rule(l("get", "list"), l(""), l("pods"), nil)
	src := &fakeSource{
		clusterRoles: map[string]*rbacv1.ClusterRole{
			"pod-reader":    {ObjectMeta: metav1.ObjectMeta{Name: "pod-reader"}, Rules: []rbacv1.PolicyRule{podReader}},
			"secret-reader": {ObjectMeta: metav1.ObjectMeta{Name: "secret-reader"}, Rules: []rbacv1.PolicyRule{rule(l("get"), l(""), l("secrets"), nil)}},
			"admin-ish":     {ObjectMeta: metav1.ObjectMeta{Name: "admin-ish"}, Rules: []rbacv1.PolicyRule{rule(l("*"), l("*"), l("*"), nil)}},
			"rbac-writer": {ObjectMeta: metav1.ObjectMeta{Name: "rbac-writer"}, Rules: []rbacv1.PolicyRule{
				rule(l("create", "update"), l("rbac.authorization.k8s.io"), l("roles", "rolebindings", "clusterroles", "clusterrolebindings"), nil),
				rule(l("bind"), l("rbac.authorization.k8s.io"), l("clusterroles"), l("admin-ish")),
			}},
		},
		rbs: []*rbacv1.RoleBinding{
			{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "dave"}, RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "pod-reader"}, Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "dave"}}},
		},
		crbs: []*rbacv1.ClusterRoleBinding{
			{ObjectMeta: metav1.ObjectMeta{Name: "dave-rbac"}, RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "rbac-writer"}, Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "dave"}}},
		},
	}
	az := New(src)
	check := NewEscalationCheck(az, az)
	gvr := func(r string) admission.Attributes {
		return admission.Attributes{Operation: admission.Create, Resource: rbacv1.SchemeGroupVersion.WithResource(r), UserName: "dave", Groups: l("system:authenticated")}
	}
	role := func(ns string, rules ...rbacv1.PolicyRule) *rbacv1.Role {
		return &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "r"}, Rules: rules}
	}
	for _, tc := range []struct {
		name string
		a    admission.Attributes
		obj  runtime.Object
		want string
	}{
		{"a role within what dave holds there", gvr("roles"), role("team", rule(l("get"), l(""), l("pods"), nil)), ""},
		{"a role dave does not hold there", gvr("roles"), role("other", rule(l("get"), l(""), l("pods"), nil)), `user "dave" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:` + "\n" + `{APIGroups:[""], Resources:["pods"], Verbs:["get"]}`},
		{"a wider role", gvr("roles"), role("team", rule(l("delete"), l(""), l("pods"), nil)), `{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}`},
		{"binding to a role dave holds", gvr("rolebindings"), &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "b"}, RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "pod-reader"}}, ""},
		{"binding to a role dave may bind", gvr("clusterrolebindings"), &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "b"}, RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "admin-ish"}}, ""},
		{"binding to a role beyond dave", gvr("rolebindings"), &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "b"}, RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "secret-reader"}}, "is attempting to grant RBAC permissions not currently held"},
		{"binding to a missing role", gvr("rolebindings"), &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "b"}, RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "nope"}}, "not found"},
		{"aggregation needs full authority", gvr("clusterroles"), &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "agg"}, AggregationRule: &rbacv1.AggregationRule{}}, "must have cluster-admin privileges to use the aggregationRule"},
	} {
		a := tc.a
		a.Object = tc.obj
		err := check.Validate(context.Background(), &a)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: got %v, want an error containing %q", tc.name, err, tc.want)
		case tc.want != "" && tc.want != "not found" && !apierrors.IsForbidden(err):
			t.Errorf("%s: %v is not a 403", tc.name, err)
		}
	}
	// system:masters may grant anything.
	a := gvr("roles")
	a.Groups = l("system:masters")
	a.Object = role("other", rule(l("*"), l("*"), l("*"), nil))
	if err := check.Validate(context.Background(), &a); err != nil {
		t.Errorf("system:masters refused: %v", err)
	}
}
