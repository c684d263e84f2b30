package core

import (
	"fmt"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ---- security contexts ----

var (
	validFSGroupChangePolicies      = sets.New(corev1.FSGroupChangeOnRootMismatch, corev1.FSGroupChangeAlways)
	validSupplementalGroupsPolicies = sets.New(corev1.SupplementalGroupsPolicyMerge, corev1.SupplementalGroupsPolicyStrict)
	validSELinuxChangePolicies      = sets.New(corev1.SELinuxChangePolicyRecursive, corev1.SELinuxChangePolicyMountOption)
)

// validatePodSpecSecurityContext checks the pod-wide security settings,
// with fldPath pointing at spec.securityContext.
func validatePodSpecSecurityContext(spec *corev1.PodSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	sc := spec.SecurityContext
	if spec.ShareProcessNamespace != nil && spec.HostPID && *spec.ShareProcessNamespace {
		// The v1 field lives on the spec; upstream reports it where its
		// internal type keeps it, under securityContext.
		allErrs = append(allErrs, field.Invalid(fldPath.Child("shareProcessNamespace"), *spec.ShareProcessNamespace, "ShareProcessNamespace and HostPID cannot both be enabled"))
	}
	if sc == nil {
		return allErrs
	}
	if sc.FSGroup != nil {
		for _, msg := range validation.IsValidGroupID(*sc.FSGroup) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("fsGroup"), *sc.FSGroup, msg))
		}
	}
	if sc.RunAsUser != nil {
		for _, msg := range validation.IsValidUserID(*sc.RunAsUser) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("runAsUser"), *sc.RunAsUser, msg))
		}
	}
	if sc.RunAsGroup != nil {
		for _, msg := range validation.IsValidGroupID(*sc.RunAsGroup) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("runAsGroup"), *sc.RunAsGroup, msg))
		}
	}
	for i, gid := range sc.SupplementalGroups {
		for _, msg := range validation.IsValidGroupID(gid) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("supplementalGroups").Index(i), gid, msg))
		}
	}
	if len(sc.Sysctls) != 0 {
		allErrs = append(allErrs, validateSysctls(spec, fldPath.Child("sysctls"))...)
	}
	if p := sc.FSGroupChangePolicy; p != nil && !validFSGroupChangePolicies.Has(*p) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("fsGroupChangePolicy"), *p, sets.List(validFSGroupChangePolicies)))
	}
	allErrs = append(allErrs, validateSeccompProfileField(sc.SeccompProfile, fldPath.Child("seccompProfile"))...)
	allErrs = append(allErrs, validateWindowsSecurityContextOptions(sc.WindowsOptions, fldPath.Child("windowsOptions"))...)
	allErrs = append(allErrs, validateAppArmorProfileField(sc.AppArmorProfile, fldPath.Child("appArmorProfile"))...)
	if p := sc.SupplementalGroupsPolicy; p != nil && !validSupplementalGroupsPolicies.Has(*p) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("supplementalGroupsPolicy"), *p, sets.List(validSupplementalGroupsPolicies)))
	}
	if p := sc.SELinuxChangePolicy; p != nil && !validSELinuxChangePolicies.Has(*p) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("seLinuxChangePolicy"), *p, sets.List(validSELinuxChangePolicies)))
	}
	return allErrs
}

// validateSecurityContext checks a container's security context.
// Privileged containers are allowed: Orca has no --allow-privileged=false.
func validateSecurityContext(sc *corev1.SecurityContext, fldPath *field.Path, hostUsers bool) field.ErrorList {
	if sc == nil {
		return nil
	}
	var allErrs field.ErrorList
	if sc.RunAsUser != nil {
		for _, msg := range validation.IsValidUserID(*sc.RunAsUser) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("runAsUser"), *sc.RunAsUser, msg))
		}
	}
	if sc.RunAsGroup != nil {
		for _, msg := range validation.IsValidGroupID(*sc.RunAsGroup) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("runAsGroup"), *sc.RunAsGroup, msg))
		}
	}
	if sc.ProcMount != nil {
		switch *sc.ProcMount {
		case corev1.DefaultProcMount, corev1.UnmaskedProcMount:
		default:
			allErrs = append(allErrs, field.NotSupported(fldPath.Child("procMount"), *sc.ProcMount,
				[]corev1.ProcMountType{corev1.DefaultProcMount, corev1.UnmaskedProcMount}))
		}
		if hostUsers && *sc.ProcMount == corev1.UnmaskedProcMount {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("procMount"), sc.ProcMount, "`hostUsers` must be false to use `Unmasked`"))
		}
	}
	allErrs = append(allErrs, validateSeccompProfileField(sc.SeccompProfile, fldPath.Child("seccompProfile"))...)
	if sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation {
		if sc.Privileged != nil && *sc.Privileged {
			allErrs = append(allErrs, field.Invalid(fldPath, sc, "cannot set `allowPrivilegeEscalation` to false and `privileged` to true"))
		}
		if sc.Capabilities != nil {
			for _, c := range sc.Capabilities.Add {
				if string(c) == "CAP_SYS_ADMIN" {
					allErrs = append(allErrs, field.Invalid(fldPath, sc, "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN"))
				}
			}
		}
	}
	allErrs = append(allErrs, validateWindowsSecurityContextOptions(sc.WindowsOptions, fldPath.Child("windowsOptions"))...)
	allErrs = append(allErrs, validateAppArmorProfileField(sc.AppArmorProfile, fldPath.Child("appArmorProfile"))...)
	return allErrs
}

