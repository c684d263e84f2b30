package node

import (
	"time"

	nodev1 "k8s.io/api/node/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/printers"
)

// runtimeclassTable prints runtimeclasses as upstream's `kubectl get`
// does. Upstream looks the HANDLER description up in ObjectMeta's docs,
// where it finds nothing; this one is the field's own.
var runtimeclassTable = &registry.Table{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Handler", Type: "string", Description: nodev1.RuntimeClass{}.SwaggerDoc()["handler"]},
		printers.AgeColumn(),
	},
	Row: registry.TypedRow(func(rc *nodev1.RuntimeClass, now time.Time) []any {
		return []any{rc.Handler, printers.TranslateTimestampSince(rc.CreationTimestamp, now)}
	}),
}
