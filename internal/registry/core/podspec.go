package core

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ---- defaults ----

// DefaultPodSpec fills in the defaults upstream gives every pod spec,
// whether in a Pod or in a template (Deployment, Job...): restart and DNS
// policies, grace period, scheduler, an empty security context, and the
// per-container, per-probe and per-volume defaults. The defaults that only
// a Pod gets (requests from limits, enableServiceLinks, host ports under
// hostNetwork) are not applied here, as upstream keeps them out of
// templates.
func DefaultPodSpec(spec *corev1.PodSpec) {
	// serviceAccount is the deprecated alias of serviceAccountName: upstream
	// reads it only when the name is empty and always writes it back equal
	// to the name (its conversion through the internal type, which has no
	// alias).
	if spec.ServiceAccountName == "" {
		spec.ServiceAccountName = spec.DeprecatedServiceAccount
	}
	spec.DeprecatedServiceAccount = spec.ServiceAccountName
	if spec.DNSPolicy == "" {
		spec.DNSPolicy = corev1.DNSClusterFirst
	}
	if spec.RestartPolicy == "" {
		spec.RestartPolicy = corev1.RestartPolicyAlways
	}
	if spec.SecurityContext == nil {
		spec.SecurityContext = &corev1.PodSecurityContext{}
	}
	if spec.TerminationGracePeriodSeconds == nil {
		spec.TerminationGracePeriodSeconds = ptrTo(int64(corev1.DefaultTerminationGracePeriodSeconds))
	}
	if spec.SchedulerName == "" {
		spec.SchedulerName = corev1.DefaultSchedulerName
	}
	for i := range spec.Volumes {
		defaultVolume(&spec.Volumes[i])
	}
	for i := range spec.InitContainers {
		defaultContainer(&spec.InitContainers[i])
	}
	for i := range spec.Containers {
		defaultContainer(&spec.Containers[i])
	}
	for i := range spec.EphemeralContainers {
		defaultContainer((*corev1.Container)(&spec.EphemeralContainers[i].EphemeralContainerCommon))
	}
	roundUpResourceList(spec.Overhead)
	if spec.Resources != nil {
		roundUpResourceRequirements(spec.Resources)
	}
}

// DefaultPodTemplateSpec fills in the defaults of a pod template's spec.
// Template metadata has no defaults.
func DefaultPodTemplateSpec(t *corev1.PodTemplateSpec) {
	DefaultPodSpec(&t.Spec)
}

// DefaultPersistentVolumeClaimSpec fills in the defaults of a claim spec,
// standalone or in a StatefulSet's or ephemeral volume's claim template.
func DefaultPersistentVolumeClaimSpec(spec *corev1.PersistentVolumeClaimSpec) {
	if spec.VolumeMode == nil {
		spec.VolumeMode = ptrTo(corev1.PersistentVolumeFilesystem)
	}
	roundUpResourceList(spec.Resources.Limits)
	roundUpResourceList(spec.Resources.Requests)
}

func defaultContainer(c *corev1.Container) {
	if c.ImagePullPolicy == "" {
		c.ImagePullPolicy = defaultPullPolicy(c.Image)
	}
	if c.TerminationMessagePath == "" {
		c.TerminationMessagePath = corev1.TerminationMessagePathDefault
	}
	if c.TerminationMessagePolicy == "" {
		c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
	}
	for i := range c.Ports {
		if c.Ports[i].Protocol == "" {
			c.Ports[i].Protocol = corev1.ProtocolTCP
		}
	}
	for i := range c.Env {
		if vf := c.Env[i].ValueFrom; vf != nil {
			if vf.FieldRef != nil && vf.FieldRef.APIVersion == "" {
				vf.FieldRef.APIVersion = "v1"
			}
			if vf.FileKeyRef != nil && vf.FileKeyRef.Optional == nil {
				vf.FileKeyRef.Optional = ptrTo(false)
			}
		}
	}
	roundUpResourceRequirements(&c.Resources)
	for _, p := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
		if p != nil {
			defaultProbe(p)
		}
	}
	if c.Lifecycle != nil {
		for _, h := range []*corev1.LifecycleHandler{c.Lifecycle.PostStart, c.Lifecycle.PreStop} {
			if h != nil && h.HTTPGet != nil {
				defaultHTTPGet(h.HTTPGet)
			}
		}
	}
}

func defaultProbe(p *corev1.Probe) {
	if p.TimeoutSeconds == 0 {
		p.TimeoutSeconds = 1
	}
	if p.PeriodSeconds == 0 {
		p.PeriodSeconds = 10
	}
	if p.SuccessThreshold == 0 {
		p.SuccessThreshold = 1
	}
	if p.FailureThreshold == 0 {
		p.FailureThreshold = 3
	}
	if p.HTTPGet != nil {
		defaultHTTPGet(p.HTTPGet)
	}
	if p.GRPC != nil && p.GRPC.Service == nil {
		p.GRPC.Service = ptrTo("")
	}
}

func defaultHTTPGet(h *corev1.HTTPGetAction) {
	if h.Path == "" {
		h.Path = "/"
	}
	if h.Scheme == "" {
		h.Scheme = corev1.URISchemeHTTP
	}
}

// defaultPullPolicy: Always for a :latest (or untagged, undigested) image,
// since such a tag is expected to move; IfNotPresent otherwise.
func defaultPullPolicy(image string) corev1.PullPolicy {
	if imageTag(image) == "latest" {
		return corev1.PullAlways
	}
	return corev1.PullIfNotPresent
}

var (
	imagePathComponent = regexp.MustCompile(`^[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*$`)
	imageTagPattern    = regexp.MustCompile(`^[\w][\w.-]{0,127}$`)
)

// imageTag returns what upstream's parsers.ParseImageName does for the tag
// of a docker reference: the tag, "latest" when there is neither tag nor
// digest, and "" when the reference does not parse.
func imageTag(image string) string {
	name, _, hasDigest := strings.Cut(image, "@")
	tag := ""
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		name, tag = name[:i], name[i+1:]
		if !imageTagPattern.MatchString(tag) {
			return ""
		}
	}
	if name == "" {
		return ""
	}
	components := strings.Split(name, "/")
	// A first component that looks like a host (or has upper case, which no
	// repository path may) is the registry, not part of the path.
	if first := components[0]; len(components) > 1 &&
		(strings.ContainsAny(first, ".:") || first == "localhost" || strings.ToLower(first) != first) {
		components = components[1:]
	}
	for _, c := range components {
		if !imagePathComponent.MatchString(c) {
			return ""
		}
	}
	if tag == "" && !hasDigest {
		return "latest"
	}
	return tag
}

// ---- validation entry points ----

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

// ---- containers ----

