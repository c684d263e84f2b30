package core

import (
	"fmt"
	"net"
	"path"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/auth/certificates"
)

// ---- defaults ----

func defaultVolume(v *corev1.Volume) {
	if allPtrFieldsNil(&v.VolumeSource) {
		v.VolumeSource = corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}
	}
	s := &v.VolumeSource
	if s.Image != nil && s.Image.PullPolicy == "" {
		s.Image.PullPolicy = defaultPullPolicy(s.Image.Reference)
	}
	if s.HostPath != nil {
		defaultHostPath(s.HostPath)
	}
	if s.Secret != nil && s.Secret.DefaultMode == nil {
		s.Secret.DefaultMode = ptrTo(corev1.SecretVolumeSourceDefaultMode)
	}
	if s.ConfigMap != nil && s.ConfigMap.DefaultMode == nil {
		s.ConfigMap.DefaultMode = ptrTo(corev1.ConfigMapVolumeSourceDefaultMode)
	}
	if s.DownwardAPI != nil {
		if s.DownwardAPI.DefaultMode == nil {
			s.DownwardAPI.DefaultMode = ptrTo(corev1.DownwardAPIVolumeSourceDefaultMode)
		}
		defaultDownwardAPIFiles(s.DownwardAPI.Items)
	}
	if s.Projected != nil {
		if s.Projected.DefaultMode == nil {
			s.Projected.DefaultMode = ptrTo(corev1.ProjectedVolumeSourceDefaultMode)
		}
		for i := range s.Projected.Sources {
			src := &s.Projected.Sources[i]
			if src.DownwardAPI != nil {
				defaultDownwardAPIFiles(src.DownwardAPI.Items)
			}
			if src.ServiceAccountToken != nil && src.ServiceAccountToken.ExpirationSeconds == nil {
				src.ServiceAccountToken.ExpirationSeconds = ptrTo(int64(3600))
			}
		}
	}
	if s.ISCSI != nil && s.ISCSI.ISCSIInterface == "" {
		s.ISCSI.ISCSIInterface = "default"
	}
	if s.RBD != nil {
		defaultRBD(&s.RBD.RBDPool, &s.RBD.RadosUser, &s.RBD.Keyring)
	}
	if s.AzureDisk != nil {
		defaultAzureDisk(s.AzureDisk)
	}
	if s.ScaleIO != nil {
		defaultScaleIO(&s.ScaleIO.StorageMode, &s.ScaleIO.FSType)
	}
	if s.Ephemeral != nil && s.Ephemeral.VolumeClaimTemplate != nil {
		DefaultPersistentVolumeClaimSpec(&s.Ephemeral.VolumeClaimTemplate.Spec)
	}
}

// defaultPersistentVolumeSource applies the same per-source defaults as pod
// volumes get, for the sources a PersistentVolume can carry.
func defaultPersistentVolumeSource(s *corev1.PersistentVolumeSource) {
	if s.HostPath != nil {
		defaultHostPath(s.HostPath)
	}
	if s.RBD != nil {
		defaultRBD(&s.RBD.RBDPool, &s.RBD.RadosUser, &s.RBD.Keyring)
	}
	if s.ISCSI != nil && s.ISCSI.ISCSIInterface == "" {
		s.ISCSI.ISCSIInterface = "default"
	}
	if s.AzureDisk != nil {
		defaultAzureDisk(s.AzureDisk)
	}
	if s.ScaleIO != nil {
		defaultScaleIO(&s.ScaleIO.StorageMode, &s.ScaleIO.FSType)
	}
}

func defaultHostPath(h *corev1.HostPathVolumeSource) {
	if h.Type == nil {
		h.Type = ptrTo(corev1.HostPathUnset)
	}
}

func defaultDownwardAPIFiles(items []corev1.DownwardAPIVolumeFile) {
	for i := range items {
		if items[i].FieldRef != nil && items[i].FieldRef.APIVersion == "" {
			items[i].FieldRef.APIVersion = "v1"
		}
	}
}

func defaultRBD(pool, user, keyring *string) {
	if *pool == "" {
		*pool = "rbd"
	}
	if *user == "" {
		*user = "admin"
	}
	if *keyring == "" {
		*keyring = "/etc/ceph/keyring"
	}
}

func defaultAzureDisk(a *corev1.AzureDiskVolumeSource) {
	if a.CachingMode == nil {
		a.CachingMode = ptrTo(corev1.AzureDataDiskCachingReadWrite)
	}
	if a.FSType == nil {
		a.FSType = ptrTo("ext4")
	}
	if a.ReadOnly == nil {
		a.ReadOnly = ptrTo(false)
	}
	if a.Kind == nil {
		a.Kind = ptrTo(corev1.AzureSharedBlobDisk)
	}
}

func defaultScaleIO(storageMode, fsType *string) {
	if *storageMode == "" {
		*storageMode = "ThinProvisioned"
	}
	if *fsType == "" {
		*fsType = "xfs"
	}
}

// ---- pod volumes ----

