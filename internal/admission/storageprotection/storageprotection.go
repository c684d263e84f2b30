// Package storageprotection is upstream's StorageObjectInUseProtection
// admission plugin: every new PersistentVolumeClaim gets the
// kubernetes.io/pvc-protection finalizer and every new PersistentVolume
// kubernetes.io/pv-protection, so that deleting one only marks it until
// the PVC protection controller (no pod uses the claim) or the PV
// protection controller (the volume is not Bound) lets it go.
package storageprotection

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/orca-project/orca/internal/admission"
)

// PluginName is upstream's name for the plugin.
const PluginName = "StorageObjectInUseProtection"

// The finalizers, as upstream names them.
const (
	PVCProtectionFinalizer = "kubernetes.io/pvc-protection"
	PVProtectionFinalizer  = "kubernetes.io/pv-protection"
)

var (
	claimsGVR  = corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims")
	volumesGVR = corev1.SchemeGroupVersion.WithResource("persistentvolumes")
)

// Plugin adds the protection finalizers to new claims and volumes.
type Plugin struct{}

var _ admission.Mutator = (*Plugin)(nil)

// New builds the plugin.
func New() *Plugin { return &Plugin{} }

func (*Plugin) Name() string { return PluginName }

// Admit adds the finalizer a new claim or volume is protected by.
func (*Plugin) Admit(_ context.Context, a *admission.Attributes) error {
	if a.Operation != admission.Create || a.Subresource != "" {
		return nil
	}
	switch a.Resource.GroupResource() {
	case claimsGVR.GroupResource():
		if pvc, ok := a.Object.(*corev1.PersistentVolumeClaim); ok {
			pvc.Finalizers = withFinalizer(pvc.Finalizers, PVCProtectionFinalizer)
		}
	case volumesGVR.GroupResource():
		if pv, ok := a.Object.(*corev1.PersistentVolume); ok {
			pv.Finalizers = withFinalizer(pv.Finalizers, PVProtectionFinalizer)
		}
	}
	return nil
}

// withFinalizer is finalizers with f appended unless already there.
func withFinalizer(finalizers []string, f string) []string {
	if slices.Contains(finalizers, f) {
		return finalizers
	}
	return append(finalizers, f)
}
