package storage

import (
	"testing"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func validVolumeAttributesClass() *storagev1.VolumeAttributesClass {
	return &storagev1.VolumeAttributesClass{
		ObjectMeta: metav1.ObjectMeta{Name: "gold"},
		DriverName: "ebs.csi.aws.com",
		Parameters: map[string]string{"iops": "4000"},
	}
}

func TestValidateVolumeAttributesClass(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*storagev1.VolumeAttributesClass)
		want   []wantErr
	}{{
		name:   "valid",
		mutate: func(*storagev1.VolumeAttributesClass) {},
	}, {
		name:   "upper-case driver",
		mutate: func(c *storagev1.VolumeAttributesClass) { c.DriverName = "EBS.csi.aws.com" },
	}, {
		name: "no driver, no parameters",
		mutate: func(c *storagev1.VolumeAttributesClass) {
			c.DriverName, c.Parameters = "", nil
		},
		want: []wantErr{
			{Type: field.ErrorTypeRequired, Field: "driverName"},
			{Type: field.ErrorTypeRequired, Field: "parameters", Detail: "must contain at least one key/value pair"},
		},
	}, {
		name:   "empty key",
		mutate: func(c *storagev1.VolumeAttributesClass) { c.Parameters = map[string]string{"": "x"} },
		want:   []wantErr{{Type: field.ErrorTypeInvalid, Field: "parameters", Detail: "field can not be empty."}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := validVolumeAttributesClass()
			tc.mutate(c)
			checkErrs(t, validateVolumeAttributesClass(c), tc.want)
		})
	}
}

func TestValidateVolumeAttributesClassUpdate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*storagev1.VolumeAttributesClass)
		want   []wantErr
	}{{
		name:   "labels",
		mutate: func(c *storagev1.VolumeAttributesClass) { c.Labels = map[string]string{"tier": "gold"} },
	}, {
		// Upstream reports the change before the new class's own errors.
		name: "driver and parameters",
		mutate: func(c *storagev1.VolumeAttributesClass) {
			c.DriverName = ""
			c.Parameters["throughput"] = "125"
		},
		want: []wantErr{
			{Type: field.ErrorTypeForbidden, Field: "driverName", Detail: "updates to driverName are forbidden."},
			{Type: field.ErrorTypeForbidden, Field: "parameters", Detail: "updates to parameters are forbidden."},
			{Type: field.ErrorTypeRequired, Field: "driverName"},
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old := validVolumeAttributesClass()
			c := old.DeepCopy()
			tc.mutate(c)
			checkErrs(t, validateVolumeAttributesClassUpdate(c, old), tc.want)
		})
	}
}