func validateContainers(containers []corev1.Container, vols map[string]corev1.VolumeSource, podClaimNames sets.Set[string], gracePeriod *int64, fldPath *field.Path, restartPolicy corev1.RestartPolicy, hostUsers bool) field.ErrorList {
	if len(containers) == 0 {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	var allErrs field.ErrorList
	allNames := sets.Set[string]{}
	for i := range containers {
		ctr := &containers[i]
		p := fldPath.Index(i)
		allErrs = append(allErrs, validateContainerCommon(ctr, vols, podClaimNames, p, restartPolicy, hostUsers)...)
		// Clashes with init and ephemeral containers are reported by those
		// lists, so each clash is reported once.
		if allNames.Has(ctr.Name) {
			allErrs = append(allErrs, field.Duplicate(p.Child("name"), ctr.Name))
		} else {
			allNames.Insert(ctr.Name)
		}
		if ctr.Lifecycle != nil {
			allErrs = append(allErrs, validateLifecycle(ctr.Lifecycle, gracePeriod, p.Child("lifecycle"))...)
		}
		allErrs = append(allErrs, validateLivenessProbe(ctr.LivenessProbe, gracePeriod, p.Child("livenessProbe"))...)
		allErrs = append(allErrs, validateReadinessProbe(ctr.ReadinessProbe, gracePeriod, p.Child("readinessProbe"))...)
		allErrs = append(allErrs, validateStartupProbe(ctr.StartupProbe, gracePeriod, p.Child("startupProbe"))...)
		if ctr.RestartPolicy != nil {
			allErrs = append(allErrs, field.Forbidden(p.Child("restartPolicy"), "may not be set for non-init containers"))
		}
	}
	// Regular containers run together, so their host ports may not clash.
	return append(allErrs, checkHostPortConflicts(containers, fldPath)...)
}

func validateInitContainers(containers, regular []corev1.Container, vols map[string]corev1.VolumeSource, podClaimNames sets.Set[string], gracePeriod *int64, fldPath *field.Path, restartPolicy corev1.RestartPolicy, hostUsers bool) field.ErrorList {
	var allErrs field.ErrorList
	allNames := sets.Set[string]{}
	for _, c := range regular {
		allNames.Insert(c.Name)
	}
	for i := range containers {
		ctr := &containers[i]
		p := fldPath.Index(i)
		allErrs = append(allErrs, validateContainerCommon(ctr, vols, podClaimNames, p, restartPolicy, hostUsers)...)
		restartAlways := false
		if ctr.RestartPolicy != nil {
			if *ctr.RestartPolicy != corev1.ContainerRestartPolicyAlways {
				allErrs = append(allErrs, field.NotSupported(p.Child("restartPolicy"), *ctr.RestartPolicy,
					[]corev1.ContainerRestartPolicy{corev1.ContainerRestartPolicyAlways}))
			}
			restartAlways = *ctr.RestartPolicy == corev1.ContainerRestartPolicyAlways
		}
		if allNames.Has(ctr.Name) {
			allErrs = append(allErrs, field.Duplicate(p.Child("name"), ctr.Name))
		} else if len(ctr.Name) > 0 {
			allNames.Insert(ctr.Name)
		}
		// Init containers run one by one, so only clashes within one count.
		allErrs = append(allErrs, checkHostPortConflicts([]corev1.Container{*ctr}, fldPath)...)
		if restartAlways {
			// Sidecars run alongside the regular containers and may have
			// what they have.
			if ctr.Lifecycle != nil {
				allErrs = append(allErrs, validateLifecycle(ctr.Lifecycle, gracePeriod, p.Child("lifecycle"))...)
			}
			allErrs = append(allErrs, validateLivenessProbe(ctr.LivenessProbe, gracePeriod, p.Child("livenessProbe"))...)
			allErrs = append(allErrs, validateReadinessProbe(ctr.ReadinessProbe, gracePeriod, p.Child("readinessProbe"))...)
			allErrs = append(allErrs, validateStartupProbe(ctr.StartupProbe, gracePeriod, p.Child("startupProbe"))...)
		} else {
			const msg = "may not be set for init containers without restartPolicy=Always"
			if ctr.Lifecycle != nil {
				allErrs = append(allErrs, field.Forbidden(p.Child("lifecycle"), msg))
			}
			if ctr.LivenessProbe != nil {
				allErrs = append(allErrs, field.Forbidden(p.Child("livenessProbe"), msg))
			}
			if ctr.ReadinessProbe != nil {
				allErrs = append(allErrs, field.Forbidden(p.Child("readinessProbe"), msg))
			}
			if ctr.StartupProbe != nil {
				allErrs = append(allErrs, field.Forbidden(p.Child("startupProbe"), msg))
			}
		}
	}
	return allErrs
}

// allowedEphemeralContainerFields: ephemeral containers are for debugging,
// not for pod services, so ports, probes, lifecycle and resources are out.
var allowedEphemeralContainerFields = map[string]bool{
	"Name":                     true,
	"Image":                    true,
	"Command":                  true,
	"Args":                     true,
	"WorkingDir":               true,
	"EnvFrom":                  true,
	"Env":                      true,
	"VolumeMounts":             true,
	"VolumeDevices":            true,
	"TerminationMessagePath":   true,
	"TerminationMessagePolicy": true,
	"ImagePullPolicy":          true,
	"SecurityContext":          true,
	"Stdin":                    true,
	"StdinOnce":                true,
	"TTY":                      true,
}

func validateEphemeralContainers(ecs []corev1.EphemeralContainer, containers, initContainers []corev1.Container, vols map[string]corev1.VolumeSource, podClaimNames sets.Set[string], fldPath *field.Path, restartPolicy corev1.RestartPolicy, hostUsers bool) field.ErrorList {
	var allErrs field.ErrorList
	otherNames, allNames := sets.Set[string]{}, sets.Set[string]{}
	for _, c := range append(append([]corev1.Container{}, containers...), initContainers...) {
		otherNames.Insert(c.Name)
		allNames.Insert(c.Name)
	}
	for i := range ecs {
		ec := &ecs[i]
		p := fldPath.Index(i)
		c := (*corev1.Container)(&ec.EphemeralContainerCommon)
		allErrs = append(allErrs, validateContainerCommon(c, vols, podClaimNames, p, restartPolicy, hostUsers)...)
		allErrs = append(allErrs, validateContainerOnlyForPod(c, p)...)
		if allNames.Has(ec.Name) {
			allErrs = append(allErrs, field.Duplicate(p.Child("name"), ec.Name))
		} else {
			allNames.Insert(ec.Name)
		}
		if ec.TargetContainerName != "" && !otherNames.Has(ec.TargetContainerName) {
			allErrs = append(allErrs, field.NotFound(p.Child("targetContainerName"), ec.TargetContainerName))
		}
		allErrs = append(allErrs, validateFieldAllowList(ec.EphemeralContainerCommon, allowedEphemeralContainerFields, "cannot be set for an Ephemeral Container", p)...)
		// Subpaths are bind mounts that outlive the container until the pod
		// exits, and suggest the container is part of the workload.
		for j, vm := range ec.VolumeMounts {
			if vm.SubPath != "" {
				allErrs = append(allErrs, field.Forbidden(p.Child("volumeMounts").Index(j).Child("subPath"), "cannot be set for an Ephemeral Container"))
			}
			if vm.SubPathExpr != "" {
				allErrs = append(allErrs, field.Forbidden(p.Child("volumeMounts").Index(j).Child("subPathExpr"), "cannot be set for an Ephemeral Container"))
			}
		}
	}
	return allErrs
}

func validateContainerCommon(ctr *corev1.Container, vols map[string]corev1.VolumeSource, podClaimNames sets.Set[string], p *field.Path, restartPolicy corev1.RestartPolicy, hostUsers bool) field.ErrorList {
	var allErrs field.ErrorList
	if len(ctr.Name) == 0 {
		allErrs = append(allErrs, field.Required(p.Child("name"), ""))
	} else {
		allErrs = append(allErrs, validateDNS1123Label(ctr.Name, p.Child("name"))...)
	}
	// Whitespace is not checked here: some tools put " " in templates as a
	// placeholder. Pods get the whitespace check separately.
	if len(ctr.Image) == 0 {
		allErrs = append(allErrs, field.Required(p.Child("image"), ""))
	}
	switch ctr.TerminationMessagePolicy {
	case corev1.TerminationMessageReadFile, corev1.TerminationMessageFallbackToLogsOnError:
	case "":
		allErrs = append(allErrs, field.Required(p.Child("terminationMessagePolicy"), ""))
	default:
		allErrs = append(allErrs, field.NotSupported(p.Child("terminationMessagePolicy"), ctr.TerminationMessagePolicy,
			[]corev1.TerminationMessagePolicy{corev1.TerminationMessageReadFile, corev1.TerminationMessageFallbackToLogsOnError}))
	}
	volMounts := map[string]string{}
	for _, m := range ctr.VolumeMounts {
		volMounts[m.Name] = m.MountPath
	}
	volDevices := map[string]string{}
	for _, d := range ctr.VolumeDevices {
		volDevices[d.Name] = d.DevicePath
	}
	allErrs = append(allErrs, validateContainerPorts(ctr.Ports, p.Child("ports"))...)
	allErrs = append(allErrs, validateEnv(ctr.Env, p.Child("env"))...)
	allErrs = append(allErrs, validateEnvFrom(ctr.EnvFrom, p.Child("envFrom"))...)
	allErrs = append(allErrs, validateVolumeMounts(ctr.VolumeMounts, volDevices, vols, ctr, p.Child("volumeMounts"))...)
	allErrs = append(allErrs, validateVolumeDevices(ctr.VolumeDevices, volMounts, vols, p.Child("volumeDevices"))...)
	allErrs = append(allErrs, validatePullPolicy(ctr.ImagePullPolicy, p.Child("imagePullPolicy"))...)
	allErrs = append(allErrs, validateResourceRequirements(&ctr.Resources, validateContainerResourceName, podClaimNames, p.Child("resources"))...)
	allErrs = append(allErrs, validateResizePolicy(ctr.ResizePolicy, p.Child("resizePolicy"), restartPolicy)...)
	allErrs = append(allErrs, validateSecurityContext(ctr.SecurityContext, p.Child("securityContext"), hostUsers)...)
	return allErrs
}

// validateContainerOnlyForPod holds what a Pod's containers must satisfy
// but templates need not.
func validateContainerOnlyForPod(ctr *corev1.Container, p *field.Path) field.ErrorList {
	if len(ctr.Image) != len(strings.TrimSpace(ctr.Image)) {
		return field.ErrorList{field.Invalid(p.Child("image"), ctr.Image, "must not have leading or trailing whitespace")}
	}
	return nil
}

func validateContainerPorts(ports []corev1.ContainerPort, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	allNames := sets.Set[string]{}
	for i, port := range ports {
		p := fldPath.Index(i)
		if len(port.Name) > 0 {
			if msgs := validation.IsValidPortName(port.Name); len(msgs) != 0 {
				for _, msg := range msgs {
					allErrs = append(allErrs, field.Invalid(p.Child("name"), port.Name, msg))
				}
			} else if allNames.Has(port.Name) {
				allErrs = append(allErrs, field.Duplicate(p.Child("name"), port.Name))
			} else {
				allNames.Insert(port.Name)
			}
		}
		if port.ContainerPort == 0 {
			allErrs = append(allErrs, field.Required(p.Child("containerPort"), ""))
		} else {
			for _, msg := range validation.IsValidPortNum(int(port.ContainerPort)) {
				allErrs = append(allErrs, field.Invalid(p.Child("containerPort"), port.ContainerPort, msg))
			}
		}
		if port.HostPort != 0 {
			for _, msg := range validation.IsValidPortNum(int(port.HostPort)) {
				allErrs = append(allErrs, field.Invalid(p.Child("hostPort"), port.HostPort, msg))
			}
		}
		if len(port.Protocol) == 0 {
			allErrs = append(allErrs, field.Required(p.Child("protocol"), ""))
		} else if !supportedPortProtocols.Has(port.Protocol) {
			allErrs = append(allErrs, field.NotSupported(p.Child("protocol"), port.Protocol, sets.List(supportedPortProtocols)))
		}
	}
	return allErrs
}

func checkHostPortConflicts(containers []corev1.Container, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	seen := sets.Set[string]{}
	for ci, ctr := range containers {
		for pi, port := range ctr.Ports {
			if port.HostPort == 0 {
				continue
			}
			key := fmt.Sprintf("%s/%s/%d", port.Protocol, port.HostIP, port.HostPort)
			if seen.Has(key) {
				allErrs = append(allErrs, field.Duplicate(fldPath.Index(ci).Child("ports").Index(pi).Child("hostPort"), key))
			} else {
				seen.Insert(key)
			}
		}
	}
	return allErrs
}

func validateEnv(vars []corev1.EnvVar, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, ev := range vars {
		p := fldPath.Index(i)
		if len(ev.Name) == 0 {
			allErrs = append(allErrs, field.Required(p.Child("name"), ""))
		} else {
			// Upstream has accepted any printable ASCII name but '=' since
			// RelaxedEnvironmentVariableValidation went GA.
			for _, msg := range validation.IsRelaxedEnvVarName(ev.Name) {
				allErrs = append(allErrs, field.Invalid(p.Child("name"), ev.Name, msg))
			}
		}
		allErrs = append(allErrs, validateEnvVarValueFrom(ev, p.Child("valueFrom"))...)
	}
	return allErrs
}

var validEnvDownwardAPIFieldPathExpressions = sets.New(
	"metadata.name",
	"metadata.namespace",
	"metadata.uid",
	"spec.nodeName",
	"spec.serviceAccountName",
	"status.hostIP",
	"status.hostIPs",
	"status.podIP",
	"status.podIPs",
)

func validateEnvVarValueFrom(ev corev1.EnvVar, fldPath *field.Path) field.ErrorList {
	if ev.ValueFrom == nil {
		return nil
	}
	var allErrs field.ErrorList
	n := 0
	if ev.ValueFrom.FieldRef != nil {
		n++
		allErrs = append(allErrs, validateObjectFieldSelector(ev.ValueFrom.FieldRef, validEnvDownwardAPIFieldPathExpressions, fldPath.Child("fieldRef"))...)
	}
	if ev.ValueFrom.ResourceFieldRef != nil {
		n++
		allErrs = append(allErrs, validateContainerResourceFieldSelector(ev.ValueFrom.ResourceFieldRef, fldPath.Child("resourceFieldRef"), false)...)
	}
	if ev.ValueFrom.ConfigMapKeyRef != nil {
		n++
		allErrs = append(allErrs, validateKeySelector(ev.ValueFrom.ConfigMapKeyRef.Name, ev.ValueFrom.ConfigMapKeyRef.Key, fldPath.Child("configMapKeyRef"))...)
	}
	if ev.ValueFrom.SecretKeyRef != nil {
		n++
		allErrs = append(allErrs, validateKeySelector(ev.ValueFrom.SecretKeyRef.Name, ev.ValueFrom.SecretKeyRef.Key, fldPath.Child("secretKeyRef"))...)
	}
	if ev.ValueFrom.FileKeyRef != nil {
		n++
	}
	switch {
	case n == 0:
		allErrs = append(allErrs, field.Invalid(fldPath, "", "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`"))
	case len(ev.Value) != 0:
		allErrs = append(allErrs, field.Invalid(fldPath, "", "may not be specified when `value` is not empty"))
	case n > 1:
		allErrs = append(allErrs, field.Invalid(fldPath, "", "may not have more than one field specified at a time"))
	}
	return allErrs
}

func validateKeySelector(name, key string, fldPath *field.Path) field.ErrorList {
	allErrs := validateName(apivalidation.NameIsDNSSubdomain, name, false, fldPath.Child("name"))
	if len(key) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("key"), ""))
	} else {
		for _, msg := range validation.IsConfigMapKey(key) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("key"), key, msg))
		}
	}
	return allErrs
}

