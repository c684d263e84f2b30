package storageprotection

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orca-project/orca/internal/admission"
	"github.com/orca-project/orca/internal/controller/pvcprotection"
	"github.com/orca-project/orca/internal/controller/pvprotection"
)

func TestAdmit(t *testing.T) {
	pvc := func(finalizers ...string) *corev1.PersistentVolumeClaim {
		return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Finalizers: finalizers}}
	}
	pv := func(finalizers ...string) *corev1.PersistentVolume {
		return &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Finalizers: finalizers}}
	}
	for _, tc := range []struct {
		name        string
		op          admission.Operation
		resource    schema.GroupVersionResource
		subresource string
		obj         runtime.Object
		want        []string
	}{
		{"a new claim", admission.Create, claimsGVR, "", pvc(), []string{PVCProtectionFinalizer}},
		{"a new claim keeps its own finalizers first", admission.Create, claimsGVR, "", pvc("example.com/x"), []string{"example.com/x", PVCProtectionFinalizer}},
		{"a claim that has it gets no second", admission.Create, claimsGVR, "", pvc(PVCProtectionFinalizer), []string{PVCProtectionFinalizer}},
		{"a new volume", admission.Create, volumesGVR, "", pv(), []string{PVProtectionFinalizer}},
		{"a volume that has it gets no second", admission.Create, volumesGVR, "", pv("a", PVProtectionFinalizer), []string{"a", PVProtectionFinalizer}},
		{"a claim's update is left alone", admission.Update, claimsGVR, "", pvc(), nil},
		{"a volume's update is left alone", admission.Update, volumesGVR, "", pv(), nil},
		{"a subresource is left alone", admission.Create, claimsGVR, "status", pvc(), nil},
		{"other resources are left alone", admission.Create, corev1.SchemeGroupVersion.WithResource("configmaps"), "", pvc(), nil},
		{"an object of the wrong kind is left alone", admission.Create, volumesGVR, "", pvc(), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &admission.Attributes{Operation: tc.op, Resource: tc.resource, Subresource: tc.subresource, Object: tc.obj}
			if err := New().Admit(context.Background(), a); err != nil {
				t.Fatal(err)
			}
			got := tc.obj.(metav1.Object).GetFinalizers()
			if !slices.Equal(got, tc.want) {
				t.Errorf("finalizers %q, want %q", got, tc.want)
			}
		})
	}
}

// The controllers remove what the plugin adds.
func TestFinalizersMatchTheControllers(t *testing.T) {
	if PVCProtectionFinalizer != pvcprotection.Finalizer || PVProtectionFinalizer != pvprotection.Finalizer {
		t.Errorf("plugin adds %q and %q, controllers remove %q and %q", PVCProtectionFinalizer, PVProtectionFinalizer, pvcprotection.Finalizer, pvprotection.Finalizer)
	}
	if New().Name() != "StorageObjectInUseProtection" {
		t.Errorf("Name() = %q", New().Name())
	}
}
