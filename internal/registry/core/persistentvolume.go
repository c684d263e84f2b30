package core

import (
	"fmt"
	"path"
	"time"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
)

// Persistentvolumes is the persistentvolumes resource.
var Persistentvolumes = &registry.Resource{
	Group: "", Version: "v1", Name: "persistentvolumes", Singular: "persistentvolume", Kind: "PersistentVolume",
	Namespaced:       false,
	ShortNames:       []string{"pv"},
	Status:           true,
	New:              func() runtime.Object { return &corev1.PersistentVolume{} },
	NewList:          func() runtime.Object { return &corev1.PersistentVolumeList{} },
	PrepareForCreate: registry.Typed(preparePersistentVolumeForCreate),
	Default:          registry.Typed(defaultPersistentVolume),
	Validate:         registry.TypedValidate(validatePersistentVolume),
	ValidateUpdate:   registry.TypedValidateUpdate(validatePersistentVolumeUpdate),
	Table:            persistentvolumeTable,
	Fields:           persistentvolumeFields,
}

// preparePersistentVolumeForCreate starts every volume Pending, stamping
// when it entered that phase.
func preparePersistentVolumeForCreate(pv *corev1.PersistentVolume) {
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	pv.Status = corev1.PersistentVolumeStatus{Phase: corev1.VolumePending, LastPhaseTransitionTime: &now}
}

func defaultPersistentVolume(pv *corev1.PersistentVolume) {
	if pv.Status.Phase == "" {
		pv.Status.Phase = corev1.VolumePending
	}
	if pv.Spec.PersistentVolumeReclaimPolicy == "" {
		pv.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimRetain
	}
	if pv.Spec.VolumeMode == nil {
		pv.Spec.VolumeMode = ptrTo(corev1.PersistentVolumeFilesystem)
	}
	roundUpResourceList(pv.Spec.Capacity)
	defaultPersistentVolumeSource(&pv.Spec.PersistentVolumeSource)
}

var supportedReclaimPolicy = sets.New(
	corev1.PersistentVolumeReclaimDelete, corev1.PersistentVolumeReclaimRecycle, corev1.PersistentVolumeReclaimRetain)

func validatePersistentVolume(pv *corev1.PersistentVolume) field.ErrorList {
	return validatePersistentVolumeSpec(&pv.Spec, pv.Name, false, field.NewPath("spec"))
}