// downwardAPIFieldLabels are the pod fields the v1 downward API can name at
// all; which of them a given consumer accepts is a narrower set.
var downwardAPIFieldLabels = sets.New(
	"metadata.annotations",
	"metadata.labels",
	"metadata.name",
	"metadata.namespace",
	"metadata.uid",
	"spec.nodeName",
	"spec.restartPolicy",
	"spec.serviceAccountName",
	"spec.schedulerName",
	"status.phase",
	"status.hostIP",
	"status.hostIPs",
	"status.podIP",
	"status.podIPs",
)

// splitSubscriptedPath splits "metadata.labels['key']" into its path and
// subscript.
func splitSubscriptedPath(fieldPath string) (string, string, bool) {
	if !strings.HasSuffix(fieldPath, "']") {
		return fieldPath, "", false
	}
	before, after, ok := strings.Cut(strings.TrimSuffix(fieldPath, "']"), "['")
	if !ok || len(before) == 0 {
		return fieldPath, "", false
	}
	return before, after, true
}

func validateObjectFieldSelector(fs *corev1.ObjectFieldSelector, expressions sets.Set[string], fldPath *field.Path) field.ErrorList {
	if len(fs.APIVersion) == 0 {
		return field.ErrorList{field.Required(fldPath.Child("apiVersion"), "")}
	}
	if len(fs.FieldPath) == 0 {
		return field.ErrorList{field.Required(fldPath.Child("fieldPath"), "")}
	}
	// The conversion step upstream does first (ConvertDownwardAPIFieldLabel).
	internal := fs.FieldPath
	var convErr error
	switch p, _, subscripted := splitSubscriptedPath(fs.FieldPath); {
	case fs.APIVersion != "v1":
		convErr = fmt.Errorf("unsupported pod version: %s", fs.APIVersion)
	case subscripted && p != "metadata.annotations" && p != "metadata.labels":
		convErr = fmt.Errorf("field label does not support subscript: %s", fs.FieldPath)
	case subscripted:
	case fs.FieldPath == "spec.host":
		internal = "spec.nodeName"
	case !downwardAPIFieldLabels.Has(fs.FieldPath):
		convErr = fmt.Errorf("field label not supported: %s", fs.FieldPath)
	}
	if convErr != nil {
		return field.ErrorList{field.Invalid(fldPath.Child("fieldPath"), fs.FieldPath, fmt.Sprintf("error converting fieldPath: %v", convErr))}
	}
	if p, subscript, ok := splitSubscriptedPath(internal); ok {
		switch p {
		case "metadata.annotations":
			return validateQualifiedName(strings.ToLower(subscript), fldPath)
		case "metadata.labels":
			return validateQualifiedName(subscript, fldPath)
		default:
			return field.ErrorList{field.Invalid(fldPath, p, "does not support subscript")}
		}
	}
	if !expressions.Has(internal) {
		return field.ErrorList{field.NotSupported(fldPath.Child("fieldPath"), internal, sets.List(expressions))}
	}
	return nil
}

