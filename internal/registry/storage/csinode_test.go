package storage

import (
	"strings"
	"testing"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilptr "k8s.io/utils/ptr"
)

func validCSINode() *storagev1.CSINode {
	return &storagev1.CSINode{
		ObjectMeta: metav1.ObjectMeta{Name: "node-1"},
		Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{
			{Name: "ebs.csi.aws.com", NodeID: "i-0123", TopologyKeys: []string{"topology.ebs.csi.aws.com/zone"}, Allocatable: &storagev1.VolumeNodeResources{Count: utilptr.To[int32](25)}},
			{Name: "Example.COM", NodeID: "node-1"},
		}},
	}
}

func TestValidateCSINode(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*storagev1.CSINode)
		want   []wantErr
	}{{
		name:   "valid",
		mutate: func(*storagev1.CSINode) {},
	}, {
		name:   "no drivers",
		mutate: func(n *storagev1.CSINode) { n.Spec.Drivers = nil },
	}, {
		name: "bad driver names and node IDs",
		mutate: func(n *storagev1.CSINode) {
			n.Spec.Drivers[0].Name = ""
			n.Spec.Drivers[0].NodeID = ""
			n.Spec.Drivers[1].Name = strings.Repeat("a", 64)
			n.Spec.Drivers[1].NodeID = strings.Repeat("n", 257)
		},
		want: []wantErr{
			{Type: field.ErrorTypeRequired, Field: "spec.drivers[0].name"},
			{Type: field.ErrorTypeRequired, Field: "spec.drivers[0].nodeID"},
			{Type: field.ErrorTypeTooLong, Field: "spec.drivers[1].name"},
			{Type: field.ErrorTypeInvalid, Field: "spec.drivers[1].nodeID", Detail: "must be 256 characters or less"},
		},
	}, {
		name: "duplicate driver, negative count",
		mutate: func(n *storagev1.CSINode) {
			n.Spec.Drivers[1].Name = "ebs.csi.aws.com"
			n.Spec.Drivers[1].Allocatable = &storagev1.VolumeNodeResources{Count: utilptr.To[int32](-1)}
		},
		want: []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.drivers[1].allocatable.count", Detail: "must be greater than or equal to 0"},
			{Type: field.ErrorTypeDuplicate, Field: "spec.drivers[1].name"},
		},
	}, {
		name: "topology keys",
		mutate: func(n *storagev1.CSINode) {
			n.Spec.Drivers[0].TopologyKeys = []string{"zone", "", "zone", "bad key"}
		},
		want: []wantErr{
			{Type: field.ErrorTypeRequired, Field: "spec.drivers[0]"},
			{Type: field.ErrorTypeInvalid, Field: "spec.drivers[0]", Detail: "name part must be non-empty"},
			{Type: field.ErrorTypeInvalid, Field: "spec.drivers[0]"},
			{Type: field.ErrorTypeDuplicate, Field: "spec.drivers[0]"},
			{Type: field.ErrorTypeInvalid, Field: "spec.drivers[0]"},
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := validCSINode()
			tc.mutate(n)
			checkErrs(t, validateCSINode(n), tc.want)
		})
	}
}

func TestValidateCSINodeUpdate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*storagev1.CSINode)
		want   []wantErr
	}{{
		name: "allocatable count changes, drivers come and go",
		mutate: func(n *storagev1.CSINode) {
			n.Spec.Drivers[0].Allocatable.Count = utilptr.To[int32](39)
			n.Spec.Drivers[1] = storagev1.CSINodeDriver{Name: "nfs.csi.k8s.io", NodeID: "node-1"}
		},
	}, {
		name: "node ID and topology of a registered driver",
		mutate: func(n *storagev1.CSINode) {
			n.Spec.Drivers[0].NodeID = "i-4567"
			n.Spec.Drivers[1].TopologyKeys = []string{"zone"}
		},
		want: []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.drivers", Detail: "field is immutable"},
			{Type: field.ErrorTypeInvalid, Field: "spec.drivers", Detail: "field is immutable"},
		},
	}, {
		name: "new spec is checked too",
		mutate: func(n *storagev1.CSINode) {
			n.Spec.Drivers = append(n.Spec.Drivers, storagev1.CSINodeDriver{Name: "nfs.csi.k8s.io"})
		},
		want: []wantErr{{Type: field.ErrorTypeRequired, Field: "spec.drivers[2].nodeID"}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old := validCSINode()
			n := old.DeepCopy()
			tc.mutate(n)
			checkErrs(t, validateCSINodeUpdate(n, old), tc.want)
		})
	}

	// Upstream shows its internal type, without the allocatable count.
	old := validCSINode()
	n := old.DeepCopy()
	n.Spec.Drivers[0].NodeID = "i-4567"
	want := `spec.drivers: Invalid value: {"Name":"ebs.csi.aws.com","NodeID":"i-4567","TopologyKeys":["topology.ebs.csi.aws.com/zone"],"Allocatable":null}: field is immutable`
	if errs := validateCSINodeUpdate(n, old); len(errs) != 1 || errs[0].Error() != want {
		t.Errorf("got %v\nwant %s", errs, want)
	}
}

// With CSIVolumeHealth off, /status keeps no storage health that was not
// already stored.
func TestPrepareCSINodeStatusUpdate(t *testing.T) {
	old := validCSINode()
	n := old.DeepCopy()
	n.Status.StorageHealth = []storagev1.StorageHealth{{Name: "ebs.csi.aws.com"}}
	prepareCSINodeStatusUpdate(n, old)
	if n.Status.StorageHealth != nil {
		t.Errorf("storage health kept: %v", n.Status.StorageHealth)
	}
	old.Status.StorageHealth = []storagev1.StorageHealth{{Name: "ebs.csi.aws.com"}}
	n = old.DeepCopy()
	prepareCSINodeStatusUpdate(n, old)
	if len(n.Status.StorageHealth) != 1 {
		t.Errorf("stored storage health dropped")
	}
}
