package rbac

import (
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/printers"
)

// roleTable prints roles as upstream's `kubectl get` does. Upstream has no
// printer for roles and falls back to the apiserver's default NAME /
// CREATED AT table.
var roleTable = &registry.Table{
	Columns: printers.CreatedAtColumns(),
	Row: registry.TypedRow(func(r *rbacv1.Role, now time.Time) []any {
		return printers.CreatedAtRow(r, now)
	}),
}

// roleFields lists the fields a field selector over roles may name.
var roleFields func(runtime.Object) fields.Set
