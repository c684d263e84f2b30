package core

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/printers"
)

// persistentvolumeclaimTable prints persistentvolumeclaims as upstream's `kubectl get` does.
var persistentvolumeclaimTable = &registry.Table{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Status", Type: "string", Description: corev1.PersistentVolumeClaimStatus{}.SwaggerDoc()["phase"]},
		{Name: "Volume", Type: "string", Description: corev1.PersistentVolumeClaimSpec{}.SwaggerDoc()["volumeName"]},
		{Name: "Capacity", Type: "string", Description: corev1.PersistentVolumeClaimStatus{}.SwaggerDoc()["capacity"]},
		{Name: "Access Modes", Type: "string", Description: corev1.PersistentVolumeClaimStatus{}.SwaggerDoc()["accessModes"]},
		{Name: "StorageClass", Type: "string", Description: "StorageClass of the pvc"},
		{Name: "VolumeAttributesClass", Type: "string", Description: "VolumeAttributesClass of the pvc"},
		printers.AgeColumn(),
		{Name: "VolumeMode", Type: "string", Priority: 1, Description: corev1.PersistentVolumeClaimSpec{}.SwaggerDoc()["volumeMode"]},
	},
	Row: registry.TypedRow(persistentvolumeclaimRow),
}

// persistentvolumeclaimFields lists the fields a field selector over
// persistentvolumeclaims may name. As for persistent volumes, upstream's
// legacy "name" field is unreachable through v1, so there is nothing beyond
// the metadata fields.
var persistentvolumeclaimFields func(runtime.Object) fields.Set

func persistentvolumeclaimRow(pvc *corev1.PersistentVolumeClaim, now time.Time) []any {
	phase := string(pvc.Status.Phase)
	if pvc.DeletionTimestamp != nil {
		phase = "Terminating"
	}
	// Capacity and modes describe the bound volume; an unbound claim's
	// request is not its capacity.
	capacity, accessModes := "", ""
	if pvc.Spec.VolumeName != "" {
		accessModes = accessModesString(pvc.Status.AccessModes)
		storage := pvc.Status.Capacity[corev1.ResourceStorage]
		capacity = storage.String()
	}
	class := ""
	if c, ok := pvc.Annotations[betaStorageClassAnnotation]; ok {
		class = c
	} else if pvc.Spec.StorageClassName != nil {
		class = *pvc.Spec.StorageClassName
	}
	vac := "<unset>"
	if pvc.Spec.VolumeAttributesClassName != nil {
		vac = *pvc.Spec.VolumeAttributesClassName
	}
	volumeMode := "<unset>"
	if pvc.Spec.VolumeMode != nil {
		volumeMode = string(*pvc.Spec.VolumeMode)
	}
	return []any{
		phase,
		pvc.Spec.VolumeName,
		capacity,
		accessModes,
		class,
		vac,
		printers.TranslateTimestampSince(pvc.CreationTimestamp, now),
		volumeMode,
	}
}
