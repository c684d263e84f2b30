package core

import (
	"math"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidatePodSpec checks a pod spec found at fldPath, the way upstream
// checks both pods and the templates embedded in other resources. Checks
// that only make sense for a real Pod (its name, image whitespace, host
// ports under hostNetwork) are done by the pods resource itself.
func ValidatePodSpec(spec *corev1.PodSpec, fldPath *field.Path) field.ErrorList {
	return validatePodSpec(spec, nil, fldPath, false)
}

// ValidatePodTemplateSpec checks a pod template found at fldPath: its labels
// and annotations, the pod-specific annotations, and its spec. Pod templates
// may not carry ephemeral containers.
func ValidatePodTemplateSpec(t *corev1.PodTemplateSpec, fldPath *field.Path) field.ErrorList {
	// Upstream reports template metadata at "<template>.labels", without
	// "metadata"; clients see those paths, so they are kept.
	allErrs := metav1validation.ValidateLabels(t.Labels, fldPath.Child("labels"))
	allErrs = append(allErrs, apivalidation.ValidateAnnotations(t.Annotations, fldPath.Child("annotations"))...)
	allErrs = append(allErrs, validatePodSpecificAnnotations(t.Annotations, &t.Spec, fldPath.Child("annotations"))...)
	allErrs = append(allErrs, ValidatePodSpec(&t.Spec, fldPath.Child("spec"))...)
	if len(t.Spec.EphemeralContainers) > 0 {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("spec", "ephemeralContainers"), "ephemeral containers not allowed in pod template"))
	}
	return allErrs
}

// ValidatePersistentVolumeClaimSpec checks a claim spec found at fldPath:
// access modes, the storage request, the selector, the class names, the
// volume mode and the data sources.
func ValidatePersistentVolumeClaimSpec(spec *corev1.PersistentVolumeClaimSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(spec.AccessModes) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("accessModes"), "at least 1 access mode is required"))
	}
	if spec.Selector != nil {
		allErrs = append(allErrs, metav1validation.ValidateLabelSelector(spec.Selector,
			metav1validation.LabelSelectorValidationOptions{}, fldPath.Child("selector"))...)
	}
	allErrs = append(allErrs, validateAccessModes(spec.AccessModes, fldPath.Child("accessModes"))...)

	// Upstream reports the storage request at "<spec>.resources[storage]".
	storagePath := fldPath.Child("resources").Key(string(corev1.ResourceStorage))
	if storage, ok := spec.Resources.Requests[corev1.ResourceStorage]; !ok {
		allErrs = append(allErrs, field.Required(storagePath, ""))
	} else if errs := validatePositiveQuantityValue(storage, storagePath); len(errs) > 0 {
		allErrs = append(allErrs, errs...)
	} else {
		allErrs = append(allErrs, validateResourceQuantityValue(corev1.ResourceStorage, storage, storagePath)...)
	}

	if spec.StorageClassName != nil && len(*spec.StorageClassName) > 0 {
		allErrs = append(allErrs, validateName(apivalidation.NameIsDNSSubdomain, *spec.StorageClassName, false, fldPath.Child("storageClassName"))...)
	}
	if spec.VolumeMode != nil && !supportedVolumeModes.Has(*spec.VolumeMode) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("volumeMode"), *spec.VolumeMode, sets.List(supportedVolumeModes)))
	}
	if ds := spec.DataSource; ds != nil {
		allErrs = append(allErrs, validateDataSourceCommon(ds.Name, ds.Kind, ds.APIGroup, fldPath.Child("dataSource"))...)
	}
	if ref := spec.DataSourceRef; ref != nil {
		p := fldPath.Child("dataSourceRef")
		allErrs = append(allErrs, validateDataSourceCommon(ref.Name, ref.Kind, ref.APIGroup, p)...)
		if ref.Namespace != nil && len(*ref.Namespace) > 0 {
			allErrs = append(allErrs, validateName(apivalidation.ValidateNamespaceName, *ref.Namespace, false, p.Child("namespace"))...)
		}
	}
	if ref := spec.DataSourceRef; ref != nil && ref.Namespace != nil && len(*ref.Namespace) > 0 {
		if spec.DataSource != nil {
			allErrs = append(allErrs, field.Invalid(fldPath, fldPath.Child("dataSource"), "may not be specified when dataSourceRef.namespace is specified"))
		}
	} else if ds := spec.DataSource; ds != nil && ref != nil {
		if !semanticEqual(ds.APIGroup, ref.APIGroup) || ds.Kind != ref.Kind || ds.Name != ref.Name {
			allErrs = append(allErrs, field.Invalid(fldPath, fldPath.Child("dataSource"), "must match dataSourceRef"))
		}
	}
	if c := spec.VolumeAttributesClassName; c != nil && len(*c) > 0 {
		allErrs = append(allErrs, validateName(apivalidation.NameIsDNSSubdomain, *c, false, fldPath.Child("volumeAttributesClassName"))...)
	}
	return allErrs
}

