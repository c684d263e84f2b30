package rbac

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/registrytest"
)

// wantErr and checkErrs are the shared validation-test helpers.
type wantErr = registrytest.WantErr

var checkErrs = registrytest.CheckErrs

func TestValidateRBACName(t *testing.T) {
	tests := []struct {
		name  string
		valid bool
	}{
		{"system:controller:deployment-controller", true},
		{"Admin Role", true},
		{"a/b", false},
		{"100%", false},
		{".", false},
		{"..", false},
	}
	for _, tc := range tests {
		errs := ValidateRBACName(tc.name, false)
		if (len(errs) == 0) != tc.valid {
			t.Errorf("%q: errors %v, want valid=%v", tc.name, errs, tc.valid)
		}
	}
	for _, r := range []*registry.Resource{Roles, Clusterroles, Rolebindings, Clusterrolebindings} {
		if r.ValidateName == nil || len(r.ValidateName("system:basic-user", false)) != 0 {
			t.Errorf("%s does not use path-segment names", r.Name)
		}
	}
}

func TestValidateRole(t *testing.T) {
	tests := []struct {
		name  string
		rules []rbacv1.PolicyRule
		want  []wantErr
	}{{
		name:  "no rules",
		rules: nil,
	}, {
		name:  "resource rule",
		rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}},
	}, {
		name:  "empty rule",
		rules: []rbacv1.PolicyRule{{}},
		want: []wantErr{
			{Type: field.ErrorTypeRequired, Field: "rules[0].verbs", Detail: "verbs must contain at least one value"},
			{Type: field.ErrorTypeRequired, Field: "rules[0].apiGroups", Detail: "resource rules must supply at least one api group"},
			{Type: field.ErrorTypeRequired, Field: "rules[0].resources", Detail: "resource rules must supply at least one resource"},
		},
	}, {
		name: "non-resource URLs in a namespace",
		rules: []rbacv1.PolicyRule{
			{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}},
			{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}, Resources: []string{"pods"}},
		},
		want: []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "rules[1].nonResourceURLs", Detail: "namespaced rules cannot apply to non-resource URLs"},
			{Type: field.ErrorTypeInvalid, Field: "rules[1].nonResourceURLs", Detail: "rules cannot apply to both regular resources and non-resource URLs"},
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkErrs(t, validateRole(&rbacv1.Role{Rules: tc.rules}), tc.want)
		})
	}
}

func TestValidateClusterRole(t *testing.T) {
	tests := []struct {
		name string
		role rbacv1.ClusterRole
		want []wantErr
	}{{
		name: "non-resource URLs",
		role: rbacv1.ClusterRole{Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/metrics"}}}},
	}, {
		name: "aggregated",
		role: rbacv1.ClusterRole{AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{
			{MatchLabels: map[string]string{"rbac.example.com/aggregate-to-view": "true"}},
		}}},
	}, {
		name: "aggregation without selectors",
		role: rbacv1.ClusterRole{AggregationRule: &rbacv1.AggregationRule{}},
		want: []wantErr{{Type: field.ErrorTypeRequired, Field: "aggregationRule.clusterRoleSelectors", Detail: "at least one clusterRoleSelector required if aggregationRule is non-nil"}},
	}, {
		name: "bad aggregation selector",
		role: rbacv1.ClusterRole{AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{
			{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Has"}}},
		}}},
		want: []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "aggregationRule.clusterRoleSelectors[0].matchExpressions[0].operator", Detail: ""},
			{Type: field.ErrorTypeInvalid, Field: "aggregationRule.clusterRoleSelectors[0]", Detail: "invalid label selector."},
		},
	}, {
		name: "rule missing verbs",
		role: rbacv1.ClusterRole{Rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}}}},
		want: []wantErr{{Type: field.ErrorTypeRequired, Field: "rules[0].verbs", Detail: ""}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkErrs(t, validateClusterRole(&tc.role), tc.want)
		})
	}
}

func TestDefaultBindings(t *testing.T) {
	rb := &rbacv1.RoleBinding{
		RoleRef: rbacv1.RoleRef{Kind: "Role", Name: "reader"},
		Subjects: []rbacv1.Subject{
			{Kind: rbacv1.UserKind, Name: "jane"},
			{Kind: rbacv1.GroupKind, Name: "devs"},
			{Kind: rbacv1.ServiceAccountKind, Name: "builder"},
			{Kind: rbacv1.UserKind, Name: "x", APIGroup: "example.com"},
		},
	}
	defaultRoleBinding(rb)
	if rb.RoleRef.APIGroup != rbacv1.GroupName {
		t.Errorf("roleRef.apiGroup = %q", rb.RoleRef.APIGroup)
	}
	for i, want := range []string{rbacv1.GroupName, rbacv1.GroupName, "", "example.com"} {
		if got := rb.Subjects[i].APIGroup; got != want {
			t.Errorf("subject %d apiGroup = %q, want %q", i, got, want)
		}
	}
	crb := &rbacv1.ClusterRoleBinding{Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, Name: "ops"}}}
	defaultClusterRoleBinding(crb)
	if crb.RoleRef.APIGroup != rbacv1.GroupName || crb.Subjects[0].APIGroup != rbacv1.GroupName {
		t.Errorf("cluster role binding not defaulted: %+v", crb)
	}
}

