package storage

import (
	"testing"

	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func validCSIStorageCapacity() *storagev1.CSIStorageCapacity {
	return &storagev1.CSIStorageCapacity{
		ObjectMeta:       metav1.ObjectMeta{Name: "csisc-abcde", Namespace: "kube-system"},
		NodeTopology:     &metav1.LabelSelector{MatchLabels: map[string]string{"topology.kubernetes.io/zone": "a"}},
		StorageClassName: "fast",
		Capacity:         resource.NewQuantity(10<<30, resource.BinarySI),
	}
}

func TestValidateCSIStorageCapacity(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*storagev1.CSIStorageCapacity)
		want   []wantErr
	}{{
		name:   "valid",
		mutate: func(*storagev1.CSIStorageCapacity) {},
	}, {
		name: "no topology, capacity or maximum",
		mutate: func(c *storagev1.CSIStorageCapacity) {
			c.NodeTopology, c.Capacity = nil, nil
		},
	}, {
		name: "bad selector, class and capacity; a negative maximum is not checked",
		mutate: func(c *storagev1.CSIStorageCapacity) {
			c.NodeTopology.MatchLabels["zone"] = "not a value"
			c.StorageClassName = ""
			c.Capacity = resource.NewQuantity(-1, resource.BinarySI)
			c.MaximumVolumeSize = resource.NewQuantity(-1, resource.BinarySI)
		},
		want: []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "nodeTopology.matchLabels"},
			{Type: field.ErrorTypeInvalid, Field: "storageClassName"},
			{Type: field.ErrorTypeInvalid, Field: "capacity", Detail: "must be greater than or equal to 0"},
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := validCSIStorageCapacity()
			tc.mutate(c)
			checkErrs(t, validateCSIStorageCapacity(c), tc.want)
		})
	}
}

func TestValidateCSIStorageCapacityUpdate(t *testing.T) {
	tests := []struct {
		name   string
		old    func(*storagev1.CSIStorageCapacity)
		mutate func(*storagev1.CSIStorageCapacity)
		want   []wantErr
	}{{
		name: "capacity changes",
		mutate: func(c *storagev1.CSIStorageCapacity) {
			c.Capacity = resource.NewQuantity(1<<30, resource.BinarySI)
			c.MaximumVolumeSize = resource.NewQuantity(1<<30, resource.BinarySI)
		},
	}, {
		name: "topology and class",
		mutate: func(c *storagev1.CSIStorageCapacity) {
			c.NodeTopology.MatchLabels["topology.kubernetes.io/zone"] = "b"
			c.StorageClassName = "slow"
		},
		want: []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "nodeTopology", Detail: "field is immutable"},
			{Type: field.ErrorTypeInvalid, Field: "storageClassName", Detail: "field is immutable"},
		},
	}, {
		name: "an expression value already stored may stay",
		old: func(c *storagev1.CSIStorageCapacity) {
			c.NodeTopology.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "rack", Operator: metav1.LabelSelectorOpIn, Values: []string{"not a value"}}}
		},
		mutate: func(c *storagev1.CSIStorageCapacity) { c.Capacity = nil },
	}, {
		name: "a match label value may not",
		old: func(c *storagev1.CSIStorageCapacity) {
			c.NodeTopology.MatchLabels["rack"] = "not a value"
		},
		mutate: func(c *storagev1.CSIStorageCapacity) {},
		want:   []wantErr{{Type: field.ErrorTypeInvalid, Field: "nodeTopology.matchLabels"}},
	}, {
		name: "nor a new expression value",
		mutate: func(c *storagev1.CSIStorageCapacity) {
			c.NodeTopology.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "rack", Operator: metav1.LabelSelectorOpIn, Values: []string{"not a value"}}}
		},
		want: []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "nodeTopology.matchExpressions[0].values[0]"},
			{Type: field.ErrorTypeInvalid, Field: "nodeTopology", Detail: "field is immutable"},
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old := validCSIStorageCapacity()
			if tc.old != nil {
				tc.old(old)
			}
			c := old.DeepCopy()
			tc.mutate(c)
			checkErrs(t, validateCSIStorageCapacityUpdate(c, old), tc.want)
		})
	}
}