// validateVolumes checks the pod's volumes and returns the valid ones by
// name, for the containers' mounts to be checked against.
func validateVolumes(volumes []corev1.Volume, podMeta *metav1.ObjectMeta, fldPath *field.Path) (map[string]corev1.VolumeSource, field.ErrorList) {
	var allErrs field.ErrorList
	allNames := sets.Set[string]{}
	// PVCs the pod's ephemeral volumes will create, which only a real pod
	// (with a name) can know.
	createdPVCs := sets.Set[string]{}
	if podMeta != nil && podMeta.Name != "" {
		for _, vol := range volumes {
			if vol.Ephemeral != nil {
				createdPVCs.Insert(podMeta.Name + "-" + vol.Name)
			}
		}
	}
	vols := map[string]corev1.VolumeSource{}
	for i, vol := range volumes {
		idxPath := fldPath.Index(i)
		namePath := idxPath.Child("name")
		el := validateVolumeSource(&vol.VolumeSource, idxPath, vol.Name, podMeta)
		if len(vol.Name) == 0 {
			el = append(el, field.Required(namePath, ""))
		} else {
			el = append(el, validateDNS1123Label(vol.Name, namePath)...)
		}
		if allNames.Has(vol.Name) {
			el = append(el, field.Duplicate(namePath, vol.Name))
		}
		if len(el) == 0 {
			allNames.Insert(vol.Name)
			vols[vol.Name] = vol.VolumeSource
		} else {
			allErrs = append(allErrs, el...)
		}
		if vol.PersistentVolumeClaim != nil && createdPVCs.Has(vol.PersistentVolumeClaim.ClaimName) {
			allErrs = append(allErrs, field.Invalid(idxPath.Child("persistentVolumeClaim").Child("claimName"), vol.PersistentVolumeClaim.ClaimName,
				"must not reference a PVC that gets created for an ephemeral volume"))
		}
	}
	return vols, allErrs
}

// oneSource counts volume sources and, from the second one on, reports that
// only one may be given; validate runs for the first one only.
type oneSource struct {
	fldPath *field.Path
	n       int
	errs    field.ErrorList
}

func (o *oneSource) add(set bool, name string, validate func(*field.Path) field.ErrorList) {
	if !set {
		return
	}
	if o.n > 0 {
		o.errs = append(o.errs, field.Forbidden(o.fldPath.Child(name), "may not specify more than 1 volume type"))
		return
	}
	o.n++
	if validate != nil {
		o.errs = append(o.errs, validate(o.fldPath.Child(name))...)
	}
}

func (o *oneSource) done() field.ErrorList {
	if o.n == 0 {
		o.errs = append(o.errs, field.Required(o.fldPath, "must specify a volume type"))
	}
	return o.errs
}

