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
)

type wantErr struct {
	typ    field.ErrorType
	field  string
	detail string
}

func checkErrs(t *testing.T, got field.ErrorList, want []wantErr) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d errors, want %d: %v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.Type != w.typ || g.Field != w.field || (w.detail != "" && g.Detail != w.detail) {
			t.Errorf("error %d: got %s %q (%q), want %s %q (%q)", i, g.Type, g.Field, g.Detail, w.typ, w.field, w.detail)
		}
	}
}

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
		want:   []wantErr{{field.ErrorTypeRequired, "provisioner", ""}},
	}, {
		name:   "malformed provisioner",
		mutate: func(sc *storagev1.StorageClass) { sc.Provisioner = "not a/valid/name" },
		want:   []wantErr{{field.ErrorTypeInvalid, "provisioner", ""}},
	}, {
		name:   "empty parameter key",
		mutate: func(sc *storagev1.StorageClass) { sc.Parameters[""] = "x" },
		want:   []wantErr{{field.ErrorTypeInvalid, "parameters", "field can not be empty."}},
	}, {
		name: "too many parameters",
		mutate: func(sc *storagev1.StorageClass) {
			for i := 0; i < 512; i++ {
				sc.Parameters[fmt.Sprintf("k%d", i)] = "v"
			}
		},
		want: []wantErr{{field.ErrorTypeTooLong, "parameters", ""}},
	}, {
		name:   "parameters too large",
		mutate: func(sc *storagev1.StorageClass) { sc.Parameters["blob"] = strings.Repeat("x", 256*1024) },
		want:   []wantErr{{field.ErrorTypeTooLong, "parameters", ""}},
	}, {
		name:   "recycle reclaim policy",
		mutate: func(sc *storagev1.StorageClass) { sc.ReclaimPolicy = utilptr.To(corev1.PersistentVolumeReclaimRecycle) },
		want:   []wantErr{{field.ErrorTypeNotSupported, "reclaimPolicy", ""}},
	}, {
		name:   "missing binding mode",
		mutate: func(sc *storagev1.StorageClass) { sc.VolumeBindingMode = nil },
		want:   []wantErr{{field.ErrorTypeRequired, "volumeBindingMode", ""}},
	}, {
		name: "unknown binding mode",
		mutate: func(sc *storagev1.StorageClass) {
			sc.VolumeBindingMode = utilptr.To[storagev1.VolumeBindingMode]("Later")
		},
		want: []wantErr{{field.ErrorTypeNotSupported, "volumeBindingMode", ""}},
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
			{field.ErrorTypeDuplicate, "allowedTopologies[1].matchLabelExpressions", ""},
			{field.ErrorTypeDuplicate, "allowedTopologies[2].matchLabelExpressions[0].values[1]", ""},
			{field.ErrorTypeInvalid, "allowedTopologies[2].matchLabelExpressions[0].key", ""},
			{field.ErrorTypeRequired, "allowedTopologies[2].matchLabelExpressions[1].values", ""},
			{field.ErrorTypeDuplicate, "allowedTopologies[2].matchLabelExpressions[2].key", ""},
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
			{field.ErrorTypeForbidden, "parameters", "updates to parameters are forbidden."},
			{field.ErrorTypeForbidden, "provisioner", "updates to provisioner are forbidden."},
			{field.ErrorTypeForbidden, "reclaimPolicy", "updates to reclaimPolicy are forbidden."},
			{field.ErrorTypeInvalid, "volumeBindingMode", "field is immutable"},
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
