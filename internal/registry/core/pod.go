package core

import (
	"fmt"
	"math"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
)

// Pods is the pods resource.
var Pods = &registry.Resource{
	Group: "", Version: "v1", Name: "pods", Singular: "pod", Kind: "Pod",
	Namespaced:       true,
	ShortNames:       []string{"po"},
	Categories:       []string{"all"},
	Status:           true,
	TracksGeneration: true,
	New:              func() runtime.Object { return &corev1.Pod{} },
	NewList:          func() runtime.Object { return &corev1.PodList{} },
	PrepareForCreate: registry.Typed(preparePodForCreate),
	Default:          registry.Typed(defaultPod),
	Validate:         registry.TypedValidate(validatePod),
	ValidateUpdate:   registry.TypedValidateUpdate(validatePodUpdate),
	Table:            podTable,
	Fields:           podFields,

	// Older kubelets corrupted owner references in the pods they reported,
	// so upstream never takes them from a status write.
	StatusResetsMetadata:   []string{"ownerReferences"},
	PrepareForStatusUpdate: registry.Typed2(preparePodForStatusUpdate),
	Subresources: map[string]*registry.Subresource{
		"ephemeralcontainers": podEphemeralContainers,
		"resize":              podResize,
	},
}

// preparePodForCreate starts every pod Pending with its QoS class, as
// upstream's strategy does; a client cannot create a pod with a status.
func preparePodForCreate(pod *corev1.Pod) {
	pod.Status = corev1.PodStatus{
		Phase:    corev1.PodPending,
		QOSClass: podQOSClass(&pod.Spec),
	}
	if len(pod.Spec.SchedulingGates) > 0 {
		pod.Status.Conditions = []corev1.PodCondition{{
			Type:    corev1.PodScheduled,
			Status:  corev1.ConditionFalse,
			Reason:  corev1.PodReasonSchedulingGated,
			Message: "Scheduling is blocked due to non-empty scheduling gates",
		}}
	}
}

// preparePodForStatusUpdate keeps what a status writer may leave out: the
// QoS class, fixed at creation, and the observed generations of the pod
// and of each condition, which a writer unaware of them would otherwise
// clear. Conditions are matched by type, in order, since a type may
// repeat.
func preparePodForStatusUpdate(pod, old *corev1.Pod) {
	if pod.Status.QOSClass == "" {
		pod.Status.QOSClass = old.Status.QOSClass
	}
	if pod.Status.ObservedGeneration == 0 {
		pod.Status.ObservedGeneration = old.Status.ObservedGeneration
	}
	oldGens := map[corev1.PodConditionType][]int64{}
	for _, c := range old.Status.Conditions {
		oldGens[c.Type] = append(oldGens[c.Type], c.ObservedGeneration)
	}
	for i := range pod.Status.Conditions {
		c := &pod.Status.Conditions[i]
		var gen int64
		if gens := oldGens[c.Type]; len(gens) > 0 {
			gen, oldGens[c.Type] = gens[0], gens[1:]
		}
		if c.ObservedGeneration == 0 {
			c.ObservedGeneration = gen
		}
	}
}

