package storage

import (
	"time"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/printers"
)

// csinodeTable prints csinodes as upstream's `kubectl get` does.
var csinodeTable = &registry.Table{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Drivers", Type: "integer", Description: "Drivers indicates the number of CSI drivers registered on the node"},
		printers.AgeColumn(),
	},
	Row: registry.TypedRow(func(n *storagev1.CSINode, now time.Time) []any {
		return []any{int64(len(n.Spec.Drivers)), printers.TranslateTimestampSince(n.CreationTimestamp, now)}
	}),
}
