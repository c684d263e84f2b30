package clusterroleaggregation

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func role(name string, labels map[string]string, rules ...rbacv1.PolicyRule) *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Rules: rules}
}

func aggregating(name string, labels map[string]string, selectors ...metav1.LabelSelector) *rbacv1.ClusterRole {
	r := role(name, labels)
	r.AggregationRule = &rbacv1.AggregationRule{ClusterRoleSelectors: selectors}
	return r
}

func matching(k, v string) metav1.LabelSelector {
	return metav1.LabelSelector{MatchLabels: map[string]string{k: v}}
}

func get(resources ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: resources}
}

func TestAggregate(t *testing.T) {
	view := map[string]string{"aggregate-to-view": "true"}
	edit := map[string]string{"aggregate-to-edit": "true"}
	for _, tt := range []struct {
		name    string
		role    *rbacv1.ClusterRole
		all     []*rbacv1.ClusterRole
		want    []rbacv1.PolicyRule
		wantErr bool
	}{
		{
			name: "no aggregation rule",
			role: role("plain", nil, get("pods")),
			want: []rbacv1.PolicyRule{},
		},
		{
			name: "no role matches",
			role: aggregating("view", nil, matching("aggregate-to-view", "true")),
			all:  []*rbacv1.ClusterRole{role("other", nil, get("pods"))},
			want: []rbacv1.PolicyRule{},
		},
		{
			name: "matching roles by name, each rule once",
			role: aggregating("view", nil, matching("aggregate-to-view", "true")),
			all: []*rbacv1.ClusterRole{
				role("z-extra", view, get("secrets"), get("pods")),
				role("a-first", view, get("pods"), get("services")),
				role("unlabelled", nil, get("nodes")),
			},
			want: []rbacv1.PolicyRule{get("pods"), get("services"), get("secrets")},
		},
		{
			name: "never itself, even when it matches",
			role: aggregating("edit", view, matching("aggregate-to-view", "true"), matching("aggregate-to-edit", "true")),
			all: []*rbacv1.ClusterRole{
				aggregating("edit", view, matching("aggregate-to-view", "true")),
				role("viewer", view, get("pods")),
				role("editor", edit, get("secrets")),
			},
			want: []rbacv1.PolicyRule{get("pods"), get("secrets")},
		},
		{
			// Selectors are taken in order: the second one's roles come
			// after all of the first's, whatever their names.
			name: "selectors in order",
			role: aggregating("admin", nil, matching("aggregate-to-edit", "true"), matching("aggregate-to-view", "true")),
			all: []*rbacv1.ClusterRole{
				role("a-view", view, get("pods")),
				role("b-edit", edit, get("secrets"), get("pods")),
			},
			want: []rbacv1.PolicyRule{get("secrets"), get("pods")},
		},
		{
			name: "an aggregated role's current rules count like any other's",
			role: aggregating("admin", nil, matching("aggregate-to-admin", "true")),
			all: []*rbacv1.ClusterRole{
				func() *rbacv1.ClusterRole {
					r := aggregating("edit", map[string]string{"aggregate-to-admin": "true"}, matching("aggregate-to-edit", "true"))
					r.Rules = []rbacv1.PolicyRule{get("pods")}
					return r
				}(),
			},
			want: []rbacv1.PolicyRule{get("pods")},
		},
		{
			name: "match expressions",
			role: aggregating("view", nil, metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "b"}},
			}}),
			all: []*rbacv1.ClusterRole{
				role("x", map[string]string{"tier": "b"}, get("pods")),
				role("y", map[string]string{"tier": "c"}, get("nodes")),
			},
			want: []rbacv1.PolicyRule{get("pods")},
		},
		{
			name: "invalid selector",
			role: aggregating("view", nil, metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "tier", Operator: "Bogus"},
			}}),
			wantErr: true,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Aggregate(tt.role, tt.all)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); !tt.wantErr && diff != "" {
				t.Errorf("rules (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAggregateCopiesRules(t *testing.T) {
	src := role("viewer", map[string]string{"v": "1"}, get("pods"))
	got, err := Aggregate(aggregating("view", nil, matching("v", "1")), []*rbacv1.ClusterRole{src})
	if err != nil {
		t.Fatal(err)
	}
	got[0].Resources[0] = "changed"
	if src.Rules[0].Resources[0] != "pods" {
		t.Error("Aggregate shares slices with its input (a shared cache object)")
	}
}
