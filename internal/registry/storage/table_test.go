package storage

import (
	"testing"
	"time"

	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilptr "k8s.io/utils/ptr"

	"github.com/orca-project/orca/internal/registry/printers/printerstest"
)

var col = printerstest.Col

func TestCSIDriverTable(t *testing.T) {
	printerstest.CheckColumns(t, csidriverTable, []printerstest.Column{
		col("AttachRequired", "boolean", 0), col("PodInfoOnMount", "boolean", 0), col("StorageCapacity", "boolean", 0),
		col("TokenRequests", "string", 0), col("RequiresRepublish", "boolean", 0), col("Modes", "string", 0), col("Age", "string", 0),
	})
	// Unset fields print as their defaults.
	printerstest.CheckRow(t, csidriverTable, &storagev1.CSIDriver{}, tableNow, []any{true, false, false, "<unset>", false, "<none>", "<unknown>"})

	d := validCSIDriver()
	d.CreationTimestamp = metav1.NewTime(tableNow.Add(-3 * time.Hour))
	d.Spec.AttachRequired = utilptr.To(false)
	d.Spec.VolumeLifecycleModes = append(d.Spec.VolumeLifecycleModes, storagev1.VolumeLifecycleEphemeral)
	d.Spec.TokenRequests = []storagev1.TokenRequest{{Audience: "vault"}, {Audience: ""}}
	printerstest.CheckRow(t, csidriverTable, d, tableNow, []any{false, false, false, "vault,", false, "Persistent,Ephemeral", "3h"})
	d.Spec.TokenRequests = []storagev1.TokenRequest{}
	printerstest.CheckCells(t, csidriverTable, d, tableNow, map[string]any{"TokenRequests": ""})
}

func TestCSINodeTable(t *testing.T) {
	printerstest.CheckColumns(t, csinodeTable, []printerstest.Column{col("Drivers", "integer", 0), col("Age", "string", 0)})
	n := validCSINode()
	n.CreationTimestamp = metav1.NewTime(tableNow.Add(-90 * time.Second))
	printerstest.CheckRow(t, csinodeTable, n, tableNow, []any{int64(2), "90s"})
	printerstest.CheckRow(t, csinodeTable, &storagev1.CSINode{}, tableNow, []any{int64(0), "<unknown>"})
}

func TestCSIStorageCapacityTable(t *testing.T) {
	printerstest.CheckColumns(t, csistoragecapacityTable, []printerstest.Column{col("StorageClassName", "string", 0), col("Capacity", "string", 0)})
	c := validCSIStorageCapacity()
	printerstest.CheckRow(t, csistoragecapacityTable, c, tableNow, []any{"fast", "10Gi"})
	c.Capacity = nil
	printerstest.CheckRow(t, csistoragecapacityTable, c, tableNow, []any{"fast", "<unset>"})
	c.Capacity = resource.NewMilliQuantity(1500, resource.DecimalSI)
	printerstest.CheckCells(t, csistoragecapacityTable, c, tableNow, map[string]any{"Capacity": "1500m"})
}

// Upstream declares the attacher column in the format of a name, which
// the shared column check refuses, so the columns are checked here.
func TestVolumeAttachmentTable(t *testing.T) {
	want := []printerstest.Column{
		col("Attacher", "string", 0), col("PV", "string", 0), col("Node", "string", 0), col("Attached", "boolean", 0), col("Age", "string", 0),
	}
	cols := volumeattachmentTable.Columns
	if len(cols) != len(want) {
		t.Fatalf("columns = %+v", cols)
	}
	for i, c := range cols {
		if c.Name != want[i].Name || c.Type != want[i].Type || c.Priority != want[i].Priority || c.Description == "" {
			t.Errorf("column %d = %+v, want %+v", i, c, want[i])
		}
		wantFormat := ""
		if c.Name == "Attacher" {
			wantFormat = "name"
		}
		if c.Format != wantFormat {
			t.Errorf("column %s has format %q, want %q", c.Name, c.Format, wantFormat)
		}
	}
	va := validVolumeAttachment()
	va.CreationTimestamp = metav1.NewTime(tableNow.Add(-5 * 24 * time.Hour))
	va.Status.Attached = true
	printerstest.CheckRow(t, volumeattachmentTable, va, tableNow, []any{"ebs.csi.aws.com", "pv-1", "node-1", true, "5d"})
	va.Spec.Source = storagev1.VolumeAttachmentSource{InlineVolumeSpec: inlineSpec()}
	va.Status.Attached = false
	printerstest.CheckRow(t, volumeattachmentTable, va, tableNow, []any{"ebs.csi.aws.com", "", "node-1", false, "5d"})
}

func TestVolumeAttributesClassTable(t *testing.T) {
	printerstest.CheckColumns(t, volumeattributesclassTable, []printerstest.Column{col("DriverName", "string", 0), col("Age", "string", 0)})
	c := validVolumeAttributesClass()
	c.CreationTimestamp = metav1.NewTime(tableNow.Add(-10 * time.Minute))
	printerstest.CheckRow(t, volumeattributesclassTable, c, tableNow, []any{"ebs.csi.aws.com", "10m"})
}
