package rbac

import (
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/registry"
)

// clusterrolebindingTable prints clusterrolebindings as upstream's `kubectl get` does.
var clusterrolebindingTable = &registry.Table{
	Columns: bindingColumns("clusterRoleBinding", rbacv1.ClusterRoleBinding{}.SwaggerDoc()["roleRef"]),
	Row: registry.TypedRow(func(b *rbacv1.ClusterRoleBinding, now time.Time) []any {
		return bindingRow(b.ObjectMeta, b.RoleRef, b.Subjects, now)
	}),
}

// clusterrolebindingFields lists the fields a field selector over clusterrolebindings may name.
var clusterrolebindingFields func(runtime.Object) fields.Set