func validateSeccompProfileField(sp *corev1.SeccompProfile, fldPath *field.Path) field.ErrorList {
	if sp == nil {
		return nil
	}
	var allErrs field.ErrorList
	switch sp.Type {
	case corev1.SeccompProfileTypeLocalhost, corev1.SeccompProfileTypeRuntimeDefault, corev1.SeccompProfileTypeUnconfined:
	case "":
		allErrs = append(allErrs, field.Required(fldPath.Child("type"), "type is required when seccompProfile is set"))
	default:
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("type"), sp.Type, []corev1.SeccompProfileType{
			corev1.SeccompProfileTypeLocalhost, corev1.SeccompProfileTypeRuntimeDefault, corev1.SeccompProfileTypeUnconfined}))
	}
	if sp.Type == corev1.SeccompProfileTypeLocalhost {
		if sp.LocalhostProfile == nil {
			allErrs = append(allErrs, field.Required(fldPath.Child("localhostProfile"), "must be set when seccomp type is Localhost"))
		} else {
			allErrs = append(allErrs, validateLocalDescendingPath(*sp.LocalhostProfile, fldPath.Child("localhostProfile"))...)
		}
	} else if sp.LocalhostProfile != nil {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("localhostProfile"), sp, "can only be set when seccomp type is Localhost"))
	}
	return allErrs
}

func validateAppArmorProfileField(profile *corev1.AppArmorProfile, fldPath *field.Path) field.ErrorList {
	if profile == nil {
		return nil
	}
	var allErrs field.ErrorList
	switch profile.Type {
	case corev1.AppArmorProfileTypeLocalhost:
		if profile.LocalhostProfile == nil {
			allErrs = append(allErrs, field.Required(fldPath.Child("localhostProfile"), "must be set when AppArmor type is Localhost"))
			break
		}
		lp := *profile.LocalhostProfile
		if strings.TrimSpace(lp) != lp {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("localhostProfile"), lp, "must not be padded with whitespace"))
		} else if lp == "" {
			allErrs = append(allErrs, field.Required(fldPath.Child("localhostProfile"), "must be set when AppArmor type is Localhost"))
		}
		const maxLocalhostProfileLength = 4095 // PATH_MAX - 1
		if len(lp) > maxLocalhostProfileLength {
			allErrs = append(allErrs, field.TooLong(fldPath.Child("localhostProfile"), "", maxLocalhostProfileLength))
		}
	case corev1.AppArmorProfileTypeRuntimeDefault, corev1.AppArmorProfileTypeUnconfined:
		if profile.LocalhostProfile != nil {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("localhostProfile"), profile.LocalhostProfile, "can only be set when AppArmor type is Localhost"))
		}
	case "":
		allErrs = append(allErrs, field.Required(fldPath.Child("type"), "type is required when appArmorProfile is set"))
	default:
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("type"), profile.Type, []corev1.AppArmorProfileType{
			corev1.AppArmorProfileTypeLocalhost, corev1.AppArmorProfileTypeRuntimeDefault, corev1.AppArmorProfileTypeUnconfined}))
	}
	return allErrs
}

const (
	sysctlSegmentFmt      = "[a-z0-9]([-_a-z0-9]*[a-z0-9])?"
	sysctlContainSlashFmt = "(" + sysctlSegmentFmt + "[\\./])*" + sysctlSegmentFmt
	sysctlMaxLength       = 253
)