func validateVolumeSource(s *corev1.VolumeSource, fldPath *field.Path, volName string, podMeta *metav1.ObjectMeta) field.ErrorList {
	o := &oneSource{fldPath: fldPath}
	o.add(s.EmptyDir != nil, "emptyDir", func(p *field.Path) field.ErrorList {
		if s.EmptyDir.SizeLimit != nil && s.EmptyDir.SizeLimit.Cmp(resource.Quantity{}) < 0 {
			return field.ErrorList{field.Forbidden(p.Child("sizeLimit"), "SizeLimit field must be a valid resource quantity")}
		}
		return nil
	})
	o.add(s.HostPath != nil, "hostPath", func(p *field.Path) field.ErrorList { return validateHostPathVolumeSource(s.HostPath, p) })
	o.add(s.GitRepo != nil, "gitRepo", func(p *field.Path) field.ErrorList {
		var errs field.ErrorList
		if len(s.GitRepo.Repository) == 0 {
			errs = append(errs, field.Required(p.Child("repository"), ""))
		}
		return append(errs, validateLocalDescendingPath(s.GitRepo.Directory, p.Child("directory"))...)
	})
	o.add(s.GCEPersistentDisk != nil, "gcePersistentDisk", func(*field.Path) field.ErrorList {
		// Upstream reports these under "persistentDisk"; kept for fidelity.
		return validateGCEPersistentDisk(s.GCEPersistentDisk, fldPath.Child("persistentDisk"))
	})
	o.add(s.AWSElasticBlockStore != nil, "awsElasticBlockStore", func(p *field.Path) field.ErrorList {
		return validateAWSElasticBlockStore(s.AWSElasticBlockStore, p)
	})
	o.add(s.Secret != nil, "secret", func(p *field.Path) field.ErrorList { return validateSecretVolumeSource(s.Secret, p) })
	o.add(s.NFS != nil, "nfs", func(p *field.Path) field.ErrorList { return validateNFS(s.NFS, p) })
	o.add(s.ISCSI != nil, "iscsi", func(p *field.Path) field.ErrorList {
		return validateISCSI(s.ISCSI.TargetPortal, s.ISCSI.IQN, s.ISCSI.Lun, s.ISCSI.DiscoveryCHAPAuth || s.ISCSI.SessionCHAPAuth,
			s.ISCSI.SecretRef != nil, s.ISCSI.InitiatorName, "must be valid format starting with iqn, eui, or naa", p)
	})
	if s.ISCSI != nil && s.ISCSI.InitiatorName != nil && len(volName+":"+s.ISCSI.TargetPortal) > 64 {
		o.errs = append(o.errs, field.Invalid(fldPath.Child("name"), volName,
			"Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if iscsi.initiatorName is specified."))
	}
	o.add(s.Glusterfs != nil, "glusterfs", func(p *field.Path) field.ErrorList {
		return validateGlusterfs(s.Glusterfs.EndpointsName, s.Glusterfs.Path, p)
	})
	o.add(s.Flocker != nil, "flocker", func(p *field.Path) field.ErrorList { return validateFlocker(s.Flocker, p) })
	o.add(s.PersistentVolumeClaim != nil, "persistentVolumeClaim", func(p *field.Path) field.ErrorList {
		if len(s.PersistentVolumeClaim.ClaimName) == 0 {
			return field.ErrorList{field.Required(p.Child("claimName"), "")}
		}
		return nil
	})
	o.add(s.RBD != nil, "rbd", func(p *field.Path) field.ErrorList {
		return validateRBD(s.RBD.CephMonitors, s.RBD.RBDImage, p)
	})
	o.add(s.Cinder != nil, "cinder", func(p *field.Path) field.ErrorList {
		var errs field.ErrorList
		if len(s.Cinder.VolumeID) == 0 {
			errs = append(errs, field.Required(p.Child("volumeID"), ""))
		}
		if s.Cinder.SecretRef != nil && len(s.Cinder.SecretRef.Name) == 0 {
			errs = append(errs, field.Required(p.Child("secretRef", "name"), ""))
		}
		return errs
	})
	o.add(s.CephFS != nil, "cephFS", func(*field.Path) field.ErrorList {
		if len(s.CephFS.Monitors) == 0 {
			return field.ErrorList{field.Required(fldPath.Child("cephfs").Child("monitors"), "")}
		}
		return nil
	})
	o.add(s.Quobyte != nil, "quobyte", func(p *field.Path) field.ErrorList { return validateQuobyte(s.Quobyte, p) })
	o.add(s.DownwardAPI != nil, "downwardAPI", func(p *field.Path) field.ErrorList {
		var errs field.ErrorList
		if m := s.DownwardAPI.DefaultMode; m != nil && (*m > 0777 || *m < 0) {
			errs = append(errs, field.Invalid(p.Child("defaultMode"), *m, fileModeErrorMsg))
		}
		for _, file := range s.DownwardAPI.Items {
			errs = append(errs, validateDownwardAPIVolumeFile(&file, p)...)
		}
		return errs
	})
	o.add(s.FC != nil, "fc", func(p *field.Path) field.ErrorList { return validateFC(s.FC, p) })
	o.add(s.FlexVolume != nil, "flexVolume", func(p *field.Path) field.ErrorList {
		return validateFlex(s.FlexVolume.Driver, s.FlexVolume.Options, p)
	})
	o.add(s.ConfigMap != nil, "configMap", func(p *field.Path) field.ErrorList { return validateConfigMapVolumeSource(s.ConfigMap, p) })
	o.add(s.AzureFile != nil, "azureFile", func(p *field.Path) field.ErrorList {
		return validateAzureFile(s.AzureFile.SecretName, s.AzureFile.ShareName, p)
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
	o.add(s.StorageOS != nil, "storageos", func(p *field.Path) field.ErrorList {
		errs := validateStorageOS(s.StorageOS.VolumeName, s.StorageOS.VolumeNamespace, p)
		if s.StorageOS.SecretRef != nil && len(s.StorageOS.SecretRef.Name) == 0 {
			errs = append(errs, field.Required(p.Child("secretRef", "name"), ""))
		}
		return errs
	})
	o.add(s.Projected != nil, "projected", func(p *field.Path) field.ErrorList { return validateProjectedVolumeSource(s.Projected, p) })
	o.add(s.ScaleIO != nil, "scaleIO", func(p *field.Path) field.ErrorList {
		return validateScaleIO(s.ScaleIO.Gateway, s.ScaleIO.System, s.ScaleIO.VolumeName, p)
	})
	o.add(s.CSI != nil, "csi", func(p *field.Path) field.ErrorList {
		errs := validateCSIDriverName(s.CSI.Driver, p.Child("driver"))
		if ref := s.CSI.NodePublishSecretRef; ref != nil {
			if len(ref.Name) == 0 {
				errs = append(errs, field.Required(p.Child("nodePublishSecretRef", "name"), ""))
			} else {
				errs = append(errs, validateName(apivalidation.NameIsDNSSubdomain, ref.Name, false, p.Child("name"))...)
			}
		}
		return errs
	})
	o.add(s.Ephemeral != nil, "ephemeral", func(p *field.Path) field.ErrorList {
		var errs field.ErrorList
		if s.Ephemeral.VolumeClaimTemplate == nil {
			errs = append(errs, field.Required(p.Child("volumeClaimTemplate"), ""))
		} else {
			errs = append(errs, validatePersistentVolumeClaimTemplate(s.Ephemeral.VolumeClaimTemplate, p.Child("volumeClaimTemplate"))...)
		}
		// The PVC gets the pod's name plus the volume's, which must itself
		// make a valid object name.
		if podMeta != nil && podMeta.Name != "" && volName != "" {
			pvcName := podMeta.Name + "-" + volName
			for _, msg := range apivalidation.NameIsDNSSubdomain(pvcName, false) {
				errs = append(errs, field.Invalid(fldPath.Child("name"), volName, fmt.Sprintf("PVC name %q: %v", pvcName, msg)))
			}
		}
		return errs
	})
	o.add(s.Image != nil, "image", func(p *field.Path) field.ErrorList {
		var errs field.ErrorList
		if podMeta != nil && len(s.Image.Reference) == 0 {
			errs = append(errs, field.Required(p.Child("reference"), ""))
		}
		return append(errs, validatePullPolicy(s.Image.PullPolicy, p.Child("pullPolicy"))...)
	})
	return o.done()
}

func requiredString(value string, fldPath *field.Path) field.ErrorList {
	if len(value) == 0 {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	return nil
}

var supportedHostPathTypes = sets.New(
	corev1.HostPathUnset,
	corev1.HostPathDirectoryOrCreate,
	corev1.HostPathDirectory,
	corev1.HostPathFileOrCreate,
	corev1.HostPathFile,
	corev1.HostPathSocket,
	corev1.HostPathCharDev,
	corev1.HostPathBlockDev)

func validateHostPathVolumeSource(h *corev1.HostPathVolumeSource, fldPath *field.Path) field.ErrorList {
	if len(h.Path) == 0 {
		return field.ErrorList{field.Required(fldPath.Child("path"), "")}
	}
	allErrs := validatePathNoBacksteps(h.Path, fldPath.Child("path"))
	if h.Type != nil && !supportedHostPathTypes.Has(*h.Type) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("type"), *h.Type, sets.List(supportedHostPathTypes)))
	}
	return allErrs
}