// podQOSClass computes the QoS class as upstream's ComputePodQOS does,
// reading a missing request as equal to its limit because that is what
// defaulting (which runs after this) will make it.
func podQOSClass(spec *corev1.PodSpec) corev1.PodQOSClass {
	requests, limits := corev1.ResourceList{}, corev1.ResourceList{}
	add := func(list corev1.ResourceList, name corev1.ResourceName, q resource.Quantity) {
		if cur, ok := list[name]; ok {
			q = q.DeepCopy()
			q.Add(cur)
		}
		list[name] = q
	}
	isGuaranteed := true
	if spec.Resources != nil && (len(spec.Resources.Requests) > 0 || len(spec.Resources.Limits) > 0) {
		// Pod-level resources, when given, decide the class alone.
		for name, q := range spec.Resources.Requests {
			if supportedQoSComputeResources.Has(name) && q.Sign() > 0 {
				add(requests, name, q)
			}
		}
		found := sets.Set[corev1.ResourceName]{}
		for name, q := range spec.Resources.Limits {
			if supportedQoSComputeResources.Has(name) && q.Sign() > 0 {
				found.Insert(name)
				add(limits, name, q)
			}
		}
		isGuaranteed = found.HasAll(corev1.ResourceCPU, corev1.ResourceMemory)
	} else {
		for _, c := range append(append([]corev1.Container{}, spec.Containers...), spec.InitContainers...) {
			reqs := c.Resources.Requests
			for name, q := range c.Resources.Limits {
				if _, ok := reqs[name]; !ok {
					if reqs == nil {
						reqs = corev1.ResourceList{}
					} else {
						reqs = reqs.DeepCopy()
					}
					reqs[name] = q
				}
			}
			for name, q := range reqs {
				if supportedQoSComputeResources.Has(name) && q.Sign() > 0 {
					add(requests, name, q)
				}
			}
			found := sets.Set[corev1.ResourceName]{}
			for name, q := range c.Resources.Limits {
				if supportedQoSComputeResources.Has(name) && q.Sign() > 0 {
					found.Insert(name)
					add(limits, name, q)
				}
			}
			if !found.HasAll(corev1.ResourceCPU, corev1.ResourceMemory) {
				isGuaranteed = false
			}
		}
	}
	if len(requests) == 0 && len(limits) == 0 {
		return corev1.PodQOSBestEffort
	}
	if isGuaranteed {
		for name, req := range requests {
			if lim, ok := limits[name]; !ok || lim.Cmp(req) != 0 {
				isGuaranteed = false
				break
			}
		}
	}
	if isGuaranteed && len(requests) == len(limits) {
		return corev1.PodQOSGuaranteed
	}
	return corev1.PodQOSBurstable
}

// defaultPod applies the pod spec defaults plus those upstream reserves for
// real Pods: requests default to limits (so a pod with only limits is
// Guaranteed), service links are on, under hostNetwork every container
// port is also a host port, and the status's singular IPs agree with their
// lists.
func defaultPod(pod *corev1.Pod) {
	spec := &pod.Spec
	for _, cs := range [][]corev1.Container{spec.Containers, spec.InitContainers} {
		for i := range cs {
			r := &cs[i].Resources
			if r.Limits == nil {
				continue
			}
			if r.Requests == nil {
				r.Requests = corev1.ResourceList{}
			}
			for name, q := range r.Limits {
				if _, ok := r.Requests[name]; !ok {
					r.Requests[name] = q.DeepCopy()
				}
			}
		}
	}
	if spec.EnableServiceLinks == nil {
		spec.EnableServiceLinks = ptrTo(corev1.DefaultEnableServiceLinks)
	}
	// podIP and hostIP are the first entries of podIPs and hostIPs. A
	// writer that sets only the singular field, or one that disagrees with
	// the list, is taken at its word, as upstream's conversion does for
	// older kubelets.
	st := &pod.Status
	if st.PodIP != "" && (len(st.PodIPs) == 0 || st.PodIPs[0].IP != st.PodIP) {
		st.PodIPs = []corev1.PodIP{{IP: st.PodIP}}
	}
	if len(st.PodIPs) > 0 {
		st.PodIP = st.PodIPs[0].IP
	}
	if st.HostIP != "" && (len(st.HostIPs) == 0 || st.HostIPs[0].IP != st.HostIP) {
		st.HostIPs = []corev1.HostIP{{IP: st.HostIP}}
	}
	if len(st.HostIPs) > 0 {
		st.HostIP = st.HostIPs[0].IP
	}
	if spec.HostNetwork {
		for _, cs := range [][]corev1.Container{spec.Containers, spec.InitContainers} {
			for i := range cs {
				for j := range cs[i].Ports {
					if cs[i].Ports[j].HostPort == 0 {
						cs[i].Ports[j].HostPort = cs[i].Ports[j].ContainerPort
					}
				}
			}
		}
	}
	DefaultPodSpec(spec)
}

