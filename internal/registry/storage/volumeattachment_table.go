package storage

import (
	"time"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilptr "k8s.io/utils/ptr"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/printers"
)

// volumeattachmentTable prints volumeattachments as upstream's `kubectl
// get` does. Upstream declares the attacher column in the format of a
// name; kubectl only looks for the first such column, the server's NAME.
var volumeattachmentTable = &registry.Table{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Attacher", Type: "string", Format: "name", Description: storagev1.VolumeAttachmentSpec{}.SwaggerDoc()["attacher"]},
		{Name: "PV", Type: "string", Description: storagev1.VolumeAttachmentSource{}.SwaggerDoc()["persistentVolumeName"]},
		{Name: "Node", Type: "string", Description: storagev1.VolumeAttachmentSpec{}.SwaggerDoc()["nodeName"]},
		{Name: "Attached", Type: "boolean", Description: storagev1.VolumeAttachmentStatus{}.SwaggerDoc()["attached"]},
		printers.AgeColumn(),
	},
	Row: registry.TypedRow(func(va *storagev1.VolumeAttachment, now time.Time) []any {
		return []any{va.Spec.Attacher, utilptr.Deref(va.Spec.Source.PersistentVolumeName, ""), va.Spec.NodeName,
			va.Status.Attached, printers.TranslateTimestampSince(va.CreationTimestamp, now)}
	}),
}
