package storagemigration

import (
	"time"

	svmv1 "k8s.io/api/storagemigration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orca-project/orca/internal/registry"
)

// migrationTable prints storageversionmigrations as upstream's `kubectl
// get` does: the resource and where its migration stands, with no AGE.
var migrationTable = &registry.Table{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Resource", Type: "string", Description: "GroupResource to migrate"},
		{Name: "Status", Type: "string", Description: "Status of the migration"},
	},
	Row: registry.TypedRow(func(m *svmv1.StorageVersionMigration, _ time.Time) []any {
		// The last true condition of the three a migration goes through.
		status := "Unknown"
		for _, c := range m.Status.Conditions {
			if c.Status != metav1.ConditionTrue {
				continue
			}
			switch svmv1.MigrationConditionType(c.Type) {
			case svmv1.MigrationRunning, svmv1.MigrationFailed, svmv1.MigrationSucceeded:
				status = c.Type
			}
		}
		return []any{m.Spec.Resource.String(), status}
	}),
}
