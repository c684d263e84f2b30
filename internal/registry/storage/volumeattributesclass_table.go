package storage

import (
	"time"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/printers"
)

// volumeattributesclassTable prints volumeattributesclasses as upstream's
// `kubectl get` does.
var volumeattributesclassTable = &registry.Table{
	Columns: []metav1.TableColumnDefinition{
		{Name: "DriverName", Type: "string", Description: storagev1.VolumeAttributesClass{}.SwaggerDoc()["driverName"]},
		printers.AgeColumn(),
	},
	Row: registry.TypedRow(func(c *storagev1.VolumeAttributesClass, now time.Time) []any {
		return []any{c.DriverName, printers.TranslateTimestampSince(c.CreationTimestamp, now)}
	}),
}