var sysctlContainSlashRegexp = regexp.MustCompile("^" + sysctlContainSlashFmt + "$")

// sysctlNamespace says which host namespace a sysctl belongs to ("net",
// "ipc" or ""), as the kubelet sees it.
func sysctlNamespace(name string) string {
	name = strings.ReplaceAll(name, "/", ".")
	switch {
	case name == "kernel.sem", strings.HasPrefix(name, "kernel.shm"), strings.HasPrefix(name, "kernel.msg"), strings.HasPrefix(name, "fs.mqueue."):
		return "ipc"
	case strings.HasPrefix(name, "net."):
		return "net"
	}
	return ""
}

func validateSysctls(spec *corev1.PodSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	names := sets.Set[string]{}
	for i, s := range spec.SecurityContext.Sysctls {
		p := fldPath.Index(i).Child("name")
		switch {
		case len(s.Name) == 0:
			allErrs = append(allErrs, field.Required(p, ""))
		case len(s.Name) > sysctlMaxLength || !sysctlContainSlashRegexp.MatchString(s.Name):
			allErrs = append(allErrs, field.Invalid(p, s.Name, fmt.Sprintf("must have at most %d characters and match regex %s", sysctlMaxLength, sysctlContainSlashRegexp)))
		case names.Has(s.Name):
			allErrs = append(allErrs, field.Duplicate(p, s.Name))
		}
		// A namespaced sysctl set in a namespace shared with the host would
		// change the host.
		switch ns := sysctlNamespace(s.Name); {
		case spec.HostNetwork && ns == "net":
			allErrs = append(allErrs, field.Invalid(p, s.Name, "may not be specified when 'hostNetwork' is true"))
		case spec.HostIPC && ns == "ipc":
			allErrs = append(allErrs, field.Invalid(p, s.Name, "may not be specified when 'hostIPC' is true"))
		}
		names.Insert(s.Name)
	}
	return allErrs
}

const (
	maxGMSACredentialSpecLengthInKiB = 64
	maxGMSACredentialSpecLength      = maxGMSACredentialSpecLengthInKiB * 1024
	maxRunAsUserNameDomainLength     = 256
	maxRunAsUserNameUserLength       = 104
)

var (
	ctrlRegex                      = regexp.MustCompile(`[[:cntrl:]]+`)
	validNetBiosRegex              = regexp.MustCompile(`^[^\\/:\*\?"<>|\.][^\\/:\*\?"<>|]{0,14}$`)
	dnsLabelFormat                 = `[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?`
	validWindowsUserDomainDNSRegex = regexp.MustCompile(fmt.Sprintf(`^%s(?:\.%s)*$`, dnsLabelFormat, dnsLabelFormat))
	invalidUserNameCharsRegex      = regexp.MustCompile(`["/\\:;|=,\+\*\?<>@\[\]]`)
	invalidUserNameDotsSpacesRegex = regexp.MustCompile(`^[\. ]+$`)
)

func validateWindowsSecurityContextOptions(o *corev1.WindowsSecurityContextOptions, fldPath *field.Path) field.ErrorList {
	if o == nil {
		return nil
	}
	var allErrs field.ErrorList
	if o.GMSACredentialSpecName != nil {
		for _, msg := range validation.IsDNS1123Subdomain(*o.GMSACredentialSpecName) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("gmsaCredentialSpecName"), o.GMSACredentialSpecName, msg))
		}
	}
	if o.GMSACredentialSpec != nil {
		if l := len(*o.GMSACredentialSpec); l == 0 {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("gmsaCredentialSpec"), o.GMSACredentialSpec, "gmsaCredentialSpec cannot be an empty string"))
		} else if l > maxGMSACredentialSpecLength {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("gmsaCredentialSpec"), o.GMSACredentialSpec,
				fmt.Sprintf("gmsaCredentialSpec size must be under %d KiB", maxGMSACredentialSpecLengthInKiB)))
		}
	}
	if o.RunAsUserName == nil {
		return allErrs
	}
	p := fldPath.Child("runAsUserName")
	invalid := func(msg string) { allErrs = append(allErrs, field.Invalid(p, o.RunAsUserName, msg)) }
	name := *o.RunAsUserName
	parts := strings.Split(name, "\\")
	switch {
	case len(name) == 0:
		invalid("runAsUserName cannot be an empty string")
	case ctrlRegex.MatchString(name):
		invalid("runAsUserName cannot contain control characters")
	case len(parts) > 2:
		invalid("runAsUserName cannot contain more than one backslash")
	default:
		domain, user, hasDomain := "", parts[0], len(parts) == 2
		if hasDomain {
			domain, user = parts[0], parts[1]
		}
		if len(domain) >= maxRunAsUserNameDomainLength {
			invalid(fmt.Sprintf("runAsUserName's Domain length must be under %d characters", maxRunAsUserNameDomainLength))
		}
		if hasDomain && !validNetBiosRegex.MatchString(domain) && !validWindowsUserDomainDNSRegex.MatchString(domain) {
			invalid("runAsUserName's Domain doesn't match the NetBios nor the DNS format")
		}
		if l := len(user); l == 0 {
			invalid("runAsUserName's User cannot be empty")
		} else if l > maxRunAsUserNameUserLength {
			invalid(fmt.Sprintf("runAsUserName's User length must not be longer than %d characters", maxRunAsUserNameUserLength))
		}
		if invalidUserNameDotsSpacesRegex.MatchString(user) {
			invalid(`runAsUserName's User cannot contain only periods or spaces`)
		}
		if invalidUserNameCharsRegex.MatchString(user) {
			invalid(`runAsUserName's User cannot contain the following characters: "/\:;|=,+*?<>@[]`)
		}
	}
	return allErrs
}

