package core

import (
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPersistentVolumeTable(t *testing.T) {
	checkTableColumns(t, persistentvolumeTable, []tableCol{
		{"Capacity", "string", 0}, {"Access Modes", "string", 0}, {"Reclaim Policy", "string", 0}, {"Status", "string", 0},
		{"Claim", "string", 0}, {"StorageClass", "string", 0}, {"VolumeAttributesClass", "string", 0}, {"Reason", "string", 0},
		{"Age", "string", 0}, {"VolumeMode", "string", 1},
	})
	fs := corev1.PersistentVolumeFilesystem
	vac := "gold"
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{CreationTimestamp: tableAgo(time.Hour)},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod, corev1.ReadWriteMany, corev1.ReadWriteOnce, corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			ClaimRef:                      &corev1.ObjectReference{Namespace: "ns", Name: "data"},
			StorageClassName:              "standard",
			VolumeAttributesClassName:     &vac,
			VolumeMode:                    &fs,
		},
		Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound},
	}
	want := []any{"10Gi", "RWO,RWX,RWOP", "Retain", "Bound", "ns/data", "standard", "gold", "", "60m", "Filesystem"}
	if got := tableRow(t, persistentvolumeTable, pv); !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v\nwant %#v", got, want)
	}

	pv = &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{
			DeletionTimestamp: tableAgoPtr(0),
			Annotations:       map[string]string{"volume.beta.kubernetes.io/storage-class": "beta"},
		},
		Spec:   corev1.PersistentVolumeSpec{StorageClassName: "ignored"},
		Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeFailed, Reason: "Oops"},
	}
	want = []any{"0", "", "", "Terminating", "", "beta", "<unset>", "Oops", "<unknown>", "<unset>"}
	if got := tableRow(t, persistentvolumeTable, pv); !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v\nwant %#v", got, want)
	}
	if persistentvolumeFields != nil {
		t.Error("persistent volumes have no selectable fields beyond metadata in v1")
	}
}

func TestPersistentVolumeClaimTable(t *testing.T) {
	checkTableColumns(t, persistentvolumeclaimTable, []tableCol{
		{"Status", "string", 0}, {"Volume", "string", 0}, {"Capacity", "string", 0}, {"Access Modes", "string", 0},
		{"StorageClass", "string", 0}, {"VolumeAttributesClass", "string", 0}, {"Age", "string", 0}, {"VolumeMode", "string", 1},
	})
	class := "fast"
	block := corev1.PersistentVolumeBlock
	pending := &corev1.PersistentVolumeClaim{
		Spec: corev1.PersistentVolumeClaimSpec{
			StorageClassName: &class,
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending},
	}
	want := []any{"Pending", "", "", "", "fast", "<unset>", "<unknown>", "<unset>"}
	if got := tableRow(t, persistentvolumeclaimTable, pending); !reflect.DeepEqual(got, want) {
		t.Errorf("pending: got %#v\nwant %#v", got, want)
	}
	bound := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"volume.beta.kubernetes.io/storage-class": "old"}},
		Spec:       corev1.PersistentVolumeClaimSpec{VolumeName: "pv-1", StorageClassName: &class, VolumeMode: &block},
		Status: corev1.PersistentVolumeClaimStatus{
			Phase:       corev1.ClaimBound,
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadOnlyMany},
			Capacity:    corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("5Gi")},
		},
	}
	want = []any{"Bound", "pv-1", "5Gi", "ROX", "old", "<unset>", "<unknown>", "Block"}
	if got := tableRow(t, persistentvolumeclaimTable, bound); !reflect.DeepEqual(got, want) {
		t.Errorf("bound: got %#v\nwant %#v", got, want)
	}
}