// validatePersistentVolumeSpec is upstream's ValidatePersistentVolumeSpec.
// An inline spec (a VolumeAttachment's, for a CSI volume migrated from a
// pod's in-tree volume) describes no volume object of its own: it has no
// capacity, claim, class or node affinity, must be CSI, and is checked as
// upstream's VolumeAttachment checks it, without the volumeAttributesClass
// rules.
func validatePersistentVolumeSpec(spec *corev1.PersistentVolumeSpec, pvName string, inline bool, specPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if inline {
		if spec.ClaimRef != nil {
			allErrs = append(allErrs, field.Forbidden(specPath.Child("claimRef"), inlineForbidden))
		}
		if len(spec.Capacity) != 0 {
			allErrs = append(allErrs, field.Forbidden(specPath.Child("capacity"), inlineForbidden))
		}
		if spec.CSI == nil {
			allErrs = append(allErrs, field.Required(specPath.Child("csi"), "has to be specified in the context of inline volumes"))
		}
	}
	if len(spec.AccessModes) == 0 {
		allErrs = append(allErrs, field.Required(specPath.Child("accessModes"), ""))
	}
	allErrs = append(allErrs, validateAccessModes(spec.AccessModes, specPath.Child("accessModes"))...)

	if !inline {
		capPath := specPath.Child("capacity")
		if len(spec.Capacity) == 0 {
			allErrs = append(allErrs, field.Required(capPath, ""))
		}
		// Storage is the only capacity a volume has.
		if _, ok := spec.Capacity[corev1.ResourceStorage]; !ok || len(spec.Capacity) > 1 {
			allErrs = append(allErrs, field.NotSupported(capPath, spec.Capacity, []corev1.ResourceName{corev1.ResourceStorage}))
		}
		for r, q := range spec.Capacity {
			allErrs = append(allErrs, validateBasicResource(q, capPath.Key(string(r)))...)
			allErrs = append(allErrs, validatePositiveQuantityValue(q, capPath.Key(string(r)))...)
		}
	}
	if policy := spec.PersistentVolumeReclaimPolicy; len(policy) > 0 {
		switch {
		case inline && policy != corev1.PersistentVolumeReclaimRetain:
			allErrs = append(allErrs, field.Forbidden(specPath.Child("persistentVolumeReclaimPolicy"), "may only be "+string(corev1.PersistentVolumeReclaimRetain)+" in the context of inline volumes"))
		case !inline && !supportedReclaimPolicy.Has(policy):
			allErrs = append(allErrs, field.NotSupported(specPath.Child("persistentVolumeReclaimPolicy"), policy, sets.List(supportedReclaimPolicy)))
		}
	}

	nodeAffinitySpecified := false
	if na := spec.NodeAffinity; na != nil {
		switch {
		case inline:
			allErrs = append(allErrs, field.Forbidden(specPath.Child("nodeAffinity"), inlineForbidden))
		case na.Required != nil:
			nodeAffinitySpecified = true
			allErrs = append(allErrs, validateNodeSelector(na.Required, false, specPath.Child("nodeAffinity").Child("required"))...)
		default:
			nodeAffinitySpecified = true
			allErrs = append(allErrs, field.Required(specPath.Child("nodeAffinity").Child("required"), "must specify required node constraints"))
		}
	}
	allErrs = append(allErrs, validatePersistentVolumeSource(&spec.PersistentVolumeSource, pvName, nodeAffinitySpecified, specPath)...)

	// Recycling scrubs the volume; on a hostPath of / that is the node.
	if spec.HostPath != nil && path.Clean(spec.HostPath.Path) == "/" && spec.PersistentVolumeReclaimPolicy == corev1.PersistentVolumeReclaimRecycle {
		allErrs = append(allErrs, field.Forbidden(specPath.Child("persistentVolumeReclaimPolicy"), "may not be 'recycle' for a hostPath mount of '/'"))
	}
	if len(spec.StorageClassName) > 0 {
		if inline {
			allErrs = append(allErrs, field.Forbidden(specPath.Child("storageClassName"), inlineForbidden))
		} else {
			allErrs = append(allErrs, validateName(apivalidation.NameIsDNSSubdomain, spec.StorageClassName, false, specPath.Child("storageClassName"))...)
		}
	}
	if m := spec.VolumeMode; m != nil {
		switch {
		case inline && *m != corev1.PersistentVolumeFilesystem:
			allErrs = append(allErrs, field.Forbidden(specPath.Child("volumeMode"), "may not specify volumeMode other than "+string(corev1.PersistentVolumeFilesystem)+" in the context of inline volumes"))
		case !inline && !supportedVolumeModes.Has(*m):
			allErrs = append(allErrs, field.NotSupported(specPath.Child("volumeMode"), *m, sets.List(supportedVolumeModes)))
		}
	}
	if c := spec.VolumeAttributesClassName; c != nil && !inline {
		if len(*c) == 0 {
			allErrs = append(allErrs, field.Required(specPath.Child("volumeAttributesClassName"), "an empty string is disallowed"))
		} else {
			allErrs = append(allErrs, validateName(apivalidation.NameIsDNSSubdomain, *c, false, specPath.Child("volumeAttributesClassName"))...)
		}
		if spec.CSI == nil {
			allErrs = append(allErrs, field.Required(specPath.Child("csi"), "has to be specified when using volumeAttributesClassName"))
		}
	}
	return allErrs
}

const inlineForbidden = "may not be specified in the context of inline volumes"