var validContainerResourceFieldPathExpressions = sets.New(
	"limits.cpu",
	"limits.memory",
	"limits.ephemeral-storage",
	"requests.cpu",
	"requests.memory",
	"requests.ephemeral-storage",
)

const (
	hugepagesRequestsPrefixDownwardAPI = "requests.hugepages-"
	hugepagesLimitsPrefixDownwardAPI   = "limits.hugepages-"
)

func validateContainerResourceFieldSelector(fs *corev1.ResourceFieldSelector, fldPath *field.Path, volume bool) field.ErrorList {
	var allErrs field.ErrorList
	switch {
	case volume && len(fs.ContainerName) == 0:
		allErrs = append(allErrs, field.Required(fldPath.Child("containerName"), ""))
	case len(fs.Resource) == 0:
		allErrs = append(allErrs, field.Required(fldPath.Child("resource"), ""))
	case !validContainerResourceFieldPathExpressions.Has(fs.Resource) &&
		!strings.HasPrefix(fs.Resource, hugepagesRequestsPrefixDownwardAPI) &&
		!strings.HasPrefix(fs.Resource, hugepagesLimitsPrefixDownwardAPI):
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("resource"), fs.Resource, sets.List(validContainerResourceFieldPathExpressions)))
	}
	return append(allErrs, validateContainerResourceDivisor(fs.Resource, fs.Divisor, fldPath)...)
}

var (
	validDivisorsForCPU    = sets.New("1m", "1")
	validDivisorsForBinary = sets.New("1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei")
)

const binaryDivisors = "1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei"

func validateContainerResourceDivisor(rName string, divisor resource.Quantity, fldPath *field.Path) field.ErrorList {
	// A zero divisor means "unset", which the kubelet reads as 1.
	if divisor.Cmp(resource.Quantity{}) == 0 {
		return nil
	}
	var allErrs field.ErrorList
	d := divisor.String()
	switch rName {
	case "limits.cpu", "requests.cpu":
		if !validDivisorsForCPU.Has(d) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("divisor"), rName, "only divisor's values 1m and 1 are supported with the cpu resource"))
		}
	case "limits.memory", "requests.memory":
		if !validDivisorsForBinary.Has(d) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("divisor"), rName, "only divisor's values "+binaryDivisors+" are supported with the memory resource"))
		}
	case "limits.ephemeral-storage", "requests.ephemeral-storage":
		if !validDivisorsForBinary.Has(d) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("divisor"), rName, "only divisor's values "+binaryDivisors+" are supported with the local ephemeral storage resource"))
		}
	}
	if (strings.HasPrefix(rName, hugepagesRequestsPrefixDownwardAPI) || strings.HasPrefix(rName, hugepagesLimitsPrefixDownwardAPI)) && !validDivisorsForBinary.Has(d) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("divisor"), rName, "only divisor's values "+binaryDivisors+" are supported with the hugepages resource"))
	}
	return allErrs
}

func validateEnvFrom(vars []corev1.EnvFromSource, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, ev := range vars {
		p := fldPath.Index(i)
		if len(ev.Prefix) > 0 {
			for _, msg := range validation.IsRelaxedEnvVarName(ev.Prefix) {
				allErrs = append(allErrs, field.Invalid(p.Child("prefix"), ev.Prefix, msg))
			}
		}
		n := 0
		if ev.ConfigMapRef != nil {
			n++
			allErrs = append(allErrs, validateEnvSourceName(ev.ConfigMapRef.Name, p.Child("configMapRef"))...)
		}
		if ev.SecretRef != nil {
			n++
			allErrs = append(allErrs, validateEnvSourceName(ev.SecretRef.Name, p.Child("secretRef"))...)
		}
		if n == 0 {
			allErrs = append(allErrs, field.Invalid(fldPath, "", "must specify one of: `configMapRef` or `secretRef`"))
		} else if n > 1 {
			allErrs = append(allErrs, field.Invalid(fldPath, "", "may not have more than one field specified at a time"))
		}
	}
	return allErrs
}

func validateEnvSourceName(name string, fldPath *field.Path) field.ErrorList {
	if len(name) == 0 {
		return field.ErrorList{field.Required(fldPath.Child("name"), "")}
	}
	// Upstream checks these names as prefixes, which tolerates a trailing dash.
	return validateName(apivalidation.NameIsDNSSubdomain, name, true, fldPath.Child("name"))
}

