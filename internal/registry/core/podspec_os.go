package core

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

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