var pdPartitionErrorMsg = validation.InclusiveRangeError(1, 255)

func validateGCEPersistentDisk(pd *corev1.GCEPersistentDiskVolumeSource, fldPath *field.Path) field.ErrorList {
	allErrs := requiredString(pd.PDName, fldPath.Child("pdName"))
	if pd.Partition < 0 || pd.Partition > 255 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("partition"), pd.Partition, pdPartitionErrorMsg))
	}
	return allErrs
}

func validateAWSElasticBlockStore(pd *corev1.AWSElasticBlockStoreVolumeSource, fldPath *field.Path) field.ErrorList {
	allErrs := requiredString(pd.VolumeID, fldPath.Child("volumeID"))
	if pd.Partition < 0 || pd.Partition > 255 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("partition"), pd.Partition, pdPartitionErrorMsg))
	}
	return allErrs
}

func validateNFS(nfs *corev1.NFSVolumeSource, fldPath *field.Path) field.ErrorList {
	allErrs := requiredString(nfs.Server, fldPath.Child("server"))
	allErrs = append(allErrs, requiredString(nfs.Path, fldPath.Child("path"))...)
	if !path.IsAbs(nfs.Path) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("path"), nfs.Path, "must be an absolute path"))
	}
	return allErrs
}

var (
	iscsiInitiatorIqnRegex = regexp.MustCompile(`iqn\.\d{4}-\d{2}\.([[:alnum:]-.]+)(:[^,;*&$|\s]+)$`)
	iscsiInitiatorEuiRegex = regexp.MustCompile(`^eui.[[:alnum:]]{16}$`)
	iscsiInitiatorNaaRegex = regexp.MustCompile(`^naa.[[:alnum:]]{32}$`)
)

// iscsiNameErrors checks an iSCSI qualified name (iqn., eui. or naa.).
func iscsiNameErrors(value, prefixMsg string, fldPath *field.Path) field.ErrorList {
	switch {
	case !strings.HasPrefix(value, "iqn") && !strings.HasPrefix(value, "eui") && !strings.HasPrefix(value, "naa"):
		return field.ErrorList{field.Invalid(fldPath, value, prefixMsg)}
	case strings.HasPrefix(value, "iqn") && !iscsiInitiatorIqnRegex.MatchString(value),
		strings.HasPrefix(value, "eui") && !iscsiInitiatorEuiRegex.MatchString(value),
		strings.HasPrefix(value, "naa") && !iscsiInitiatorNaaRegex.MatchString(value):
		return field.ErrorList{field.Invalid(fldPath, value, "must be valid format")}
	}
	return nil
}

func validateISCSI(targetPortal, iqn string, lun int32, chap, hasSecret bool, initiator *string, prefixMsg string, fldPath *field.Path) field.ErrorList {
	allErrs := requiredString(targetPortal, fldPath.Child("targetPortal"))
	if len(iqn) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("iqn"), ""))
	} else {
		allErrs = append(allErrs, iscsiNameErrors(iqn, prefixMsg, fldPath.Child("iqn"))...)
	}
	if lun < 0 || lun > 255 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("lun"), lun, validation.InclusiveRangeError(0, 255)))
	}
	if chap && !hasSecret {
		allErrs = append(allErrs, field.Required(fldPath.Child("secretRef"), ""))
	}
	if initiator != nil {
		allErrs = append(allErrs, iscsiNameErrors(*initiator, prefixMsg, fldPath.Child("initiatorname"))...)
	}
	return allErrs
}

func validateGlusterfs(endpoints, glusterPath string, fldPath *field.Path) field.ErrorList {
	allErrs := requiredString(endpoints, fldPath.Child("endpoints"))
	return append(allErrs, requiredString(glusterPath, fldPath.Child("path"))...)
}

