// Package pvcresize is upstream's PersistentVolumeClaimResize admission
// plugin: a claim's storage request may grow only when the claim is bound
// and the StorageClass it was provisioned from (the same on both sides of
// the update) sets allowVolumeExpansion: true. Shrinking, and every other
// change, is left to validation.
package pvcresize

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/component-helpers/storage/volume"

	"github.com/orca-project/orca/internal/admission"
)

// PluginName is upstream's name for the plugin.
const PluginName = "PersistentVolumeClaimResize"

// Upstream's refusals, word for word.
var (
	ErrNotBound     = errors.New("Only bound persistent volume claims can be expanded")
	ErrNotResizable = errors.New("only dynamically provisioned pvc can be resized and " +
		"the storageclass that provisions the pvc must support resize")
)

var (
	claimsGVR  = corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims")
	classesGVR = storagev1.SchemeGroupVersion.WithResource("storageclasses")
)

// Plugin refuses storage requests that grow where they cannot.
type Plugin struct{ objects admission.Objects }

var _ admission.Validator = (*Plugin)(nil)

// New builds the plugin over the server's storage.
func New(objects admission.Objects) *Plugin { return &Plugin{objects: objects} }

// Name implements admission.Plugin.
func (*Plugin) Name() string { return PluginName }

// Validate refuses an update of a claim (not of its status) that grows
// its storage request, unless Refusal allows it.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	if a.Operation != admission.Update || a.Subresource != "" || a.Resource.GroupResource() != claimsGVR.GroupResource() {
		return nil
	}
	pvc, ok := a.Object.(*corev1.PersistentVolumeClaim)
	if !ok {
		return nil
	}
	old, ok := a.OldObject.(*corev1.PersistentVolumeClaim)
	if !ok || !Grows(pvc, old) {
		return nil
	}
	var class *storagev1.StorageClass
	if name := volume.GetPersistentVolumeClaimClass(pvc); name != "" && old.Status.Phase == corev1.ClaimBound {
		obj, err := p.objects.Get(ctx, classesGVR, "", name)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return admission.NewForbidden(a, err)
		default:
			class, _ = obj.(*storagev1.StorageClass)
		}
	}
	if err := Refusal(pvc, old, class); err != nil {
		return admission.NewForbidden(a, err)
	}
	return nil
}

// Grows reports whether the update raises the claim's storage request.
func Grows(pvc, old *corev1.PersistentVolumeClaim) bool {
	newSize := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	oldSize := old.Spec.Resources.Requests[corev1.ResourceStorage]
	return newSize.Cmp(oldSize) > 0
}

// Refusal is upstream's decision on updating old to pvc: nil unless the
// storage request grows, then ErrNotBound for a claim that was not bound
// and ErrNotResizable unless both sides name the same class (by field or
// by the beta annotation) and class, that class as stored (nil when
// missing), allows expansion.
func Refusal(pvc, old *corev1.PersistentVolumeClaim, class *storagev1.StorageClass) error {
	if !Grows(pvc, old) {
		return nil
	}
	if old.Status.Phase != corev1.ClaimBound {
		return ErrNotBound
	}
	name, oldName := volume.GetPersistentVolumeClaimClass(pvc), volume.GetPersistentVolumeClaimClass(old)
	if name == "" || name != oldName || class == nil || class.Name != name ||
		class.AllowVolumeExpansion == nil || !*class.AllowVolumeExpansion {
		return ErrNotResizable
	}
	return nil
}
