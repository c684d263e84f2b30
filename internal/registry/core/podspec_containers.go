package core

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

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