// ---- scheduling constraints ----

func validateAffinity(a *corev1.Affinity, fldPath *field.Path) field.ErrorList {
	if a == nil {
		return nil
	}
	var allErrs field.ErrorList
	if na := a.NodeAffinity; na != nil {
		p := fldPath.Child("nodeAffinity")
		if na.RequiredDuringSchedulingIgnoredDuringExecution != nil {
			allErrs = append(allErrs, validateNodeSelector(na.RequiredDuringSchedulingIgnoredDuringExecution, false, p.Child("requiredDuringSchedulingIgnoredDuringExecution"))...)
		}
		for i, term := range na.PreferredDuringSchedulingIgnoredDuringExecution {
			tp := p.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i)
			if term.Weight <= 0 || term.Weight > 100 {
				allErrs = append(allErrs, field.Invalid(tp.Child("weight"), term.Weight, "must be in the range 1-100"))
			}
			// Preferred terms may name label values that cannot exist: they
			// just never match.
			allErrs = append(allErrs, validateNodeSelectorTerm(term.Preference, true, tp.Child("preference"))...)
		}
	}
	if pa := a.PodAffinity; pa != nil {
		p := fldPath.Child("podAffinity")
		allErrs = append(allErrs, validatePodAffinityTerms(pa.RequiredDuringSchedulingIgnoredDuringExecution, p.Child("requiredDuringSchedulingIgnoredDuringExecution"))...)
		allErrs = append(allErrs, validateWeightedPodAffinityTerms(pa.PreferredDuringSchedulingIgnoredDuringExecution, p.Child("preferredDuringSchedulingIgnoredDuringExecution"))...)
	}
	if paa := a.PodAntiAffinity; paa != nil {
		p := fldPath.Child("podAntiAffinity")
		allErrs = append(allErrs, validatePodAffinityTerms(paa.RequiredDuringSchedulingIgnoredDuringExecution, p.Child("requiredDuringSchedulingIgnoredDuringExecution"))...)
		allErrs = append(allErrs, validateWeightedPodAffinityTerms(paa.PreferredDuringSchedulingIgnoredDuringExecution, p.Child("preferredDuringSchedulingIgnoredDuringExecution"))...)
	}
	return allErrs
}

func validateNodeSelector(ns *corev1.NodeSelector, allowInvalidLabelValue bool, fldPath *field.Path) field.ErrorList {
	termPath := fldPath.Child("nodeSelectorTerms")
	if len(ns.NodeSelectorTerms) == 0 {
		return field.ErrorList{field.Required(termPath, "must have at least one node selector term")}
	}
	var allErrs field.ErrorList
	for i, term := range ns.NodeSelectorTerms {
		allErrs = append(allErrs, validateNodeSelectorTerm(term, allowInvalidLabelValue, termPath.Index(i))...)
	}
	return allErrs
}

func validateNodeSelectorTerm(term corev1.NodeSelectorTerm, allowInvalidLabelValue bool, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for j, req := range term.MatchExpressions {
		allErrs = append(allErrs, validateNodeSelectorRequirement(req, allowInvalidLabelValue, fldPath.Child("matchExpressions").Index(j))...)
	}
	for j, req := range term.MatchFields {
		allErrs = append(allErrs, validateNodeFieldSelectorRequirement(req, fldPath.Child("matchFields").Index(j))...)
	}
	return allErrs
}