func validateFlocker(f *corev1.FlockerVolumeSource, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(f.DatasetName) == 0 && len(f.DatasetUUID) == 0 {
		allErrs = append(allErrs, field.Required(fldPath, "one of datasetName and datasetUUID is required"))
	}
	if len(f.DatasetName) != 0 && len(f.DatasetUUID) != 0 {
		allErrs = append(allErrs, field.Invalid(fldPath, "resource", "datasetName and datasetUUID can not be specified simultaneously"))
	}
	if strings.Contains(f.DatasetName, "/") {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("datasetName"), f.DatasetName, "must not contain '/'"))
	}
	return allErrs
}

func validateRBD(monitors []string, image string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(monitors) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("monitors"), ""))
	}
	return append(allErrs, requiredString(image, fldPath.Child("image"))...)
}

func validateQuobyte(q *corev1.QuobyteVolumeSource, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	const registryMsg = "must be a host:port pair or multiple pairs separated by commas"
	switch {
	case len(q.Registry) == 0:
		allErrs = append(allErrs, field.Required(fldPath.Child("registry"), registryMsg))
	case len(q.Tenant) >= 65:
		allErrs = append(allErrs, field.Required(fldPath.Child("tenant"), "must be a UUID and may not exceed a length of 64 characters"))
	default:
		for _, pair := range strings.Split(q.Registry, ",") {
			if _, _, err := net.SplitHostPort(pair); err != nil {
				allErrs = append(allErrs, field.Invalid(fldPath.Child("registry"), q.Registry, registryMsg))
			}
		}
	}
	return append(allErrs, requiredString(q.Volume, fldPath.Child("volume"))...)
}

func validateFC(fc *corev1.FCVolumeSource, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(fc.TargetWWNs) < 1 && len(fc.WWIDs) < 1 {
		allErrs = append(allErrs, field.Required(fldPath.Child("targetWWNs"), "must specify either targetWWNs or wwids, but not both"))
	}
	if len(fc.TargetWWNs) != 0 && len(fc.WWIDs) != 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("targetWWNs"), fc.TargetWWNs, "targetWWNs and wwids can not be specified simultaneously"))
	}
	if len(fc.TargetWWNs) != 0 {
		if fc.Lun == nil {
			allErrs = append(allErrs, field.Required(fldPath.Child("lun"), "lun is required if targetWWNs is specified"))
		} else if *fc.Lun < 0 || *fc.Lun > 255 {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("lun"), fc.Lun, validation.InclusiveRangeError(0, 255)))
		}
	}
	return allErrs
}

// validateFlex keeps flex volume options out of the kubernetes.io and
// k8s.io namespaces, which the system reserves for its own options.
func validateFlex(driver string, options map[string]string, fldPath *field.Path) field.ErrorList {
	allErrs := requiredString(driver, fldPath.Child("driver"))
	for k := range options {
		namespace := k
		if before, _, ok := strings.Cut(k, "/"); ok {
			namespace = before
		}
		normalized := "." + strings.ToLower(namespace)
		if strings.HasSuffix(normalized, ".kubernetes.io") || strings.HasSuffix(normalized, ".k8s.io") {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("options").Key(k), k, "kubernetes.io and k8s.io namespaces are reserved"))
		}
	}
	return allErrs
}

func validateAzureFile(secretName, shareName string, fldPath *field.Path) field.ErrorList {
	allErrs := requiredString(secretName, fldPath.Child("secretName"))
	return append(allErrs, requiredString(shareName, fldPath.Child("shareName"))...)
}

var (
	supportedCachingModes = sets.New(corev1.AzureDataDiskCachingNone, corev1.AzureDataDiskCachingReadOnly, corev1.AzureDataDiskCachingReadWrite)
	supportedDiskKinds    = sets.New(corev1.AzureSharedBlobDisk, corev1.AzureDedicatedBlobDisk, corev1.AzureManagedDisk)
)

func validateAzureDisk(a *corev1.AzureDiskVolumeSource, fldPath *field.Path) field.ErrorList {
	allErrs := requiredString(a.DiskName, fldPath.Child("diskName"))
	allErrs = append(allErrs, requiredString(a.DataDiskURI, fldPath.Child("diskURI"))...)
	if a.CachingMode != nil && !supportedCachingModes.Has(*a.CachingMode) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("cachingMode"), *a.CachingMode, sets.List(supportedCachingModes)))
	}
	if a.Kind != nil && !supportedDiskKinds.Has(*a.Kind) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("kind"), *a.Kind, sets.List(supportedDiskKinds)))
	}
	if a.Kind != nil && *a.Kind == corev1.AzureManagedDisk && !strings.HasPrefix(a.DataDiskURI, "/subscriptions/") {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("diskURI"), a.DataDiskURI,
			[]string{"/subscriptions/{sub-id}/resourcegroups/{group-name}/providers/microsoft.compute/disks/{disk-id}"}))
	}
	if a.Kind != nil && *a.Kind != corev1.AzureManagedDisk && !strings.HasPrefix(a.DataDiskURI, "https://") {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("diskURI"), a.DataDiskURI,
			[]string{"https://{account-name}.blob.core.windows.net/{container-name}/{disk-name}.vhd"}))
	}
	return allErrs
}

