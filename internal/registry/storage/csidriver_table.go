package storage

import (
	"strings"
	"time"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilptr "k8s.io/utils/ptr"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/printers"
)

// csidriverTable prints csidrivers as upstream's `kubectl get` does.
var csidriverTable = &registry.Table{
	Columns: []metav1.TableColumnDefinition{
		{Name: "AttachRequired", Type: "boolean", Description: storagev1.CSIDriverSpec{}.SwaggerDoc()["attachRequired"]},
		{Name: "PodInfoOnMount", Type: "boolean", Description: storagev1.CSIDriverSpec{}.SwaggerDoc()["podInfoOnMount"]},
		{Name: "StorageCapacity", Type: "boolean", Description: storagev1.CSIDriverSpec{}.SwaggerDoc()["storageCapacity"]},
		{Name: "TokenRequests", Type: "string", Description: storagev1.CSIDriverSpec{}.SwaggerDoc()["tokenRequests"]},
		{Name: "RequiresRepublish", Type: "boolean", Description: storagev1.CSIDriverSpec{}.SwaggerDoc()["requiresRepublish"]},
		{Name: "Modes", Type: "string", Description: storagev1.CSIDriverSpec{}.SwaggerDoc()["volumeLifecycleModes"]},
		printers.AgeColumn(),
	},
	Row: registry.TypedRow(func(d *storagev1.CSIDriver, now time.Time) []any {
		// Unset fields print as the values they default to, except the
		// token requests, where unset and none differ.
		tokenRequests := "<unset>"
		if d.Spec.TokenRequests != nil {
			audiences := make([]string, 0, len(d.Spec.TokenRequests))
			for _, r := range d.Spec.TokenRequests {
				audiences = append(audiences, r.Audience)
			}
			tokenRequests = strings.Join(audiences, ",")
		}
		modes := make([]string, 0, len(d.Spec.VolumeLifecycleModes))
		for _, m := range d.Spec.VolumeLifecycleModes {
			modes = append(modes, string(m))
		}
		modesCell := strings.Join(modes, ",")
		if modesCell == "" {
			modesCell = "<none>"
		}
		return []any{
			utilptr.Deref(d.Spec.AttachRequired, true), utilptr.Deref(d.Spec.PodInfoOnMount, false),
			utilptr.Deref(d.Spec.StorageCapacity, false), tokenRequests, utilptr.Deref(d.Spec.RequiresRepublish, false),
			modesCell, printers.TranslateTimestampSince(d.CreationTimestamp, now),
		}
	}),
}
