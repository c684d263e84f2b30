package core

import (
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

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