func validateStorageOS(volumeName, volumeNamespace string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(volumeName) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("volumeName"), ""))
	} else {
		allErrs = append(allErrs, validateDNS1123Label(volumeName, fldPath.Child("volumeName"))...)
	}
	if len(volumeNamespace) > 0 {
		allErrs = append(allErrs, validateDNS1123Label(volumeNamespace, fldPath.Child("volumeNamespace"))...)
	}
	return allErrs
}

func validateScaleIO(gateway, system, volumeName string, fldPath *field.Path) field.ErrorList {
	allErrs := requiredString(gateway, fldPath.Child("gateway"))
	allErrs = append(allErrs, requiredString(system, fldPath.Child("system"))...)
	return append(allErrs, requiredString(volumeName, fldPath.Child("volumeName"))...)
}

func validateCSIDriverName(driverName string, fldPath *field.Path) field.ErrorList {
	if len(driverName) == 0 {
		// Upstream says only that; the format errors of "" add nothing.
		return field.ErrorList{field.Required(fldPath, "")}
	}
	var allErrs field.ErrorList
	if len(driverName) > 63 {
		allErrs = append(allErrs, field.TooLong(fldPath, "", 63))
	}
	for _, msg := range validation.IsDNS1123Subdomain(strings.ToLower(driverName)) {
		allErrs = append(allErrs, field.Invalid(fldPath, driverName, msg))
	}
	return allErrs
}

func validateSecretVolumeSource(s *corev1.SecretVolumeSource, fldPath *field.Path) field.ErrorList {
	allErrs := requiredString(s.SecretName, fldPath.Child("secretName"))
	if m := s.DefaultMode; m != nil && (*m > 0777 || *m < 0) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("defaultMode"), *m, fileModeErrorMsg))
	}
	for i, kp := range s.Items {
		allErrs = append(allErrs, validateKeyToPath(&kp, fldPath.Child("items").Index(i))...)
	}
	return allErrs
}

func validateConfigMapVolumeSource(s *corev1.ConfigMapVolumeSource, fldPath *field.Path) field.ErrorList {
	allErrs := requiredString(s.Name, fldPath.Child("name"))
	if m := s.DefaultMode; m != nil && (*m > 0777 || *m < 0) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("defaultMode"), *m, fileModeErrorMsg))
	}
	for i, kp := range s.Items {
		allErrs = append(allErrs, validateKeyToPath(&kp, fldPath.Child("items").Index(i))...)
	}
	return allErrs
}

func validateKeyToPath(kp *corev1.KeyToPath, fldPath *field.Path) field.ErrorList {
	allErrs := requiredString(kp.Key, fldPath.Child("key"))
	allErrs = append(allErrs, requiredString(kp.Path, fldPath.Child("path"))...)
	allErrs = append(allErrs, validateLocalNonReservedPath(kp.Path, fldPath.Child("path"))...)
	if kp.Mode != nil && (*kp.Mode > 0777 || *kp.Mode < 0) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("mode"), *kp.Mode, fileModeErrorMsg))
	}
	return allErrs
}

var validVolumeDownwardAPIFieldPathExpressions = sets.New(
	"metadata.name",
	"metadata.namespace",
	"metadata.labels",
	"metadata.annotations",
	"metadata.uid")

func validateDownwardAPIVolumeFile(file *corev1.DownwardAPIVolumeFile, fldPath *field.Path) field.ErrorList {
	allErrs := requiredString(file.Path, fldPath.Child("path"))
	allErrs = append(allErrs, validateLocalNonReservedPath(file.Path, fldPath.Child("path"))...)
	switch {
	case file.FieldRef != nil:
		allErrs = append(allErrs, validateObjectFieldSelector(file.FieldRef, validVolumeDownwardAPIFieldPathExpressions, fldPath.Child("fieldRef"))...)
		if file.ResourceFieldRef != nil {
			allErrs = append(allErrs, field.Invalid(fldPath, "resource", "fieldRef and resourceFieldRef can not be specified simultaneously"))
		}
	case file.ResourceFieldRef != nil:
		allErrs = append(allErrs, validateContainerResourceFieldSelector(file.ResourceFieldRef, fldPath.Child("resourceFieldRef"), true)...)
	default:
		allErrs = append(allErrs, field.Required(fldPath, "one of fieldRef and resourceFieldRef is required"))
	}
	if file.Mode != nil && (*file.Mode > 0777 || *file.Mode < 0) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("mode"), *file.Mode, fileModeErrorMsg))
	}
	return allErrs
}

