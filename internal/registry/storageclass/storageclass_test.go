package storageclass

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilptr "k8s.io/utils/ptr"

	"github.com/orca-project/orca/internal/registry/registrytest"
)

// wantErr and checkErrs are the shared validation-test helpers.
type wantErr = registrytest.WantErr

var checkErrs = registrytest.CheckErrs

func TestDefaultStorageClass(t *testing.T) {
	sc := &storagev1.StorageClass{}
	defaultStorageClass(sc)
	if *sc.ReclaimPolicy != corev1.PersistentVolumeReclaimDelete || *sc.VolumeBindingMode != storagev1.VolumeBindingImmediate {
		t.Errorf("got %s/%s", *sc.ReclaimPolicy, *sc.VolumeBindingMode)
	}
	kept := &storagev1.StorageClass{
		ReclaimPolicy:     utilptr.To(corev1.PersistentVolumeReclaimRetain),
		VolumeBindingMode: utilptr.To(storagev1.VolumeBindingWaitForFirstConsumer),
	}
	defaultStorageClass(kept)
	if *kept.ReclaimPolicy != corev1.PersistentVolumeReclaimRetain || *kept.VolumeBindingMode != storagev1.VolumeBindingWaitForFirstConsumer {
		t.Errorf("explicit values overwritten")
	}
}

func validStorageClass() *storagev1.StorageClass {
	sc := &storagev1.StorageClass{
		ObjectMeta:  metav1.ObjectMeta{Name: "fast"},
		Provisioner: "ebs.csi.aws.com",
		Parameters:  map[string]string{"type": "gp3"},
		AllowedTopologies: []corev1.TopologySelectorTerm{{MatchLabelExpressions: []corev1.TopologySelectorLabelRequirement{
			{Key: "topology.kubernetes.io/zone", Values: []string{"us-east-1a", "us-east-1b"}},
		}}},
	}
	defaultStorageClass(sc)
	return sc
}

func TestValidateStorageClass(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*storagev1.StorageClass)
		want   []wantErr
	}{{
		name:   "valid",
		mutate: func(*storagev1.StorageClass) {},
	}, {
		name:   "upper-case provisioner",
		mutate: func(sc *storagev1.StorageClass) { sc.Provisioner = "Example.COM/NFS" },
	}, {
		name:   "missing provisioner",
		mutate: func(sc *storagev1.StorageClass) { sc.Provisioner = "" },
		want:   []wantErr{{Type: field.ErrorTypeRequired, Field: "provisioner", Detail: ""}},
	}, {
		name:   "malformed provisioner",
		mutate: func(sc *storagev1.StorageClass) { sc.Provisioner = "not a/valid/name" },
		want:   []wantErr{{Type: field.ErrorTypeInvalid, Field: "provisioner", Detail: ""}},
	}, {
		name:   "empty parameter key",
		mutate: func(sc *storagev1.StorageClass) { sc.Parameters[""] = "x" },
		want:   []wantErr{{Type: field.ErrorTypeInvalid, Field: "parameters", Detail: "field can not be empty."}},
	}, {
		name: "too many parameters",
		mutate: func(sc *storagev1.StorageClass) {
			for i := 0; i < 512; i++ {
				sc.Parameters[fmt.Sprintf("k%d", i)] = "v"
			}
		},
		want: []wantErr{{Type: field.ErrorTypeTooLong, Field: "parameters", Detail: ""}},
	}, {
		name:   "parameters too large",
		mutate: func(sc *storagev1.StorageClass) { sc.Parameters["blob"] = strings.Repeat("x", 256*1024) },
		want:   []wantErr{{Type: field.ErrorTypeTooLong, Field: "parameters", Detail: ""}},
	}, {
		name:   "recycle reclaim policy",
		mutate: func(sc *storagev1.StorageClass) { sc.ReclaimPolicy = utilptr.To(corev1.PersistentVolumeReclaimRecycle) },
		want:   []wantErr{{Type: field.ErrorTypeNotSupported, Field: "reclaimPolicy", Detail: ""}},
	}, {
		name:   "missing binding mode",
		mutate: func(sc *storagev1.StorageClass) { sc.VolumeBindingMode = nil },
		want:   []wantErr{{Type: field.ErrorTypeRequired, Field: "volumeBindingMode", Detail: ""}},
	}, {
		name: "unknown binding mode",
		mutate: func(sc *storagev1.StorageClass) {
			sc.VolumeBindingMode = utilptr.To[storagev1.VolumeBindingMode]("Later")
		},
		want: []wantErr{{Type: field.ErrorTypeNotSupported, Field: "volumeBindingMode", Detail: ""}},
	}, {
		name: "topology terms",
		mutate: func(sc *storagev1.StorageClass) {
			sc.AllowedTopologies = append(sc.AllowedTopologies,
				corev1.TopologySelectorTerm{MatchLabelExpressions: []corev1.TopologySelectorLabelRequirement{
					{Key: "topology.kubernetes.io/zone", Values: []string{"us-east-1b", "us-east-1a"}},
				}},
				corev1.TopologySelectorTerm{MatchLabelExpressions: []corev1.TopologySelectorLabelRequirement{
					{Key: "bad key!", Values: []string{"a", "a"}},
					{Key: "rack"},
					{Key: "rack", Values: []string{"r1"}},
				}},
			)
		},
		want: []wantErr{
			{Type: field.ErrorTypeDuplicate, Field: "allowedTopologies[1].matchLabelExpressions", Detail: ""},
			{Type: field.ErrorTypeDuplicate, Field: "allowedTopologies[2].matchLabelExpressions[0].values[1]", Detail: ""},
			{Type: field.ErrorTypeInvalid, Field: "allowedTopologies[2].matchLabelExpressions[0].key", Detail: ""},
			{Type: field.ErrorTypeRequired, Field: "allowedTopologies[2].matchLabelExpressions[1].values", Detail: ""},
			{Type: field.ErrorTypeDuplicate, Field: "allowedTopologies[2].matchLabelExpressions[2].key", Detail: ""},
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sc := validStorageClass()
			tc.mutate(sc)
			checkErrs(t, validateStorageClass(sc), tc.want)
		})
	}
}

func TestValidateStorageClassUpdate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*storagev1.StorageClass)
		want   []wantErr
	}{{
		name: "expansion and mount options may change",
		mutate: func(sc *storagev1.StorageClass) {
			sc.AllowVolumeExpansion = utilptr.To(true)
			sc.MountOptions = []string{"noatime"}
		},
	}, {
		name: "fixed fields",
		mutate: func(sc *storagev1.StorageClass) {
			sc.Parameters["type"] = "io2"
			sc.Provisioner = "other.example.com"
			sc.ReclaimPolicy = utilptr.To(corev1.PersistentVolumeReclaimRetain)
			sc.VolumeBindingMode = utilptr.To(storagev1.VolumeBindingWaitForFirstConsumer)
		},
		want: []wantErr{
			{Type: field.ErrorTypeForbidden, Field: "parameters", Detail: "updates to parameters are forbidden."},
			{Type: field.ErrorTypeForbidden, Field: "provisioner", Detail: "updates to provisioner are forbidden."},
			{Type: field.ErrorTypeForbidden, Field: "reclaimPolicy", Detail: "updates to reclaimPolicy are forbidden."},
			{Type: field.ErrorTypeInvalid, Field: "volumeBindingMode", Detail: "field is immutable"},
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old := validStorageClass()
			sc := old.DeepCopy()
			tc.mutate(sc)
			checkErrs(t, validateStorageClassUpdate(sc, old), tc.want)
		})
	}
}