// validatePod checks a pod. Besides the spec rules shared with templates, a
// real pod may not hold ephemeral containers on create (they are added
// through their own subresource), may not be bound while it has scheduling
// gates, may not be created with a non-sidecar init container restarted
// on resize (it could never be resized), and may only project service
// account tokens when it names a service account.
func validatePod(pod *corev1.Pod) field.ErrorList {
	specPath := field.NewPath("spec")
	allErrs := validatePodSpecificAnnotations(pod.Annotations, &pod.Spec, field.NewPath("metadata", "annotations"))
	allErrs = append(allErrs, validatePodSpec(&pod.Spec, &pod.ObjectMeta, specPath, true)...)
	if pod.Spec.ServiceAccountName == "" {
		for vi, v := range pod.Spec.Volumes {
			if v.Projected == nil {
				continue
			}
			for si, src := range v.Projected.Sources {
				if src.ServiceAccountToken != nil {
					allErrs = append(allErrs, field.Forbidden(specPath.Child("volumes").Index(vi).Child("projected", "sources").Index(si).Child("serviceAccountToken"),
						"must not be specified when serviceAccountName is not set"))
				}
			}
		}
	}
	for i := range pod.Spec.Containers {
		allErrs = append(allErrs, validateContainerOnlyForPod(&pod.Spec.Containers[i], specPath.Child("containers").Index(i))...)
	}
	for i := range pod.Spec.InitContainers {
		allErrs = append(allErrs, validateContainerOnlyForPod(&pod.Spec.InitContainers[i], specPath.Child("initContainers").Index(i))...)
	}
	if pod.ResourceVersion == "" {
		// The server clears resourceVersion on create and sets it on update,
		// and these two rules are upstream's for create only.
		if len(pod.Spec.EphemeralContainers) > 0 {
			allErrs = append(allErrs, field.Forbidden(specPath.Child("ephemeralContainers"), "cannot be set on create"))
		}
		if pod.Spec.NodeName != "" && len(pod.Spec.SchedulingGates) != 0 {
			allErrs = append(allErrs, field.Forbidden(specPath.Child("nodeName"), "cannot be set until all schedulingGates have been cleared"))
		}
		// Upstream allows it still where a stored pod has it, which here
		// only pods created before this rule can.
		for i, c := range pod.Spec.InitContainers {
			if isSidecar(&c) {
				continue
			}
			for j, p := range c.ResizePolicy {
				if p.RestartPolicy == corev1.RestartContainer {
					allErrs = append(allErrs, field.Invalid(specPath.Child("initContainers").Index(i).Child("resizePolicy").Index(j).Child("restartPolicy"),
						p.RestartPolicy, "must not be set to 'RestartContainer' for non-sidecar initContainers"))
				}
			}
		}
	}
	return allErrs
}

// updatablePodSpecFields is quoted in the error for a forbidden update.
var updatablePodSpecFields = []string{
	"`spec.containers[*].image`",
	"`spec.initContainers[*].image`",
	"`spec.activeDeadlineSeconds`",
	"`spec.tolerations` (only additions to existing tolerations)",
	"`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
}

