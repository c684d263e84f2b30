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

// persistentvolumeTable prints persistentvolumes as upstream's `kubectl get` does.
var persistentvolumeTable = &registry.Table{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Capacity", Type: "string", Description: corev1.PersistentVolumeSpec{}.SwaggerDoc()["capacity"]},
		{Name: "Access Modes", Type: "string", Description: corev1.PersistentVolumeSpec{}.SwaggerDoc()["accessModes"]},
		{Name: "Reclaim Policy", Type: "string", Description: corev1.PersistentVolumeSpec{}.SwaggerDoc()["persistentVolumeReclaimPolicy"]},
		{Name: "Status", Type: "string", Description: corev1.PersistentVolumeStatus{}.SwaggerDoc()["phase"]},
		{Name: "Claim", Type: "string", Description: corev1.PersistentVolumeSpec{}.SwaggerDoc()["claimRef"]},
		{Name: "StorageClass", Type: "string", Description: "StorageClass of the pv"},
		{Name: "VolumeAttributesClass", Type: "string", Description: "VolumeAttributesClass of the pv"},
		{Name: "Reason", Type: "string", Description: corev1.PersistentVolumeStatus{}.SwaggerDoc()["reason"]},
		printers.AgeColumn(),
		{Name: "VolumeMode", Type: "string", Priority: 1, Description: corev1.PersistentVolumeSpec{}.SwaggerDoc()["volumeMode"]},
	},
	Row: registry.TypedRow(persistentvolumeRow),
}

// persistentvolumeFields lists the fields a field selector over
// persistentvolumes may name. Upstream's internal field set has a legacy
// "name", but v1 has no field label conversion for persistent volumes, so
// only the metadata fields are selectable through the API.
var persistentvolumeFields func(runtime.Object) fields.Set

func persistentvolumeRow(pv *corev1.PersistentVolume, now time.Time) []any {
	claim := ""
	if pv.Spec.ClaimRef != nil {
		claim = pv.Spec.ClaimRef.Namespace + "/" + pv.Spec.ClaimRef.Name
	}
	capacity := pv.Spec.Capacity[corev1.ResourceStorage]
	phase := string(pv.Status.Phase)
	if pv.DeletionTimestamp != nil {
		phase = "Terminating"
	}
	class := pv.Spec.StorageClassName
	if c, ok := pv.Annotations[betaStorageClassAnnotation]; ok {
		class = c
	}
	vac := "<unset>"
	if pv.Spec.VolumeAttributesClassName != nil {
		vac = *pv.Spec.VolumeAttributesClassName
	}
	volumeMode := "<unset>"
	if pv.Spec.VolumeMode != nil {
		volumeMode = string(*pv.Spec.VolumeMode)
	}
	return []any{
		capacity.String(),
		accessModesString(pv.Spec.AccessModes),
		string(pv.Spec.PersistentVolumeReclaimPolicy),
		phase,
		claim,
		class,
		vac,
		pv.Status.Reason,
		printers.TranslateTimestampSince(pv.CreationTimestamp, now),
		volumeMode,
	}
}
