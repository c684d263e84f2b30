package coordination

import (
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/printers"
)

// leaseTable prints leases as upstream's `kubectl get` does.
var leaseTable = &registry.Table{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Holder", Type: "string", Description: coordinationv1.LeaseSpec{}.SwaggerDoc()["holderIdentity"]},
		printers.AgeColumn(),
	},
	Row: registry.TypedRow(func(l *coordinationv1.Lease, now time.Time) []any {
		holder := ""
		if l.Spec.HolderIdentity != nil {
			holder = *l.Spec.HolderIdentity
		}
		return []any{holder, printers.TranslateTimestampSince(l.CreationTimestamp, now)}
	}),
}

// leaseFields lists the fields a field selector over leases may name.
var leaseFields func(runtime.Object) fields.Set