func validateVolumeMounts(mounts []corev1.VolumeMount, volDevices map[string]string, vols map[string]corev1.VolumeSource, ctr *corev1.Container, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	mountpoints := sets.Set[string]{}
	devicePaths := sets.Set[string]{}
	for _, d := range volDevices {
		devicePaths.Insert(d)
	}
	for i, mnt := range mounts {
		p := fldPath.Index(i)
		if len(mnt.Name) == 0 {
			allErrs = append(allErrs, field.Required(p.Child("name"), ""))
		}
		if _, ok := vols[mnt.Name]; !ok {
			allErrs = append(allErrs, field.NotFound(p.Child("name"), mnt.Name))
		}
		if len(mnt.MountPath) == 0 {
			allErrs = append(allErrs, field.Required(p.Child("mountPath"), ""))
		}
		if mountpoints.Has(mnt.MountPath) {
			allErrs = append(allErrs, field.Invalid(p.Child("mountPath"), mnt.MountPath, "must be unique"))
		}
		mountpoints.Insert(mnt.MountPath)
		if _, ok := volDevices[mnt.Name]; ok {
			allErrs = append(allErrs, field.Invalid(p.Child("name"), mnt.Name, "must not already exist in volumeDevices"))
		}
		if devicePaths.Has(mnt.MountPath) {
			allErrs = append(allErrs, field.Invalid(p.Child("mountPath"), mnt.MountPath, "must not already exist as a path in volumeDevices"))
		}
		if v, ok := vols[mnt.Name]; ok && v.Image != nil {
			if len(mnt.SubPath) != 0 {
				allErrs = append(allErrs, field.Invalid(p.Child("subPath"), mnt.SubPath, "not allowed in image volume sources"))
			}
			if len(mnt.SubPathExpr) != 0 {
				allErrs = append(allErrs, field.Invalid(p.Child("subPathExpr"), mnt.SubPathExpr, "not allowed in image volume sources"))
			}
		}
		// The paths below lack the index, as upstream's do.
		if len(mnt.SubPath) > 0 {
			allErrs = append(allErrs, validateLocalDescendingPath(mnt.SubPath, fldPath.Child("subPath"))...)
		}
		if len(mnt.SubPathExpr) > 0 {
			if len(mnt.SubPath) > 0 {
				allErrs = append(allErrs, field.Invalid(p.Child("subPathExpr"), mnt.SubPathExpr, "subPathExpr and subPath are mutually exclusive"))
			}
			allErrs = append(allErrs, validateLocalDescendingPath(mnt.SubPathExpr, fldPath.Child("subPathExpr"))...)
		}
		if mnt.MountPropagation != nil {
			allErrs = append(allErrs, validateMountPropagation(*mnt.MountPropagation, ctr, fldPath.Child("mountPropagation"))...)
		}
		allErrs = append(allErrs, validateMountRecursiveReadOnly(mnt, fldPath.Child("recursiveReadOnly"))...)
	}
	return allErrs
}

var supportedMountPropagations = sets.New(
	corev1.MountPropagationBidirectional, corev1.MountPropagationHostToContainer, corev1.MountPropagationNone)

func validateMountPropagation(mp corev1.MountPropagationMode, ctr *corev1.Container, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if !supportedMountPropagations.Has(mp) {
		allErrs = append(allErrs, field.NotSupported(fldPath, mp, sets.List(supportedMountPropagations)))
	}
	privileged := ctr.SecurityContext != nil && ctr.SecurityContext.Privileged != nil && *ctr.SecurityContext.Privileged
	if mp == corev1.MountPropagationBidirectional && !privileged {
		allErrs = append(allErrs, field.Forbidden(fldPath, "Bidirectional mount propagation is available only to privileged containers"))
	}
	return allErrs
}

func validateMountRecursiveReadOnly(mnt corev1.VolumeMount, fldPath *field.Path) field.ErrorList {
	if mnt.RecursiveReadOnly == nil {
		return nil
	}
	var allErrs field.ErrorList
	switch *mnt.RecursiveReadOnly {
	case corev1.RecursiveReadOnlyDisabled:
	case corev1.RecursiveReadOnlyEnabled, corev1.RecursiveReadOnlyIfPossible:
		if !mnt.ReadOnly {
			allErrs = append(allErrs, field.Forbidden(fldPath, "may only be specified when readOnly is true"))
		}
		if mnt.MountPropagation != nil && *mnt.MountPropagation != corev1.MountPropagationNone {
			allErrs = append(allErrs, field.Forbidden(fldPath, "may only be specified when mountPropagation is None or not specified"))
		}
	default:
		allErrs = append(allErrs, field.NotSupported(fldPath, *mnt.RecursiveReadOnly, []corev1.RecursiveReadOnlyMode{
			corev1.RecursiveReadOnlyDisabled, corev1.RecursiveReadOnlyEnabled, corev1.RecursiveReadOnlyIfPossible}))
	}
	return allErrs
}

func validateVolumeDevices(devices []corev1.VolumeDevice, volMounts map[string]string, vols map[string]corev1.VolumeSource, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	devicePaths, deviceNames := sets.Set[string]{}, sets.Set[string]{}
	mountPaths := sets.Set[string]{}
	for _, m := range volMounts {
		mountPaths.Insert(m)
	}
	for i, dev := range devices {
		p := fldPath.Index(i)
		src, matched := vols[dev.Name]
		if len(dev.Name) == 0 {
			allErrs = append(allErrs, field.Required(p.Child("name"), ""))
		}
		if deviceNames.Has(dev.Name) {
			allErrs = append(allErrs, field.Invalid(p.Child("name"), dev.Name, "must be unique"))
		}
		// Block devices only come from claims.
		if matched && src.PersistentVolumeClaim == nil && src.Ephemeral == nil {
			allErrs = append(allErrs, field.Invalid(p.Child("name"), dev.Name, "can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode"))
		}
		if !matched {
			allErrs = append(allErrs, field.NotFound(p.Child("name"), dev.Name))
		}
		if len(dev.DevicePath) == 0 {
			allErrs = append(allErrs, field.Required(p.Child("devicePath"), ""))
		}
		if devicePaths.Has(dev.DevicePath) {
			allErrs = append(allErrs, field.Invalid(p.Child("devicePath"), dev.DevicePath, "must be unique"))
		}
		if len(dev.DevicePath) > 0 && len(validatePathNoBacksteps(dev.DevicePath, p)) > 0 {
			allErrs = append(allErrs, field.Invalid(p.Child("devicePath"), dev.DevicePath, "can not contain backsteps ('..')"))
		} else {
			devicePaths.Insert(dev.DevicePath)
		}
		if _, ok := volMounts[dev.Name]; ok {
			allErrs = append(allErrs, field.Invalid(p.Child("name"), dev.Name, "must not already exist in volumeMounts"))
		}
		if mountPaths.Has(dev.DevicePath) {
			allErrs = append(allErrs, field.Invalid(p.Child("devicePath"), dev.DevicePath, "must not already exist as a path in volumeMounts"))
		}
		if len(dev.Name) > 0 {
			deviceNames.Insert(dev.Name)
		}
	}
	return allErrs
}

var supportedPullPolicies = sets.New(corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever)

func validatePullPolicy(policy corev1.PullPolicy, fldPath *field.Path) field.ErrorList {
	switch policy {
	case corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever:
		return nil
	case "":
		return field.ErrorList{field.Required(fldPath, "")}
	default:
		return field.ErrorList{field.NotSupported(fldPath, policy, sets.List(supportedPullPolicies))}
	}
}

var (
	supportedResizeResources = sets.New(corev1.ResourceCPU, corev1.ResourceMemory)
	supportedResizePolicies  = sets.New(corev1.NotRequired, corev1.RestartContainer)
)

func validateResizePolicy(policies []corev1.ContainerResizePolicy, fldPath *field.Path, podRestartPolicy corev1.RestartPolicy) field.ErrorList {
	var allErrs field.ErrorList
	seen := map[corev1.ResourceName]bool{}
	for i, p := range policies {
		if seen[p.ResourceName] {
			allErrs = append(allErrs, field.Duplicate(fldPath.Index(i), p.ResourceName))
		}
		seen[p.ResourceName] = true
		switch p.ResourceName {
		case corev1.ResourceCPU, corev1.ResourceMemory:
		case "":
			allErrs = append(allErrs, field.Required(fldPath, ""))
		default:
			allErrs = append(allErrs, field.NotSupported(fldPath, p.ResourceName, sets.List(supportedResizeResources)))
		}
		switch p.RestartPolicy {
		case corev1.NotRequired, corev1.RestartContainer:
		case "":
			allErrs = append(allErrs, field.Required(fldPath, ""))
		default:
			allErrs = append(allErrs, field.NotSupported(fldPath, p.RestartPolicy, sets.List(supportedResizePolicies)))
		}
		if podRestartPolicy == corev1.RestartPolicyNever && p.RestartPolicy != corev1.NotRequired {
			allErrs = append(allErrs, field.Invalid(fldPath, p.RestartPolicy, "must be 'NotRequired' when pod `restartPolicy` is 'Never'"))
		}
	}
	return allErrs
}