func validateProjectedVolumeSource(p *corev1.ProjectedVolumeSource, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if m := p.DefaultMode; m != nil && (*m > 0777 || *m < 0) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("defaultMode"), *m, fileModeErrorMsg))
	}
	allPaths := sets.Set[string]{}
	// Each projected file lands in one directory, so paths must not clash
	// across sources.
	addPath := func(p, name string) {
		if p == "" {
			return
		}
		if allPaths.Has(p) {
			allErrs = append(allErrs, field.Invalid(fldPath, name, "conflicting duplicate paths"))
		}
		allPaths.Insert(p)
	}
	for i, source := range p.Sources {
		numSources := 0
		srcPath := fldPath.Child("sources").Index(i)
		if source.Secret != nil {
			numSources++
			projPath := srcPath.Child("secret")
			if len(source.Secret.Name) == 0 {
				allErrs = append(allErrs, field.Required(projPath.Child("name"), ""))
			}
			for j, kp := range source.Secret.Items {
				allErrs = append(allErrs, validateKeyToPath(&kp, projPath.Child("items").Index(j))...)
				addPath(kp.Path, source.Secret.Name)
			}
		}
		if source.ConfigMap != nil {
			numSources++
			projPath := srcPath.Child("configMap")
			if len(source.ConfigMap.Name) == 0 {
				allErrs = append(allErrs, field.Required(projPath.Child("name"), ""))
			}
			for j, kp := range source.ConfigMap.Items {
				allErrs = append(allErrs, validateKeyToPath(&kp, projPath.Child("items").Index(j))...)
				addPath(kp.Path, source.ConfigMap.Name)
			}
		}
		if source.DownwardAPI != nil {
			numSources++
			projPath := srcPath.Child("downwardAPI")
			for _, file := range source.DownwardAPI.Items {
				allErrs = append(allErrs, validateDownwardAPIVolumeFile(&file, projPath)...)
				addPath(file.Path, file.Path)
			}
		}
		if sat := source.ServiceAccountToken; sat != nil {
			numSources++
			projPath := srcPath.Child("serviceAccountToken")
			if sat.ExpirationSeconds != nil {
				if *sat.ExpirationSeconds < 10*60 {
					allErrs = append(allErrs, field.Invalid(projPath.Child("expirationSeconds"), *sat.ExpirationSeconds, "may not specify a duration less than 10 minutes"))
				}
				if *sat.ExpirationSeconds > 1<<32 {
					allErrs = append(allErrs, field.Invalid(projPath.Child("expirationSeconds"), *sat.ExpirationSeconds, "may not specify a duration larger than 2^32 seconds"))
				}
			}
			if sat.Path == "" {
				allErrs = append(allErrs, field.Required(fldPath.Child("path"), ""))
			} else {
				allErrs = append(allErrs, validateLocalNonReservedPath(sat.Path, fldPath.Child("path"))...)
			}
		}
		if ctb := source.ClusterTrustBundle; ctb != nil {
			numSources++
			projPath := srcPath.Child("clusterTrustBundle")
			switch {
			case ctb.Name != nil && ctb.SignerName != nil:
				allErrs = append(allErrs, field.Invalid(projPath, ctb, "only one of name and signerName may be used"))
			case ctb.Name != nil:
				if *ctb.Name == "" {
					allErrs = append(allErrs, field.Required(projPath.Child("name"), "must be a valid object name"))
				}
				// A name that looks like a signer's bundle must follow the
				// naming rule of that signer.
				signer := ""
				if i := strings.LastIndex(*ctb.Name, ":"); i >= 0 {
					signer = strings.ReplaceAll((*ctb.Name)[:i], ":", "/")
				}
				for _, msg := range certificates.ClusterTrustBundleNameFor(signer)(*ctb.Name, false) {
					allErrs = append(allErrs, field.Invalid(projPath.Child("name"), *ctb.Name, "not a valid clustertrustbundlename: "+msg))
				}
				if ctb.LabelSelector != nil {
					allErrs = append(allErrs, field.Invalid(projPath.Child("labelSelector"), ctb.LabelSelector, "labelSelector must be unset if name is specified"))
				}
			case ctb.SignerName != nil:
				if *ctb.SignerName == "" {
					allErrs = append(allErrs, field.Required(projPath.Child("signerName"), "must be a valid signer name"))
				} else {
					allErrs = append(allErrs, certificates.ValidateSignerName(projPath.Child("signerName"), *ctb.SignerName)...)
				}
				allErrs = append(allErrs, metav1validation.ValidateLabelSelector(ctb.LabelSelector,
					metav1validation.LabelSelectorValidationOptions{}, projPath.Child("labelSelector"))...)
			default:
				allErrs = append(allErrs, field.Required(projPath, "either name or signerName must be specified"))
			}
			if ctb.Path == "" {
				allErrs = append(allErrs, field.Required(projPath.Child("path"), ""))
			}
			allErrs = append(allErrs, validateLocalNonReservedPath(ctb.Path, projPath.Child("path"))...)
			addPath(ctb.Path, ctb.Path)
		}
		if pc := source.PodCertificate; pc != nil {
			numSources++
			allErrs = append(allErrs, validatePodCertificateProjection(pc, srcPath.Child("podCertificate"), addPath)...)
		}
		if numSources > 1 {
			allErrs = append(allErrs, field.Forbidden(srcPath, "may not specify more than 1 volume type per source"))
		}
	}
	return allErrs
}

// podCertificateKeyTypes are the keys a kubelet generates for pods.
var podCertificateKeyTypes = []string{"RSA3072", "RSA4096", "ECDSAP256", "ECDSAP384", "ECDSAP521", "ED25519"}