// validatePodUpdate enforces that a pod's spec is immutable but for the
// fields upstream lets change: images, a shrinking activeDeadlineSeconds,
// added tolerations, removed scheduling gates, and (for gated pods) added
// node constraints. spec.nodeName is not among them: pods are bound through
// the binding subresource.
func validatePodUpdate(pod, old *corev1.Pod) field.ErrorList {
	var allErrs field.ErrorList
	specPath := field.NewPath("spec")
	allErrs = append(allErrs, validatePodAnnotationUpdates(pod, old)...)

	errs, stop := validateContainerUpdates(pod.Spec.Containers, old.Spec.Containers, specPath.Child("containers"))
	allErrs = append(allErrs, errs...)
	if stop {
		return allErrs
	}
	errs, stop = validateContainerUpdates(pod.Spec.InitContainers, old.Spec.InitContainers, specPath.Child("initContainers"))
	allErrs = append(allErrs, errs...)
	if stop {
		return allErrs
	}

	// activeDeadlineSeconds may be set, or lowered, but not raised or unset.
	if pod.Spec.ActiveDeadlineSeconds != nil {
		v := *pod.Spec.ActiveDeadlineSeconds
		if v < 0 || v > math.MaxInt32 {
			return append(allErrs, field.Invalid(specPath.Child("activeDeadlineSeconds"), v, validation.InclusiveRangeError(0, math.MaxInt32)))
		}
		if old.Spec.ActiveDeadlineSeconds != nil && *old.Spec.ActiveDeadlineSeconds < v {
			return append(allErrs, field.Invalid(specPath.Child("activeDeadlineSeconds"), v, "must be less than or equal to previous value"))
		}
	} else if old.Spec.ActiveDeadlineSeconds != nil {
		allErrs = append(allErrs, field.Invalid(specPath.Child("activeDeadlineSeconds"), pod.Spec.ActiveDeadlineSeconds, "must not update from a positive integer to nil value"))
	}

	allErrs = append(allErrs, validateOnlyAddedTolerations(pod.Spec.Tolerations, old.Spec.Tolerations, specPath.Child("tolerations"))...)
	allErrs = append(allErrs, validateOnlyDeletedSchedulingGates(pod.Spec.SchedulingGates, old.Spec.SchedulingGates, specPath.Child("schedulingGates"))...)

	if semanticEqual(pod.Spec, old.Spec) {
		return allErrs
	}

	// Put the old values into the fields that may change; whatever still
	// differs was not allowed to.
	munged := *pod.Spec.DeepCopy()
	for i := range munged.Containers {
		munged.Containers[i].Image = old.Spec.Containers[i].Image
	}
	for i := range munged.InitContainers {
		munged.InitContainers[i].Image = old.Spec.InitContainers[i].Image
	}
	munged.ActiveDeadlineSeconds = old.Spec.ActiveDeadlineSeconds
	// The alias only mirrors serviceAccountName (compared above); pods
	// stored before it was filled in may lack it.
	munged.DeprecatedServiceAccount = old.Spec.DeprecatedServiceAccount
	munged.SchedulingGates = old.Spec.SchedulingGates
	munged.Tolerations = old.Spec.Tolerations
	if old.Spec.TerminationGracePeriodSeconds != nil && *old.Spec.TerminationGracePeriodSeconds < 0 &&
		munged.TerminationGracePeriodSeconds != nil && *munged.TerminationGracePeriodSeconds == 1 {
		munged.TerminationGracePeriodSeconds = old.Spec.TerminationGracePeriodSeconds
	}
	if len(old.Spec.SchedulingGates) > 0 {
		// A gated pod is not scheduled yet, so its node constraints may
		// still be narrowed (never widened).
		if !semanticEqual(munged.NodeSelector, old.Spec.NodeSelector) {
			allErrs = append(allErrs, validateNodeSelectorMutation(specPath.Child("nodeSelector"), munged.NodeSelector, old.Spec.NodeSelector)...)
			munged.NodeSelector = old.Spec.NodeSelector
		}
		var oldNA, newNA *corev1.NodeAffinity
		if old.Spec.Affinity != nil {
			oldNA = old.Spec.Affinity.NodeAffinity
		}
		if munged.Affinity != nil {
			newNA = munged.Affinity.NodeAffinity
		}
		if !semanticEqual(oldNA, newNA) {
			allErrs = append(allErrs, validateNodeAffinityMutation(specPath.Child("affinity").Child("nodeAffinity"), newNA, oldNA)...)
			switch {
			case munged.Affinity == nil && oldNA == nil:
			case munged.Affinity == nil:
				munged.Affinity = &corev1.Affinity{NodeAffinity: oldNA}
			case old.Spec.Affinity == nil && munged.Affinity.PodAntiAffinity == nil && munged.Affinity.PodAffinity == nil:
				munged.Affinity = nil
			default:
				munged.Affinity.NodeAffinity = oldNA
			}
		}
	}
	if !semanticEqual(munged, old.Spec) {
		allErrs = append(allErrs, field.Forbidden(specPath, fmt.Sprintf("pod updates may not change fields other than %s\n%v",
			strings.Join(updatablePodSpecFields, ","), specDiff(old.Spec, munged))))
	}
	return allErrs
}

// validatePodAnnotationUpdates: the mirror-pod and AppArmor annotations
// record how the pod was created and may not be edited afterwards.
func validatePodAnnotationUpdates(pod, old *corev1.Pod) field.ErrorList {
	var allErrs field.ErrorList
	fldPath := field.NewPath("metadata", "annotations")
	for k, oldVal := range old.Annotations {
		if newVal, ok := pod.Annotations[k]; ok && newVal == oldVal {
			continue
		}
		if strings.HasPrefix(k, corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix) {
			allErrs = append(allErrs, field.Forbidden(fldPath.Key(k), "may not remove or update AppArmor annotations"))
		}
		if k == corev1.MirrorPodAnnotationKey {
			allErrs = append(allErrs, field.Forbidden(fldPath.Key(k), "may not remove or update mirror pod annotation"))
		}
	}
	for k := range pod.Annotations {
		if _, ok := old.Annotations[k]; ok {
			continue
		}
		if strings.HasPrefix(k, corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix) {
			allErrs = append(allErrs, field.Forbidden(fldPath.Key(k), "may not add AppArmor annotations"))
		}
		if k == corev1.MirrorPodAnnotationKey {
			allErrs = append(allErrs, field.Forbidden(fldPath.Key(k), "may not add mirror pod annotation"))
		}
	}
	return allErrs
}