// ---- probes and handlers ----

func validateLivenessProbe(probe *corev1.Probe, gracePeriod *int64, fldPath *field.Path) field.ErrorList {
	if probe == nil {
		return nil
	}
	allErrs := validateProbe(probe, gracePeriod, fldPath)
	if probe.SuccessThreshold != 1 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("successThreshold"), probe.SuccessThreshold, "must be 1"))
	}
	return allErrs
}

func validateReadinessProbe(probe *corev1.Probe, gracePeriod *int64, fldPath *field.Path) field.ErrorList {
	if probe == nil {
		return nil
	}
	allErrs := validateProbe(probe, gracePeriod, fldPath)
	if probe.TerminationGracePeriodSeconds != nil {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("terminationGracePeriodSeconds"), probe.TerminationGracePeriodSeconds, "must not be set for readinessProbes"))
	}
	return allErrs
}

func validateStartupProbe(probe *corev1.Probe, gracePeriod *int64, fldPath *field.Path) field.ErrorList {
	if probe == nil {
		return nil
	}
	allErrs := validateProbe(probe, gracePeriod, fldPath)
	if probe.SuccessThreshold != 1 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("successThreshold"), probe.SuccessThreshold, "must be 1"))
	}
	return allErrs
}

func validateProbe(probe *corev1.Probe, gracePeriod *int64, fldPath *field.Path) field.ErrorList {
	h := probe.ProbeHandler
	allErrs := validateHandler(h.Exec, h.HTTPGet, h.TCPSocket, h.GRPC, nil, gracePeriod, fldPath)
	allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(int64(probe.InitialDelaySeconds), fldPath.Child("initialDelaySeconds"))...)
	allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(int64(probe.TimeoutSeconds), fldPath.Child("timeoutSeconds"))...)
	allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(int64(probe.PeriodSeconds), fldPath.Child("periodSeconds"))...)
	allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(int64(probe.SuccessThreshold), fldPath.Child("successThreshold"))...)
	allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(int64(probe.FailureThreshold), fldPath.Child("failureThreshold"))...)
	if probe.TerminationGracePeriodSeconds != nil && *probe.TerminationGracePeriodSeconds <= 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("terminationGracePeriodSeconds"), *probe.TerminationGracePeriodSeconds, "must be greater than 0"))
	}
	return allErrs
}

func validateLifecycle(l *corev1.Lifecycle, gracePeriod *int64, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if h := l.PostStart; h != nil {
		allErrs = append(allErrs, validateHandler(h.Exec, h.HTTPGet, h.TCPSocket, nil, h.Sleep, gracePeriod, fldPath.Child("postStart"))...)
	}
	if h := l.PreStop; h != nil {
		allErrs = append(allErrs, validateHandler(h.Exec, h.HTTPGet, h.TCPSocket, nil, h.Sleep, gracePeriod, fldPath.Child("preStop"))...)
	}
	return allErrs
}

var supportedHTTPSchemes = sets.New(corev1.URISchemeHTTP, corev1.URISchemeHTTPS)

// validateHandler requires exactly one action; the first one found is
// validated and any later one is reported as extra.
func validateHandler(exec *corev1.ExecAction, httpGet *corev1.HTTPGetAction, tcp *corev1.TCPSocketAction, grpc *corev1.GRPCAction, sleep *corev1.SleepAction, gracePeriod *int64, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	n := 0
	one := func(set bool, name string, validate func(*field.Path) field.ErrorList) {
		if !set {
			return
		}
		if n > 0 {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child(name), "may not specify more than 1 handler type"))
			return
		}
		n++
		allErrs = append(allErrs, validate(fldPath.Child(name))...)
	}
	one(exec != nil, "exec", func(p *field.Path) field.ErrorList {
		if len(exec.Command) == 0 {
			return field.ErrorList{field.Required(p.Child("command"), "")}
		}
		return nil
	})
	one(httpGet != nil, "httpGet", func(p *field.Path) field.ErrorList {
		var errs field.ErrorList
		if len(httpGet.Path) == 0 {
			errs = append(errs, field.Required(p.Child("path"), ""))
		}
		errs = append(errs, validatePortNumOrName(httpGet.Port, p.Child("port"))...)
		if !supportedHTTPSchemes.Has(httpGet.Scheme) {
			errs = append(errs, field.NotSupported(p.Child("scheme"), httpGet.Scheme, sets.List(supportedHTTPSchemes)))
		}
		for _, h := range httpGet.HTTPHeaders {
			for _, msg := range validation.IsHTTPHeaderName(h.Name) {
				errs = append(errs, field.Invalid(p.Child("httpHeaders"), h.Name, msg))
			}
		}
		return errs
	})
	one(tcp != nil, "tcpSocket", func(p *field.Path) field.ErrorList {
		return validatePortNumOrName(tcp.Port, p.Child("port"))
	})
	one(grpc != nil, "grpc", func(p *field.Path) field.ErrorList {
		return validatePortNumOrName(intstr.FromInt32(grpc.Port), p.Child("port"))
	})
	one(sleep != nil, "sleep", func(p *field.Path) field.ErrorList {
		// A nil grace period is already an error of its own.
		if gracePeriod != nil && (sleep.Seconds < 0 || sleep.Seconds > *gracePeriod) {
			return field.ErrorList{field.Invalid(p, sleep.Seconds,
				fmt.Sprintf("must be non-negative and less than terminationGracePeriodSeconds (%d)", *gracePeriod))}
		}
		return nil
	})
	if n == 0 {
		allErrs = append(allErrs, field.Required(fldPath, "must specify a handler type"))
	}
	return allErrs
}

// ---- pod-level fields ----

func validateRestartPolicy(p corev1.RestartPolicy, fldPath *field.Path) field.ErrorList {
	switch p {
	case corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever:
		return nil
	case "":
		return field.ErrorList{field.Required(fldPath, "")}
	default:
		return field.ErrorList{field.NotSupported(fldPath, p, []corev1.RestartPolicy{
			corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever})}
	}
}

func validateDNSPolicy(p corev1.DNSPolicy, fldPath *field.Path) field.ErrorList {
	switch p {
	case corev1.DNSClusterFirstWithHostNet, corev1.DNSClusterFirst, corev1.DNSDefault, corev1.DNSNone:
		return nil
	case "":
		return field.ErrorList{field.Required(fldPath, "")}
	default:
		return field.ErrorList{field.NotSupported(fldPath, p, []corev1.DNSPolicy{
			corev1.DNSClusterFirstWithHostNet, corev1.DNSClusterFirst, corev1.DNSDefault, corev1.DNSNone})}
	}
}

// Limits of libc's resolver, which the pod's resolv.conf must fit.
const (
	maxDNSNameservers     = 3
	maxDNSSearchPaths     = 32
	maxDNSSearchListChars = 2048
)

func validatePodDNSConfig(cfg *corev1.PodDNSConfig, policy corev1.DNSPolicy, fldPath *field.Path) field.ErrorList {
	if policy == corev1.DNSNone {
		if cfg == nil {
			return field.ErrorList{field.Required(fldPath, fmt.Sprintf("must provide `dnsConfig` when `dnsPolicy` is %s", corev1.DNSNone))}
		}
		if len(cfg.Nameservers) == 0 {
			return field.ErrorList{field.Required(fldPath.Child("nameservers"), fmt.Sprintf("must provide at least one DNS nameserver when `dnsPolicy` is %s", corev1.DNSNone))}
		}
	}
	if cfg == nil {
		return nil
	}
	var allErrs field.ErrorList
	if len(cfg.Nameservers) > maxDNSNameservers {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("nameservers"), cfg.Nameservers, fmt.Sprintf("must not have more than %v nameservers", maxDNSNameservers)))
	}
	for i, ns := range cfg.Nameservers {
		allErrs = append(allErrs, validation.IsValidIP(fldPath.Child("nameservers").Index(i), ns)...)
	}
	if len(cfg.Searches) > maxDNSSearchPaths {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("searches"), cfg.Searches, fmt.Sprintf("must not have more than %v search paths", maxDNSSearchPaths)))
	}
	if len(strings.Join(cfg.Searches, " ")) > maxDNSSearchListChars {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("searches"), cfg.Searches, fmt.Sprintf("must not have more than %v characters (including spaces) in the search list", maxDNSSearchListChars)))
	}
	for i, search := range cfg.Searches {
		// RelaxedDNSSearchValidation (GA upstream) allows "." and underscores.
		if search == "." {
			continue
		}
		search = strings.TrimSuffix(search, ".")
		for _, msg := range validation.IsDNS1123SubdomainWithUnderscore(search) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("searches").Index(i), search, msg))
		}
	}
	for i, opt := range cfg.Options {
		if len(opt.Name) == 0 {
			allErrs = append(allErrs, field.Required(fldPath.Child("options").Index(i), "must not be empty"))
		}
	}
	return allErrs
}