// validatePodCertificateProjection is upstream's check of a podCertificate
// source: a signer, a key type the kubelet knows, a lifetime within the
// signer's bounds, at least one file, and domain-prefixed annotations.
func validatePodCertificateProjection(pc *corev1.PodCertificateProjection, projPath *field.Path, addPath func(p, name string)) field.ErrorList {
	allErrs := certificates.ValidateSignerName(projPath.Child("signerName"), pc.SignerName)
	if !slices.Contains(podCertificateKeyTypes, pc.KeyType) {
		allErrs = append(allErrs, field.NotSupported(projPath.Child("keyType"), pc.KeyType, podCertificateKeyTypes))
	}
	if e := pc.MaxExpirationSeconds; e != nil {
		if *e < certificates.MinMaxExpirationSeconds {
			allErrs = append(allErrs, field.Invalid(projPath.Child("maxExpirationSeconds"), *e, fmt.Sprintf("if provided, maxExpirationSeconds must be >= %d", certificates.MinMaxExpirationSeconds)))
		}
		hi := certificates.MaxMaxExpirationSeconds
		if certificates.IsKubernetesSignerName(pc.SignerName) {
			hi = certificates.KubernetesMaxMaxExpirationSeconds
		}
		if *e > int32(hi) {
			allErrs = append(allErrs, field.Invalid(projPath.Child("maxExpirationSeconds"), *e, fmt.Sprintf("if provided, maxExpirationSeconds must be <= %d", hi)))
		}
	}
	paths := 0
	for _, f := range []struct {
		name, path string
	}{{"credentialBundlePath", pc.CredentialBundlePath}, {"keyPath", pc.KeyPath}, {"certificateChainPath", pc.CertificateChainPath}} {
		if f.path == "" {
			continue
		}
		paths++
		allErrs = append(allErrs, validateLocalNonReservedPath(f.path, projPath.Child(f.name))...)
		addPath(f.path, f.path)
	}
	if paths == 0 {
		allErrs = append(allErrs, field.Required(projPath, "specify at least one of credentialBundlePath, keyPath, and certificateChainPath"))
	}
	if pc.UserAnnotations != nil {
		allErrs = append(allErrs, certificates.ValidateUserAnnotations(pc.UserAnnotations, projPath.Child("userAnnotations"))...)
	}
	return allErrs
}

// validatePersistentVolumeClaimTemplate checks the claim template of an
// ephemeral volume. Only labels and annotations of its metadata are used,
// so nothing else may be set there.
func validatePersistentVolumeClaimTemplate(t *corev1.PersistentVolumeClaimTemplate, fldPath *field.Path) field.ErrorList {
	allErrs := validateTemplateObjectMeta(&t.ObjectMeta, fldPath.Child("metadata"))
	return append(allErrs, ValidatePersistentVolumeClaimSpec(&t.Spec, fldPath.Child("spec"))...)
}

var allowedTemplateObjectMetaFields = map[string]bool{
	"Annotations": true,
	"Labels":      true,
}

func validateTemplateObjectMeta(meta *metav1.ObjectMeta, fldPath *field.Path) field.ErrorList {
	allErrs := apivalidation.ValidateAnnotations(meta.Annotations, fldPath.Child("annotations"))
	allErrs = append(allErrs, metav1validation.ValidateLabels(meta.Labels, fldPath.Child("labels"))...)
	return append(allErrs, validateFieldAllowList(*meta, allowedTemplateObjectMetaFields, "cannot be set", fldPath)...)
}

// ---- persistent volume claims ----

var (
	supportedAccessModes = sets.New(
		corev1.ReadWriteOnce, corev1.ReadOnlyMany, corev1.ReadWriteMany, corev1.ReadWriteOncePod)
	supportedVolumeModes = sets.New(corev1.PersistentVolumeBlock, corev1.PersistentVolumeFilesystem)
)

// validateAccessModes: known modes, and ReadWriteOncePod alone.
func validateAccessModes(modes []corev1.PersistentVolumeAccessMode, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	foundRWOP, foundOther := false, false
	for _, mode := range modes {
		if !supportedAccessModes.Has(mode) {
			allErrs = append(allErrs, field.NotSupported(fldPath, mode, sets.List(supportedAccessModes)))
		}
		if mode == corev1.ReadWriteOncePod {
			foundRWOP = true
		} else if supportedAccessModes.Has(mode) {
			foundOther = true
		}
	}
	if foundRWOP && foundOther {
		allErrs = append(allErrs, field.Forbidden(fldPath, "may not use ReadWriteOncePod with other access modes"))
	}
	return allErrs
}

func validateDataSourceCommon(name, kind string, apiGroup *string, fldPath *field.Path) field.ErrorList {
	allErrs := requiredString(name, fldPath.Child("name"))
	allErrs = append(allErrs, requiredString(kind, fldPath.Child("kind"))...)
	group := ""
	if apiGroup != nil {
		group = *apiGroup
	}
	if len(group) == 0 && kind != "PersistentVolumeClaim" {
		allErrs = append(allErrs, field.Invalid(fldPath, kind, "must be 'PersistentVolumeClaim' when referencing the default apiGroup"))
	}
	if len(group) > 0 {
		for _, msg := range validation.IsDNS1123Subdomain(group) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("apiGroup"), group, msg))
		}
	}
	return allErrs
}