func validateNodeSelectorRequirement(rq corev1.NodeSelectorRequirement, allowInvalidLabelValue bool, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	switch rq.Operator {
	case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
		if len(rq.Values) == 0 {
			allErrs = append(allErrs, field.Required(fldPath.Child("values"), "must be specified when `operator` is 'In' or 'NotIn'"))
		}
	case corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist:
		if len(rq.Values) > 0 {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child("values"), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
		}
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		if len(rq.Values) != 1 {
			allErrs = append(allErrs, field.Required(fldPath.Child("values"), "must be specified single value when `operator` is 'Lt' or 'Gt'"))
		}
	default:
		allErrs = append(allErrs, field.Invalid(fldPath.Child("operator"), rq.Operator, "not a valid selector operator"))
	}
	allErrs = append(allErrs, metav1validation.ValidateLabelName(rq.Key, fldPath.Child("key"))...)
	if !allowInvalidLabelValue {
		for i, v := range rq.Values {
			for _, msg := range validation.IsValidLabelValue(v) {
				allErrs = append(allErrs, field.Invalid(fldPath.Child("values").Index(i), v, msg))
			}
		}
	}
	return allErrs
}

func validateNodeFieldSelectorRequirement(req corev1.NodeSelectorRequirement, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	switch req.Operator {
	case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
		if len(req.Values) != 1 {
			allErrs = append(allErrs, field.Required(fldPath.Child("values"), "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"))
		}
	default:
		allErrs = append(allErrs, field.Invalid(fldPath.Child("operator"), req.Operator, "not a valid selector operator"))
	}
	// metadata.name is the only node field a selector may use.
	if req.Key != metav1.ObjectNameField {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("key"), req.Key, "not a valid field selector key"))
	} else {
		for i, v := range req.Values {
			allErrs = append(allErrs, validateName(apivalidation.NameIsDNSSubdomain, v, false, fldPath.Child("values").Index(i))...)
		}
	}
	return allErrs
}

func validatePodAffinityTerms(terms []corev1.PodAffinityTerm, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, t := range terms {
		allErrs = append(allErrs, validatePodAffinityTerm(t, fldPath.Index(i))...)
	}
	return allErrs
}

func validateWeightedPodAffinityTerms(terms []corev1.WeightedPodAffinityTerm, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, t := range terms {
		if t.Weight <= 0 || t.Weight > 100 {
			allErrs = append(allErrs, field.Invalid(fldPath.Index(i).Child("weight"), t.Weight, "must be in the range 1-100"))
		}
		allErrs = append(allErrs, validatePodAffinityTerm(t.PodAffinityTerm, fldPath.Index(i).Child("podAffinityTerm"))...)
	}
	return allErrs
}

func validatePodAffinityTerm(t corev1.PodAffinityTerm, fldPath *field.Path) field.ErrorList {
	opts := metav1validation.LabelSelectorValidationOptions{}
	allErrs := metav1validation.ValidateLabelSelector(t.LabelSelector, opts, fldPath.Child("labelSelector"))
	allErrs = append(allErrs, metav1validation.ValidateLabelSelector(t.NamespaceSelector, opts, fldPath.Child("namespaceSelector"))...)
	for _, name := range t.Namespaces {
		allErrs = append(allErrs, validateName(apivalidation.ValidateNamespaceName, name, false, fldPath.Child("namespace"))...)
	}
	allErrs = append(allErrs, validateLabelKeys(fldPath.Child("matchLabelKeys"), t.MatchLabelKeys, t.LabelSelector)...)
	allErrs = append(allErrs, validateLabelKeys(fldPath.Child("mismatchLabelKeys"), t.MismatchLabelKeys, t.LabelSelector)...)
	mismatch := sets.New(t.MismatchLabelKeys...)
	for i, k := range t.MatchLabelKeys {
		if mismatch.Has(k) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("matchLabelKeys").Index(i), k, "exists in both matchLabelKeys and mismatchLabelKeys"))
		}
	}
	if len(t.TopologyKey) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("topologyKey"), "can not be empty"))
	}
	return append(allErrs, metav1validation.ValidateLabelName(t.TopologyKey, fldPath.Child("topologyKey"))...)
}

