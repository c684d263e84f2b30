// Package defaultstorageclass is upstream's DefaultStorageClass admission
// plugin: a new PersistentVolumeClaim that asks for no class, neither in
// spec.storageClassName (nil, not an explicit "") nor in the deprecated
// volume.beta.kubernetes.io/storage-class annotation, gets the class
// marked default (storageclass.kubernetes.io/is-default-class: "true", or
// its beta form); of several default classes, the newest. A claim created
// while no class is default keeps no class; upstream's PV controller may
// assign one later (retroactive default assignment), which Default lets a
// controller do with the same rule.
package defaultstorageclass

import (
	"context"
	"sort"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/component-helpers/storage/volume"

	"github.com/orca-project/orca/internal/admission"
)

// PluginName is upstream's name for the plugin.
const PluginName = "DefaultStorageClass"

// Annotations that mark a StorageClass as the default, as upstream names
// them; either set to "true" does.
const (
	IsDefaultAnnotation     = "storageclass.kubernetes.io/is-default-class"
	BetaIsDefaultAnnotation = "storageclass.beta.kubernetes.io/is-default-class"
)

var (
	claimsGVR         = corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims")
	storageClassesGVR = storagev1.SchemeGroupVersion.WithResource("storageclasses")
)

// Plugin defaults the class of new PersistentVolumeClaims.
type Plugin struct{ objects admission.Objects }

var _ admission.Mutator = (*Plugin)(nil)

// New builds the plugin over the server's storage.
func New(objects admission.Objects) *Plugin { return &Plugin{objects: objects} }

func (*Plugin) Name() string { return PluginName }

// Admit sets a new claim's class to the default one, if any.
func (p *Plugin) Admit(ctx context.Context, a *admission.Attributes) error {
	if a.Operation != admission.Create || a.Subresource != "" || a.Resource.GroupResource() != claimsGVR.GroupResource() {
		return nil
	}
	pvc, ok := a.Object.(*corev1.PersistentVolumeClaim)
	if !ok || volume.PersistentVolumeClaimHasClass(pvc) {
		return nil
	}
	objs, err := p.objects.List(ctx, storageClassesGVR, "")
	if err != nil {
		return admission.NewForbidden(a, err)
	}
	var classes []*storagev1.StorageClass
	for _, o := range objs {
		if c, ok := o.(*storagev1.StorageClass); ok {
			classes = append(classes, c)
		}
	}
	if c := Default(classes); c != nil {
		name := c.Name
		pvc.Spec.StorageClassName = &name
	}
	return nil
}

// IsDefault reports whether c is marked as a default class.
func IsDefault(c *storagev1.StorageClass) bool {
	return c.Annotations[IsDefaultAnnotation] == "true" || c.Annotations[BetaIsDefaultAnnotation] == "true"
}

// Default is the class new claims get: the newest of those marked
// default (by name among equals), nil when none is. classes is not
// reordered.
func Default(classes []*storagev1.StorageClass) *storagev1.StorageClass {
	var defaults []*storagev1.StorageClass
	for _, c := range classes {
		if IsDefault(c) {
			defaults = append(defaults, c)
		}
	}
	if len(defaults) == 0 {
		return nil
	}
	sort.Slice(defaults, func(i, j int) bool {
		ti, tj := defaults[i].CreationTimestamp.UnixNano(), defaults[j].CreationTimestamp.UnixNano()
		if ti == tj {
			return defaults[i].Name < defaults[j].Name
		}
		return ti > tj
	})
	return defaults[0]
}