// validatePodHostNetworkDeps: under hostNetwork a container port is a host
// port. A Pod has had hostPort defaulted to containerPort; a template may
// leave it 0 but not set anything else.
func validatePodHostNetworkDeps(spec *corev1.PodSpec, fldPath *field.Path, isPod bool) field.ErrorList {
	if !spec.HostNetwork {
		return nil
	}
	var allErrs field.ErrorList
	for i, c := range spec.Containers {
		for j, port := range c.Ports {
			if hp, cp := port.HostPort, port.ContainerPort; (isPod || hp != 0) && hp != cp {
				allErrs = append(allErrs, field.Invalid(fldPath.Child("containers").Index(i).Child("ports").Index(j).Child("hostPort"),
					port.HostPort, "must match `containerPort` when `hostNetwork` is true"))
			}
		}
	}
	return allErrs
}

func validateSchedulingGates(gates []corev1.PodSchedulingGate, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	seen := sets.Set[string]{}
	for i, g := range gates {
		allErrs = append(allErrs, validateQualifiedName(g.Name, fldPath.Index(i))...)
		if seen.Has(g.Name) {
			allErrs = append(allErrs, field.Duplicate(fldPath.Index(i), g.Name))
		}
		seen.Insert(g.Name)
	}
	return allErrs
}

func validatePodResourceClaims(claims []corev1.PodResourceClaim, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	names := sets.Set[string]{}
	for i, c := range claims {
		p := fldPath.Index(i)
		switch {
		case c.Name == "":
			allErrs = append(allErrs, field.Required(p.Child("name"), ""))
		case names.Has(c.Name):
			allErrs = append(allErrs, field.Duplicate(p.Child("name"), c.Name))
		default:
			allErrs = append(allErrs, validateDNS1123Label(c.Name, p.Child("name"))...)
			names.Insert(c.Name)
		}
		if c.ResourceClaimName != nil && c.ResourceClaimTemplateName != nil {
			allErrs = append(allErrs, field.Invalid(p, c, "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified"))
		}
		if c.ResourceClaimName == nil && c.ResourceClaimTemplateName == nil {
			allErrs = append(allErrs, field.Invalid(p, c, "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`"))
		}
		if c.ResourceClaimName != nil {
			allErrs = append(allErrs, validateName(apivalidation.NameIsDNSSubdomain, *c.ResourceClaimName, false, p.Child("resourceClaimName"))...)
		}
		if c.ResourceClaimTemplateName != nil {
			allErrs = append(allErrs, validateName(apivalidation.NameIsDNSSubdomain, *c.ResourceClaimTemplateName, false, p.Child("resourceClaimTemplateName"))...)
		}
	}
	return allErrs
}

func validatePodResources(r *corev1.ResourceRequirements, podClaimNames sets.Set[string], fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if r.Claims != nil {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("claims"), "claims cannot be set for Resources at pod-level"))
	}
	return append(allErrs, validateResourceRequirements(r, validatePodResourceName, podClaimNames, fldPath)...)
}

// validateTaintEffect checks an effect; tolerations may leave it empty to
// match every effect.
func validateTaintEffect(effect corev1.TaintEffect, allowEmpty bool, fldPath *field.Path) field.ErrorList {
	if !allowEmpty && len(effect) == 0 {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	switch effect {
	case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		return nil
	default:
		return field.ErrorList{field.NotSupported(fldPath, effect, []corev1.TaintEffect{
			corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute})}
	}
}

func validateTolerations(tolerations []corev1.Toleration, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, t := range tolerations {
		p := fldPath.Index(i)
		if len(t.Key) > 0 {
			allErrs = append(allErrs, metav1validation.ValidateLabelName(t.Key, p.Child("key"))...)
		}
		// An empty key with Exists matches every taint; with anything else
		// it would match nothing.
		if len(t.Key) == 0 && t.Operator != corev1.TolerationOpExists {
			allErrs = append(allErrs, field.Invalid(p.Child("operator"), t.Operator,
				"operator must be Exists when `key` is empty, which means \"match all values and all keys\""))
		}
		if t.TolerationSeconds != nil && t.Effect != corev1.TaintEffectNoExecute {
			allErrs = append(allErrs, field.Invalid(p.Child("effect"), t.Effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"))
		}
		switch t.Operator {
		case corev1.TolerationOpEqual, "": // empty means Equal
			if errs := validation.IsValidLabelValue(t.Value); len(errs) != 0 {
				allErrs = append(allErrs, field.Invalid(p.Child("operator"), t.Value, strings.Join(errs, ";")))
			}
		case corev1.TolerationOpExists:
			if len(t.Value) > 0 {
				allErrs = append(allErrs, field.Invalid(p.Child("operator"), t.Value, "value must be empty when `operator` is 'Exists'"))
			}
		default:
			allErrs = append(allErrs, field.NotSupported(p.Child("operator"), t.Operator,
				[]corev1.TolerationOperator{corev1.TolerationOpEqual, corev1.TolerationOpExists}))
		}
		if len(t.Effect) > 0 {
			allErrs = append(allErrs, validateTaintEffect(t.Effect, true, p.Child("effect"))...)
		}
	}
	return allErrs
}

var validOS = sets.New(corev1.Linux, corev1.Windows)

func validateOS(os *corev1.PodOS, fldPath *field.Path) field.ErrorList {
	if len(os.Name) == 0 {
		return field.ErrorList{field.Required(fldPath.Child("name"), "cannot be empty")}
	}
	if !validOS.Has(os.Name) {
		return field.ErrorList{field.NotSupported(fldPath, os.Name, sets.List(validOS))}
	}
	return nil
}

// visitContainers calls fn for every container of the spec with its path.
func visitContainers(spec *corev1.PodSpec, fldPath *field.Path, fn func(c *corev1.Container, p *field.Path)) {
	for i := range spec.InitContainers {
		fn(&spec.InitContainers[i], fldPath.Child("initContainers").Index(i))
	}
	for i := range spec.Containers {
		fn(&spec.Containers[i], fldPath.Child("containers").Index(i))
	}
	for i := range spec.EphemeralContainers {
		fn((*corev1.Container)(&spec.EphemeralContainers[i].EphemeralContainerCommon), fldPath.Child("ephemeralContainers").Index(i))
	}
}

func validateLinux(spec *corev1.PodSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if sc := spec.SecurityContext; sc != nil && sc.WindowsOptions != nil {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("securityContext").Child("windowsOptions"), "windows options cannot be set for a linux pod"))
	}
	visitContainers(spec, fldPath, func(c *corev1.Container, p *field.Path) {
		if sc := c.SecurityContext; sc != nil && sc.WindowsOptions != nil {
			allErrs = append(allErrs, field.Forbidden(p.Child("securityContext").Child("windowsOptions"), "windows options cannot be set for a linux pod"))
		}
	})
	return allErrs
}

func validateWindows(spec *corev1.PodSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	const msg = "cannot be set for a windows pod"
	scPath := fldPath.Child("securityContext")
	forbid := func(set bool, p *field.Path) {
		if set {
			allErrs = append(allErrs, field.Forbidden(p, msg))
		}
	}
	if sc := spec.SecurityContext; sc != nil {
		forbid(sc.AppArmorProfile != nil, scPath.Child("appArmorProfile"))
		forbid(sc.SELinuxOptions != nil, scPath.Child("seLinuxOptions"))
		forbid(sc.SeccompProfile != nil, scPath.Child("seccompProfile"))
		forbid(sc.FSGroup != nil, scPath.Child("fsGroup"))
		forbid(sc.FSGroupChangePolicy != nil, scPath.Child("fsGroupChangePolicy"))
		forbid(len(sc.Sysctls) > 0, scPath.Child("sysctls"))
		forbid(sc.RunAsUser != nil, scPath.Child("runAsUser"))
		forbid(sc.RunAsGroup != nil, scPath.Child("runAsGroup"))
		forbid(sc.SupplementalGroups != nil, scPath.Child("supplementalGroups"))
		forbid(sc.SupplementalGroupsPolicy != nil, scPath.Child("supplementalGroupsPolicy"))
		forbid(sc.SELinuxChangePolicy != nil, scPath.Child("seLinuxChangePolicy"))
	}
	forbid(spec.HostUsers != nil, fldPath.Child("hostUsers"))
	forbid(spec.HostPID, fldPath.Child("hostPID"))
	forbid(spec.HostIPC, fldPath.Child("hostIPC"))
	forbid(spec.ShareProcessNamespace != nil, fldPath.Child("shareProcessNamespace"))
	visitContainers(spec, fldPath, func(c *corev1.Container, p *field.Path) {
		sc := c.SecurityContext
		if sc == nil {
			return
		}
		p = p.Child("securityContext")
		forbid(sc.AppArmorProfile != nil, p.Child("appArmorProfile"))
		forbid(sc.SELinuxOptions != nil, p.Child("seLinuxOptions"))
		forbid(sc.SeccompProfile != nil, p.Child("seccompProfile"))
		forbid(sc.Capabilities != nil, p.Child("capabilities"))
		forbid(sc.ReadOnlyRootFilesystem != nil, p.Child("readOnlyRootFilesystem"))
		forbid(sc.Privileged != nil, p.Child("privileged"))
		forbid(sc.AllowPrivilegeEscalation != nil, p.Child("allowPrivilegeEscalation"))
		forbid(sc.ProcMount != nil, p.Child("procMount"))
		forbid(sc.RunAsUser != nil, p.Child("runAsUser"))
		forbid(sc.RunAsGroup != nil, p.Child("runAsGroup"))
	})
	return allErrs
}

// validateHostUsers: a pod in its own user namespace may not share the
// host's other namespaces, where permissions would surprise.
func validateHostUsers(spec *corev1.PodSpec, fldPath *field.Path) field.ErrorList {
	if spec.HostUsers == nil || *spec.HostUsers {
		return nil
	}
	var allErrs field.ErrorList
	const msg = "when `pod.Spec.HostUsers` is false"
	if spec.HostNetwork {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("hostNetwork"), msg))
	}
	// Upstream spells these two with a capital H.
	if spec.HostPID {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("HostPID"), msg))
	}
	if spec.HostIPC {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("HostIPC"), msg))
	}
	return allErrs
}