// validatePodSpec is ValidatePodSpec with the pod's metadata when the spec is
// a real Pod's (needed to name the claims of ephemeral volumes) and isPod
// for the few rules that differ between pods and templates.
func validatePodSpec(spec *corev1.PodSpec, podMeta *metav1.ObjectMeta, fldPath *field.Path, isPod bool) field.ErrorList {
	var allErrs field.ErrorList
	if spec.TerminationGracePeriodSeconds == nil {
		allErrs = append(allErrs, field.Required(fldPath.Child("terminationGracePeriodSeconds"), ""))
	} else {
		allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(*spec.TerminationGracePeriodSeconds, fldPath.Child("terminationGracePeriodSeconds"))...)
	}
	gracePeriod := spec.TerminationGracePeriodSeconds
	hostUsers := spec.HostUsers == nil || *spec.HostUsers

	vols, vErrs := validateVolumes(spec.Volumes, podMeta, fldPath.Child("volumes"))
	allErrs = append(allErrs, vErrs...)
	podClaimNames := sets.Set[string]{}
	for _, c := range spec.ResourceClaims {
		if c.Name != "" {
			podClaimNames.Insert(c.Name)
		}
	}
	allErrs = append(allErrs, validatePodResourceClaims(spec.ResourceClaims, fldPath.Child("resourceClaims"))...)
	allErrs = append(allErrs, validateContainers(spec.Containers, vols, podClaimNames, gracePeriod, fldPath.Child("containers"), spec.RestartPolicy, hostUsers)...)
	allErrs = append(allErrs, validateInitContainers(spec.InitContainers, spec.Containers, vols, podClaimNames, gracePeriod, fldPath.Child("initContainers"), spec.RestartPolicy, hostUsers)...)
	allErrs = append(allErrs, validateEphemeralContainers(spec.EphemeralContainers, spec.Containers, spec.InitContainers, vols, podClaimNames, fldPath.Child("ephemeralContainers"), spec.RestartPolicy, hostUsers)...)
	if spec.Resources != nil {
		allErrs = append(allErrs, validatePodResources(spec.Resources, podClaimNames, fldPath.Child("resources"))...)
	}
	allErrs = append(allErrs, validatePodHostNetworkDeps(spec, fldPath, isPod)...)
	allErrs = append(allErrs, validateRestartPolicy(spec.RestartPolicy, fldPath.Child("restartPolicy"))...)
	allErrs = append(allErrs, validateDNSPolicy(spec.DNSPolicy, fldPath.Child("dnsPolicy"))...)
	allErrs = append(allErrs, metav1validation.ValidateLabels(spec.NodeSelector, fldPath.Child("nodeSelector"))...)
	allErrs = append(allErrs, validatePodSpecSecurityContext(spec, fldPath.Child("securityContext"))...)
	allErrs = append(allErrs, validateAffinity(spec.Affinity, fldPath.Child("affinity"))...)
	allErrs = append(allErrs, validatePodDNSConfig(spec.DNSConfig, spec.DNSPolicy, fldPath.Child("dnsConfig"))...)
	for i, g := range spec.ReadinessGates {
		allErrs = append(allErrs, validateQualifiedName(string(g.ConditionType), fldPath.Child("readinessGates").Index(i).Child("conditionType"))...)
	}
	allErrs = append(allErrs, validateSchedulingGates(spec.SchedulingGates, fldPath.Child("schedulingGates"))...)
	allErrs = append(allErrs, validateTopologySpreadConstraints(spec.TopologySpreadConstraints, fldPath.Child("topologySpreadConstraints"))...)
	allErrs = append(allErrs, validateWindowsHostProcessPod(spec, fldPath)...)
	allErrs = append(allErrs, validateHostUsers(spec, fldPath)...)
	if len(spec.ServiceAccountName) > 0 {
		allErrs = append(allErrs, validateName(apivalidation.ValidateServiceAccountName, spec.ServiceAccountName, false, fldPath.Child("serviceAccountName"))...)
	}
	if len(spec.NodeName) > 0 {
		allErrs = append(allErrs, validateName(apivalidation.NameIsDNSSubdomain, spec.NodeName, false, fldPath.Child("nodeName"))...)
	}
	if spec.ActiveDeadlineSeconds != nil {
		if v := *spec.ActiveDeadlineSeconds; v < 1 || v > math.MaxInt32 {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("activeDeadlineSeconds"), v, validation.InclusiveRangeError(1, math.MaxInt32)))
		}
	}
	if len(spec.Hostname) > 0 {
		allErrs = append(allErrs, validateDNS1123Label(spec.Hostname, fldPath.Child("hostname"))...)
	}
	if len(spec.Subdomain) > 0 {
		allErrs = append(allErrs, validateDNS1123Label(spec.Subdomain, fldPath.Child("subdomain"))...)
	}
	allErrs = append(allErrs, validateTolerations(spec.Tolerations, fldPath.Child("tolerations"))...)
	for i, ha := range spec.HostAliases {
		allErrs = append(allErrs, validation.IsValidIP(fldPath.Child("hostAliases").Index(i).Child("ip"), ha.IP)...)
		for j, hostname := range ha.Hostnames {
			allErrs = append(allErrs, validateDNS1123Subdomain(hostname, fldPath.Child("hostAliases").Index(i).Child("hostnames").Index(j))...)
		}
	}
	if len(spec.PriorityClassName) > 0 {
		allErrs = append(allErrs, validateName(apivalidation.NameIsDNSSubdomain, spec.PriorityClassName, false, fldPath.Child("priorityClassName"))...)
	}
	if spec.RuntimeClassName != nil {
		allErrs = append(allErrs, validateName(apivalidation.NameIsDNSSubdomain, *spec.RuntimeClassName, false, fldPath.Child("runtimeClassName"))...)
	}
	if spec.PreemptionPolicy != nil {
		switch *spec.PreemptionPolicy {
		case corev1.PreemptLowerPriority, corev1.PreemptNever:
		case "":
			allErrs = append(allErrs, field.Required(fldPath.Child("preemptionPolicy"), ""))
		default:
			allErrs = append(allErrs, field.NotSupported(fldPath.Child("preemptionPolicy"), *spec.PreemptionPolicy,
				[]corev1.PreemptionPolicy{corev1.PreemptLowerPriority, corev1.PreemptNever}))
		}
	}
	if spec.Overhead != nil {
		allErrs = append(allErrs, validateResourceRequirements(&corev1.ResourceRequirements{Limits: spec.Overhead},
			validateContainerResourceName, nil, fldPath.Child("overhead"))...)
	}
	if spec.OS != nil {
		osErrs := validateOS(spec.OS, fldPath.Child("os"))
		switch {
		case len(osErrs) > 0:
			allErrs = append(allErrs, osErrs...)
		case spec.OS.Name == corev1.Linux:
			allErrs = append(allErrs, validateLinux(spec, fldPath)...)
		case spec.OS.Name == corev1.Windows:
			allErrs = append(allErrs, validateWindows(spec, fldPath)...)
		}
	}
	return allErrs
}