// validateLabelKeys checks matchLabelKeys / mismatchLabelKeys, which only
// refine a label selector and so need one.
func validateLabelKeys(fldPath *field.Path, keys []string, selector *metav1.LabelSelector) field.ErrorList {
	if len(keys) == 0 {
		return nil
	}
	if selector == nil {
		return field.ErrorList{field.Forbidden(fldPath, "must not be specified when labelSelector is not set")}
	}
	var allErrs field.ErrorList
	for i, k := range keys {
		allErrs = append(allErrs, metav1validation.ValidateLabelName(k, fldPath.Index(i))...)
	}
	return allErrs
}

var (
	supportedScheduleActions = sets.New(corev1.DoNotSchedule, corev1.ScheduleAnyway)
	supportedNodePolicies    = sets.New(corev1.NodeInclusionPolicyIgnore, corev1.NodeInclusionPolicyHonor)
)

func validateTopologySpreadConstraints(constraints []corev1.TopologySpreadConstraint, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, c := range constraints {
		p := fldPath.Index(i)
		if c.MaxSkew <= 0 {
			allErrs = append(allErrs, field.Invalid(p.Child("maxSkew"), c.MaxSkew, isNotPositiveErrorMsg))
		}
		if len(c.TopologyKey) == 0 {
			allErrs = append(allErrs, field.Required(p.Child("topologyKey"), "can not be empty"))
		}
		if !supportedScheduleActions.Has(c.WhenUnsatisfiable) {
			allErrs = append(allErrs, field.NotSupported(p.Child("whenUnsatisfiable"), c.WhenUnsatisfiable, sets.List(supportedScheduleActions)))
		}
		// {topologyKey, whenUnsatisfiable} identifies one kind of constraint.
		for _, rest := range constraints[i+1:] {
			if c.TopologyKey == rest.TopologyKey && c.WhenUnsatisfiable == rest.WhenUnsatisfiable {
				allErrs = append(allErrs, field.Duplicate(p.Child("{topologyKey, whenUnsatisfiable}"), fmt.Sprintf("{%v, %v}", c.TopologyKey, c.WhenUnsatisfiable)))
				break
			}
		}
		if c.MinDomains != nil {
			if *c.MinDomains <= 0 {
				allErrs = append(allErrs, field.Invalid(p.Child("minDomains"), c.MinDomains, isNotPositiveErrorMsg))
			}
			if c.WhenUnsatisfiable != corev1.DoNotSchedule {
				allErrs = append(allErrs, field.Invalid(p.Child("minDomains"), c.MinDomains,
					fmt.Sprintf("can only use minDomains if whenUnsatisfiable=%s, not %s", corev1.DoNotSchedule, c.WhenUnsatisfiable)))
			}
		}
		if pol := c.NodeAffinityPolicy; pol != nil && !supportedNodePolicies.Has(*pol) {
			allErrs = append(allErrs, field.NotSupported(p.Child("nodeAffinityPolicy"), *pol, sets.List(supportedNodePolicies)))
		}
		if pol := c.NodeTaintsPolicy; pol != nil && !supportedNodePolicies.Has(*pol) {
			allErrs = append(allErrs, field.NotSupported(p.Child("nodeTaintsPolicy"), *pol, sets.List(supportedNodePolicies)))
		}
		allErrs = append(allErrs, validateMatchLabelKeysInTopologySpread(p.Child("matchLabelKeys"), c.MatchLabelKeys, c.LabelSelector)...)
		allErrs = append(allErrs, metav1validation.ValidateLabelSelector(c.LabelSelector, metav1validation.LabelSelectorValidationOptions{}, p.Child("labelSelector"))...)
	}
	return allErrs
}

func validateMatchLabelKeysInTopologySpread(fldPath *field.Path, keys []string, selector *metav1.LabelSelector) field.ErrorList {
	if len(keys) == 0 {
		return nil
	}
	var allErrs field.ErrorList
	selectorKeys := sets.Set[string]{}
	if selector != nil {
		for k := range selector.MatchLabels {
			selectorKeys.Insert(k)
		}
		for _, e := range selector.MatchExpressions {
			selectorKeys.Insert(e.Key)
		}
	} else {
		allErrs = append(allErrs, field.Forbidden(fldPath, "must not be specified when labelSelector is not set"))
	}
	for i, k := range keys {
		allErrs = append(allErrs, metav1validation.ValidateLabelName(k, fldPath.Index(i))...)
		if selectorKeys.Has(k) {
			allErrs = append(allErrs, field.Invalid(fldPath.Index(i), k, "exists in both matchLabelKeys and labelSelector"))
		}
	}
	return allErrs
}
