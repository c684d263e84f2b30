package rbac

import (
	"context"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/orca-project/orca/internal/auth/bootstrappolicy"
	"github.com/orca-project/orca/internal/controller/clusterroleaggregation"
)

// BenchmarkAuthorizeBootstrap is one authorization of an ordinary user's
// create under upstream's bootstrap policy plus a RoleBinding to edit: the
// RBAC work every request of a user outside system:masters pays.
func BenchmarkAuthorizeBootstrap(b *testing.B) {
	src := &fakeSource{clusterRoles: map[string]*rbacv1.ClusterRole{}, roles: map[string]*rbacv1.Role{}}
	roles := bootstrappolicy.ClusterRoles()
	var all []*rbacv1.ClusterRole
	for i := range roles {
		all = append(all, &roles[i])
	}
	for _, r := range all {
		if r.AggregationRule != nil {
			r.Rules, _ = clusterroleaggregation.Aggregate(r, all)
		}
		src.clusterRoles[r.Name] = r
	}
	for _, crb := range bootstrappolicy.ClusterRoleBindings() {
		src.crbs = append(src.crbs, &crb)
	}
	src.rbs = append(src.rbs, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: "edit"},
		RoleRef:    rbacv1.RoleRef{Kind: "ClusterRole", Name: "edit"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "bench-user"}},
	})
	a := New(src)
	attrs := authorizer.AttributesRecord{
		User: &user.DefaultInfo{Name: "bench-user", Groups: []string{"system:authenticated"}},
		Verb: "create", Resource: "configmaps", Namespace: "bench", ResourceRequest: true,
	}
	if d, _, _ := a.Authorize(context.Background(), attrs); d != authorizer.DecisionAllow {
		b.Fatal("bench-user may not create configmaps")
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		a.Authorize(context.Background(), attrs)
	}
}
