package rbac

import (
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/printers"
)

// clusterroleTable prints clusterroles as upstream's `kubectl get` does.
// Like roles, they get the apiserver's default NAME / CREATED AT table.
var clusterroleTable = &registry.Table{
	Columns: printers.CreatedAtColumns(),
	Row: registry.TypedRow(func(r *rbacv1.ClusterRole, now time.Time) []any {
		return printers.CreatedAtRow(r, now)
	}),
}

// clusterroleFields lists the fields a field selector over clusterroles may name.
var clusterroleFields func(runtime.Object) fields.Set