func validateWindowsHostProcessPod(spec *corev1.PodSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	var podHostProcess *bool
	if spec.SecurityContext != nil && spec.SecurityContext.WindowsOptions != nil {
		podHostProcess = spec.SecurityContext.WindowsOptions.HostProcess
	}
	containerCount, hostProcessCount := 0, 0
	visitContainers(spec, fldPath, func(c *corev1.Container, p *field.Path) {
		containerCount++
		var hp *bool
		if c.SecurityContext != nil && c.SecurityContext.WindowsOptions != nil {
			hp = c.SecurityContext.WindowsOptions.HostProcess
		}
		if podHostProcess != nil && hp != nil && *podHostProcess != *hp {
			allErrs = append(allErrs, field.Invalid(p.Child("securityContext", "windowsOptions", "hostProcess"), *hp,
				fmt.Sprintf("pod hostProcess value must be identical if both are specified, was %v", *podHostProcess)))
		}
		if (hp != nil && *hp) || (hp == nil && podHostProcess != nil && *podHostProcess) {
			hostProcessCount++
		}
	})
	if hostProcessCount > 0 {
		if hostProcessCount != containerCount {
			allErrs = append(allErrs, field.Invalid(fldPath, "", "If pod contains any hostProcess containers then all containers must be HostProcess containers"))
		}
		if !spec.HostNetwork {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("hostNetwork"), spec.HostNetwork, "hostNetwork must be true if pod contains any hostProcess containers"))
		}
	}
	return allErrs
}

// ---- pod-specific annotations ----

func validatePodSpecificAnnotations(annotations map[string]string, spec *corev1.PodSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if value, isMirror := annotations[corev1.MirrorPodAnnotationKey]; isMirror && len(spec.NodeName) == 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Key(corev1.MirrorPodAnnotationKey), value, "must set spec.nodeName if mirror pod annotation is set"))
	}
	if v, ok := annotations[corev1.PodDeletionCost]; ok && !isValidDeletionCost(v) {
		allErrs = append(allErrs, field.Invalid(fldPath.Key(corev1.PodDeletionCost), v, "must be a 32bit integer"))
	}
	if p, ok := annotations[corev1.SeccompPodAnnotationKey]; ok {
		allErrs = append(allErrs, validateSeccompProfileAnnotation(p, fldPath.Child(corev1.SeccompPodAnnotationKey))...)
	}
	for k, v := range annotations {
		if strings.HasPrefix(k, corev1.SeccompContainerAnnotationKeyPrefix) {
			allErrs = append(allErrs, validateSeccompProfileAnnotation(v, fldPath.Child(k))...)
		}
		if name, ok := strings.CutPrefix(k, corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix); ok {
			found := false
			visitContainers(spec, field.NewPath("spec"), func(c *corev1.Container, _ *field.Path) {
				found = found || c.Name == name
			})
			if !found {
				allErrs = append(allErrs, field.Invalid(fldPath.Key(k), name, "container not found"))
			}
			if v != "" && v != corev1.DeprecatedAppArmorBetaProfileRuntimeDefault && v != corev1.DeprecatedAppArmorBetaProfileNameUnconfined &&
				!strings.HasPrefix(v, corev1.DeprecatedAppArmorBetaProfileNamePrefix) {
				allErrs = append(allErrs, field.Invalid(fldPath.Key(k), v, fmt.Sprintf("invalid AppArmor profile name: %q", v)))
			}
		}
	}
	return allErrs
}

// isValidDeletionCost: a plain int32, without the "+" sign or leading
// zeros strconv would accept, so that each cost has one spelling.
func isValidDeletionCost(v string) bool {
	if (len(v) > 0 && v[0] == '+') || (len(v) > 1 && v[0] == '0') {
		return false
	}
	_, err := strconv.ParseInt(v, 10, 32)
	return err == nil
}

func validateSeccompProfileAnnotation(p string, fldPath *field.Path) field.ErrorList {
	switch {
	case p == corev1.SeccompProfileRuntimeDefault, p == corev1.DeprecatedSeccompProfileDockerDefault, p == corev1.SeccompProfileNameUnconfined:
		return nil
	case strings.HasPrefix(p, corev1.SeccompLocalhostProfileNamePrefix):
		return validateLocalDescendingPath(strings.TrimPrefix(p, corev1.SeccompLocalhostProfileNamePrefix), fldPath)
	}
	return field.ErrorList{field.Invalid(fldPath, p, "must be a valid seccomp profile")}
}