// validatePersistentVolumeSource requires exactly one source and checks it.
func validatePersistentVolumeSource(s *corev1.PersistentVolumeSource, pvName string, nodeAffinitySpecified bool, fldPath *field.Path) field.ErrorList {
	o := &oneSource{fldPath: fldPath}
	o.add(s.HostPath != nil, "hostPath", func(p *field.Path) field.ErrorList { return validateHostPathVolumeSource(s.HostPath, p) })
	o.add(s.GCEPersistentDisk != nil, "gcePersistentDisk", func(*field.Path) field.ErrorList {
		return validateGCEPersistentDisk(s.GCEPersistentDisk, fldPath.Child("persistentDisk"))
	})
	o.add(s.AWSElasticBlockStore != nil, "awsElasticBlockStore", func(p *field.Path) field.ErrorList {
		return validateAWSElasticBlockStore(s.AWSElasticBlockStore, p)
	})
	o.add(s.Glusterfs != nil, "glusterfs", func(p *field.Path) field.ErrorList {
		errs := validateGlusterfs(s.Glusterfs.EndpointsName, s.Glusterfs.Path, p)
		if ns := s.Glusterfs.EndpointsNamespace; ns != nil {
			if *ns == "" {
				errs = append(errs, field.Invalid(p.Child("endpointsNamespace"), *ns, "if the endpointnamespace is set, it must be a valid namespace name"))
			} else {
				errs = append(errs, validateName(apivalidation.ValidateNamespaceName, *ns, false, p.Child("endpointsNamespace"))...)
			}
		}
		return errs
	})
	o.add(s.Flocker != nil, "flocker", func(p *field.Path) field.ErrorList { return validateFlocker(s.Flocker, p) })
	o.add(s.NFS != nil, "nfs", func(p *field.Path) field.ErrorList { return validateNFS(s.NFS, p) })
	o.add(s.RBD != nil, "rbd", func(p *field.Path) field.ErrorList { return validateRBD(s.RBD.CephMonitors, s.RBD.RBDImage, p) })
	o.add(s.Quobyte != nil, "quobyte", func(p *field.Path) field.ErrorList { return validateQuobyte(s.Quobyte, p) })
	o.add(s.CephFS != nil, "cephFS", func(*field.Path) field.ErrorList {
		if len(s.CephFS.Monitors) == 0 {
			return field.ErrorList{field.Required(fldPath.Child("cephfs").Child("monitors"), "")}
		}
		return nil
	})
	o.add(s.ISCSI != nil, "iscsi", func(p *field.Path) field.ErrorList {
		i := s.ISCSI
		errs := validateISCSI(i.TargetPortal, i.IQN, i.Lun, i.DiscoveryCHAPAuth || i.SessionCHAPAuth, i.SecretRef != nil, i.InitiatorName, "must be valid format", p)
		if i.InitiatorName != nil && len(pvName+":"+i.TargetPortal) > 64 {
			errs = append(errs, field.Invalid(p.Child("targetportal"), i.TargetPortal,
				"Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if iscsi.initiatorName is specified."))
		}
		if i.SecretRef != nil && len(i.SecretRef.Name) == 0 {
			errs = append(errs, field.Required(p.Child("secretRef", "name"), ""))
		}
		return errs
	})
	o.add(s.Cinder != nil, "cinder", func(p *field.Path) field.ErrorList {
		errs := requiredString(s.Cinder.VolumeID, p.Child("volumeID"))
		if ref := s.Cinder.SecretRef; ref != nil {
			errs = append(errs, requiredString(ref.Name, p.Child("secretRef", "name"))...)
			errs = append(errs, requiredString(ref.Namespace, p.Child("secretRef", "namespace"))...)
		}
		return errs
	})
	o.add(s.FC != nil, "fc", func(p *field.Path) field.ErrorList { return validateFC(s.FC, p) })
	o.add(s.FlexVolume != nil, "flexVolume", func(p *field.Path) field.ErrorList {
		return validateFlex(s.FlexVolume.Driver, s.FlexVolume.Options, p)
	})
	o.add(s.AzureFile != nil, "azureFile", func(p *field.Path) field.ErrorList {
		errs := validateAzureFile(s.AzureFile.SecretName, s.AzureFile.ShareName, p)
		if ns := s.AzureFile.SecretNamespace; ns != nil && len(*ns) == 0 {
			errs = append(errs, field.Required(p.Child("secretNamespace"), ""))
		}
		return errs
	})
	o.add(s.VsphereVolume != nil, "vsphereVolume", func(p *field.Path) field.ErrorList {
		return requiredString(s.VsphereVolume.VolumePath, p.Child("volumePath"))
	})
	o.add(s.PhotonPersistentDisk != nil, "photonPersistentDisk", func(p *field.Path) field.ErrorList {
		return requiredString(s.PhotonPersistentDisk.PdID, p.Child("pdID"))
	})
	o.add(s.PortworxVolume != nil, "portworxVolume", func(p *field.Path) field.ErrorList {
		return requiredString(s.PortworxVolume.VolumeID, p.Child("volumeID"))
	})
	o.add(s.AzureDisk != nil, "azureDisk", func(p *field.Path) field.ErrorList { return validateAzureDisk(s.AzureDisk, p) })
	o.add(s.ScaleIO != nil, "scaleIO", func(p *field.Path) field.ErrorList {
		return validateScaleIO(s.ScaleIO.Gateway, s.ScaleIO.System, s.ScaleIO.VolumeName, p)
	})
	o.add(s.Local != nil, "local", func(p *field.Path) field.ErrorList {
		var errs field.ErrorList
		if s.Local.Path == "" {
			errs = append(errs, field.Required(p.Child("path"), ""))
		} else {
			errs = append(errs, validatePathNoBacksteps(s.Local.Path, p.Child("path"))...)
		}
		// A local volume exists on one node; the scheduler must know which.
		if !nodeAffinitySpecified {
			errs = append(errs, field.Required(fldPath.Child("nodeAffinity"), "Local volume requires node affinity"))
		}
		return errs
	})
	o.add(s.StorageOS != nil, "storageos", func(p *field.Path) field.ErrorList {
		errs := validateStorageOS(s.StorageOS.VolumeName, s.StorageOS.VolumeNamespace, p)
		if ref := s.StorageOS.SecretRef; ref != nil {
			errs = append(errs, requiredString(ref.Name, p.Child("secretRef", "name"))...)
			errs = append(errs, requiredString(ref.Namespace, p.Child("secretRef", "namespace"))...)
		}
		return errs
	})
	o.add(s.CSI != nil, "csi", func(p *field.Path) field.ErrorList {
		errs := validateCSIDriverName(s.CSI.Driver, p.Child("driver"))
		errs = append(errs, requiredString(s.CSI.VolumeHandle, p.Child("volumeHandle"))...)
		for _, r := range []struct {
			name string
			ref  *corev1.SecretReference
		}{
			{"controllerPublishSecretRef", s.CSI.ControllerPublishSecretRef},
			{"controllerExpandSecretRef", s.CSI.ControllerExpandSecretRef},
			{"nodePublishSecretRef", s.CSI.NodePublishSecretRef},
			{"nodeExpandSecretRef", s.CSI.NodeExpandSecretRef},
		} {
			if r.ref != nil {
				errs = append(errs, validatePVSecretReference(r.ref, p.Child(r.name))...)
			}
		}
		return errs
	})
	return o.done()
}