func TestValidateRoleBinding(t *testing.T) {
	ref := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "reader"}
	tests := []struct {
		name     string
		ref      rbacv1.RoleRef
		subjects []rbacv1.Subject
		want     []wantErr
	}{{
		name:     "role",
		ref:      ref,
		subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "builder"}, {Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "jane@example.com"}},
	}, {
		name: "cluster role",
		ref:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
	}, {
		name: "bad role ref",
		ref:  rbacv1.RoleRef{APIGroup: "example.com", Kind: "Policy"},
		want: []wantErr{
			{Type: field.ErrorTypeNotSupported, Field: "roleRef.apiGroup", Detail: ""},
			{Type: field.ErrorTypeNotSupported, Field: "roleRef.kind", Detail: ""},
			{Type: field.ErrorTypeRequired, Field: "roleRef.name", Detail: ""},
		},
	}, {
		name: "role ref name not a path segment",
		ref:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "a/b"},
		want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "roleRef.name", Detail: ""}},
	}, {
		name: "bad subjects",
		ref:  ref,
		subjects: []rbacv1.Subject{
			{Kind: rbacv1.ServiceAccountKind, Name: "Builder_1", APIGroup: rbacv1.GroupName},
			{Kind: rbacv1.UserKind, Name: "jane"},
			{Kind: rbacv1.GroupKind, Name: "devs", APIGroup: "example.com"},
			{Kind: "Robot", Name: "r2"},
			{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName},
		},
		want: []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "subjects[0].name", Detail: ""},
			{Type: field.ErrorTypeNotSupported, Field: "subjects[0].apiGroup", Detail: ""},
			{Type: field.ErrorTypeNotSupported, Field: "subjects[1].apiGroup", Detail: ""},
			{Type: field.ErrorTypeNotSupported, Field: "subjects[2].apiGroup", Detail: ""},
			{Type: field.ErrorTypeNotSupported, Field: "subjects[3].kind", Detail: ""},
			{Type: field.ErrorTypeRequired, Field: "subjects[4].name", Detail: ""},
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkErrs(t, validateRoleBinding(&rbacv1.RoleBinding{RoleRef: tc.ref, Subjects: tc.subjects}), tc.want)
		})
	}
}

func TestValidateClusterRoleBinding(t *testing.T) {
	ref := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"}
	tests := []struct {
		name     string
		ref      rbacv1.RoleRef
		subjects []rbacv1.Subject
		want     []wantErr
	}{{
		name:     "valid",
		ref:      ref,
		subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "admin", Namespace: "kube-system"}, {Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "system:masters"}},
	}, {
		name: "roles are namespaced",
		ref:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "reader"},
		want: []wantErr{{Type: field.ErrorTypeNotSupported, Field: "roleRef.kind", Detail: ""}},
	}, {
		name:     "service account needs a namespace",
		ref:      ref,
		subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "admin"}},
		want:     []wantErr{{Type: field.ErrorTypeRequired, Field: "subjects[0].namespace", Detail: ""}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkErrs(t, validateClusterRoleBinding(&rbacv1.ClusterRoleBinding{RoleRef: tc.ref, Subjects: tc.subjects}), tc.want)
		})
	}
}

func TestBindingRoleRefImmutable(t *testing.T) {
	old := &rbacv1.RoleBinding{RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "reader"}}
	grown := old.DeepCopy()
	grown.Subjects = []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "jane"}}
	checkErrs(t, validateRoleBindingUpdate(grown, old), nil)

	repointed := old.DeepCopy()
	repointed.RoleRef.Name = "admin"
	checkErrs(t, validateRoleBindingUpdate(repointed, old), []wantErr{{Type: field.ErrorTypeInvalid, Field: "roleRef", Detail: "cannot change roleRef"}})

	oldCluster := &rbacv1.ClusterRoleBinding{RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"}}
	edited := oldCluster.DeepCopy()
	edited.RoleRef.Name = "edit"
	checkErrs(t, validateClusterRoleBindingUpdate(edited, oldCluster), []wantErr{{Type: field.ErrorTypeInvalid, Field: "roleRef", Detail: "cannot change roleRef"}})
}