// validateContainerUpdates: the container list keeps its length; stop means
// the spec comparison after it would only repeat the error.
func validateContainerUpdates(newContainers, oldContainers []corev1.Container, fldPath *field.Path) (field.ErrorList, bool) {
	if len(newContainers) != len(oldContainers) {
		return field.ErrorList{field.Forbidden(fldPath, "pod updates may not add or remove containers")}, true
	}
	var allErrs field.ErrorList
	for i, c := range newContainers {
		if len(c.Image) == 0 {
			allErrs = append(allErrs, field.Required(fldPath.Index(i).Child("image"), ""))
		}
	}
	return allErrs, false
}

func validateOnlyAddedTolerations(newTolerations, oldTolerations []corev1.Toleration, fldPath *field.Path) field.ErrorList {
	for _, o := range oldTolerations {
		found := false
		for _, n := range newTolerations {
			// tolerationSeconds of an existing toleration may change.
			oc := o
			oc.TolerationSeconds = n.TolerationSeconds
			if semanticEqual(oc, n) {
				found = true
				break
			}
		}
		if !found {
			return field.ErrorList{field.Forbidden(fldPath, "existing toleration can not be modified except its tolerationSeconds")}
		}
	}
	return nil
}

func validateOnlyDeletedSchedulingGates(newGates, oldGates []corev1.PodSchedulingGate, fldPath *field.Path) field.ErrorList {
	old := sets.Set[string]{}
	for _, g := range oldGates {
		old.Insert(g.Name)
	}
	var allErrs field.ErrorList
	for i, g := range newGates {
		if !old.Has(g.Name) {
			allErrs = append(allErrs, field.Forbidden(fldPath.Index(i).Child("name"), fmt.Sprintf("only deletion is allowed, but found new scheduling gate '%s'", g.Name)))
		}
	}
	return allErrs
}

func validateNodeSelectorMutation(fldPath *field.Path, newSel, oldSel map[string]string) field.ErrorList {
	for k, v := range oldSel {
		if nv, ok := newSel[k]; !ok || nv != v {
			return field.ErrorList{field.Invalid(fldPath, newSel, "only additions to spec.nodeSelector are allowed (no mutations or deletions)")}
		}
	}
	return nil
}

func validateNodeAffinityMutation(p *field.Path, newNA, oldNA *corev1.NodeAffinity) field.ErrorList {
	if oldNA == nil || oldNA.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return nil
	}
	oldTerms := oldNA.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	var newTerms []corev1.NodeSelectorTerm
	if newNA != nil && newNA.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		newTerms = newNA.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	}
	termsPath := p.Child("requiredDuringSchedulingIgnoredDuringExecution").Child("nodeSelectorTerms")
	if len(oldTerms) > 0 && len(oldTerms) != len(newTerms) {
		return field.ErrorList{field.Invalid(termsPath, newTerms, "no additions/deletions to non-empty NodeSelectorTerms list are allowed")}
	}
	var allErrs field.ErrorList
	for i := range oldTerms {
		if !termHasOnlyAdditions(newTerms[i], oldTerms[i]) {
			allErrs = append(allErrs, field.Invalid(termsPath.Index(i), newTerms[i], "only additions are allowed (no mutations or deletions)"))
		}
	}
	return allErrs
}

func termHasOnlyAdditions(newTerm, oldTerm corev1.NodeSelectorTerm) bool {
	if len(oldTerm.MatchExpressions) == 0 && len(oldTerm.MatchFields) == 0 &&
		(len(newTerm.MatchExpressions) > 0 || len(newTerm.MatchFields) > 0) {
		return false
	}
	if l := len(oldTerm.MatchExpressions); l > 0 && (len(newTerm.MatchExpressions) < l || !semanticEqual(newTerm.MatchExpressions[:l], oldTerm.MatchExpressions)) {
		return false
	}
	if l := len(oldTerm.MatchFields); l > 0 && (len(newTerm.MatchFields) < l || !semanticEqual(newTerm.MatchFields[:l], oldTerm.MatchFields)) {
		return false
	}
	return true
}