func validatePVSecretReference(ref *corev1.SecretReference, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(ref.Name) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("name"), ""))
	} else {
		allErrs = append(allErrs, validateDNS1123Subdomain(ref.Name, fldPath.Child("name"))...)
	}
	if len(ref.Namespace) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("namespace"), ""))
	} else {
		allErrs = append(allErrs, validateDNS1123Label(ref.Namespace, fldPath.Child("namespace"))...)
	}
	return allErrs
}

// validatePersistentVolumeUpdate: what a volume is (its source and mode,
// and its node affinity once set) is fixed at creation. An expand secret
// may still be added to a CSI volume that lacked one.
func validatePersistentVolumeUpdate(pv, old *corev1.PersistentVolume) field.ErrorList {
	var allErrs field.ErrorList
	newSource := pv.Spec.PersistentVolumeSource
	if old.Spec.CSI != nil && old.Spec.CSI.ControllerExpandSecretRef == nil && newSource.CSI != nil && newSource.CSI.ControllerExpandSecretRef != nil {
		newSource = *newSource.DeepCopy()
		newSource.CSI.ControllerExpandSecretRef = nil
	}
	if !semanticEqual(newSource, old.Spec.PersistentVolumeSource) {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("spec", "persistentvolumesource"),
			fmt.Sprintf("spec.persistentvolumesource is immutable after creation\n%v", specDiff(old.Spec.PersistentVolumeSource, newSource))))
	}
	// Upstream reports these two without "spec".
	allErrs = append(allErrs, apivalidation.ValidateImmutableField(pv.Spec.VolumeMode, old.Spec.VolumeMode, field.NewPath("volumeMode"))...)
	if old.Spec.NodeAffinity != nil && !semanticEqual(pv.Spec.NodeAffinity, old.Spec.NodeAffinity) {
		allErrs = append(allErrs, field.Invalid(field.NewPath("nodeAffinity"), pv.Spec.NodeAffinity, fieldImmutableErrorMsg))
	}
	if old.Spec.VolumeAttributesClassName != nil && pv.Spec.VolumeAttributesClassName == nil {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("spec", "volumeAttributesClassName"), "update from non-nil value to nil is forbidden"))
	}
	return allErrs
}
