package rbac

import (
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/registry"
)

// rolebindingTable prints rolebindings as upstream's `kubectl get` does.
var rolebindingTable = &registry.Table{
	Columns: bindingColumns("roleBinding", rbacv1.RoleBinding{}.SwaggerDoc()["roleRef"]),
	Row: registry.TypedRow(func(b *rbacv1.RoleBinding, now time.Time) []any {
		return bindingRow(b.ObjectMeta, b.RoleRef, b.Subjects, now)
	}),
}

// rolebindingFields lists the fields a field selector over rolebindings may name.
var rolebindingFields func(runtime.Object) fields.Set
