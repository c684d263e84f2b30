package storage

import (
	"time"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orca-project/orca/internal/registry"
)

// csistoragecapacityTable prints csistoragecapacities as upstream's
// `kubectl get` does: upstream's printer has no AGE column for them.
var csistoragecapacityTable = &registry.Table{
	Columns: []metav1.TableColumnDefinition{
		{Name: "StorageClassName", Type: "string", Description: storagev1.CSIStorageCapacity{}.SwaggerDoc()["storageClassName"]},
		{Name: "Capacity", Type: "string", Description: storagev1.CSIStorageCapacity{}.SwaggerDoc()["capacity"]},
	},
	Row: registry.TypedRow(func(c *storagev1.CSIStorageCapacity, _ time.Time) []any {
		capacity := "<unset>"
		if c.Capacity != nil {
			capacity = c.Capacity.String()
		}
		return []any{c.StorageClassName, capacity}
	}),
}
