package apps

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilptr "k8s.io/utils/ptr"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/core"
)

// Statefulsets is the statefulsets resource.
var Statefulsets = &registry.Resource{
	Group: "apps", Version: "v1", Name: "statefulsets", Singular: "statefulset", Kind: "StatefulSet",
	Namespaced:       true,
	ShortNames:       []string{"sts"},
	Categories:       []string{"all"},
	Status:           true,
	TracksGeneration: true,
	Scale:            statefulsetScale,
	New:              func() runtime.Object { return &appsv1.StatefulSet{} },
	NewList:          func() runtime.Object { return &appsv1.StatefulSetList{} },
	// Pod names are <set>-<ordinal> and double as hostnames, so upstream
	// narrows the name to a DNS label.
	ValidateName:   apimachineryvalidation.NameIsDNSLabel,
	Default:        registry.Typed(defaultStatefulSet),
	Validate:       registry.TypedValidate(validateStatefulSet),
	ValidateUpdate: registry.TypedValidateUpdate(validateStatefulSetUpdate),
	Table:          statefulsetTable,
	Fields:         statefulsetFields,
	OnRead:         registry.Typed(setClaimTemplateKinds),
}

// setClaimTemplateKinds gives each volume claim template the apiVersion
// and kind upstream always shows them with (its conversion sets them, as
// releases before 1.17 did; see kubernetes#87583). Clients that diff what
// they applied against what they read expect them.
func setClaimTemplateKinds(obj *appsv1.StatefulSet) {
	for i := range obj.Spec.VolumeClaimTemplates {
		obj.Spec.VolumeClaimTemplates[i].APIVersion = "v1"
		obj.Spec.VolumeClaimTemplates[i].Kind = "PersistentVolumeClaim"
	}
}

func defaultStatefulSet(obj *appsv1.StatefulSet) {
	spec := &obj.Spec
	if spec.PodManagementPolicy == "" {
		spec.PodManagementPolicy = appsv1.OrderedReadyPodManagement
	}
	if spec.UpdateStrategy.Type == "" {
		spec.UpdateStrategy.Type = appsv1.RollingUpdateStatefulSetStrategyType
		if spec.UpdateStrategy.RollingUpdate == nil {
			spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{}
		}
	}
	// Only a rollingUpdate the client (or the branch above) supplied gets
	// its fields filled, exactly as upstream: an explicit RollingUpdate type
	// without the struct stays without it.
	if ru := spec.UpdateStrategy.RollingUpdate; spec.UpdateStrategy.Type == appsv1.RollingUpdateStatefulSetStrategyType && ru != nil {
		if ru.Partition == nil {
			ru.Partition = utilptr.To[int32](0)
		}
		// MaxUnavailableStatefulSet is beta and on by default upstream.
		if ru.MaxUnavailable == nil {
			ru.MaxUnavailable = utilptr.To(intstr.FromInt32(1))
		}
	}
	if spec.PersistentVolumeClaimRetentionPolicy == nil {
		spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{}
	}
	if spec.PersistentVolumeClaimRetentionPolicy.WhenDeleted == "" {
		spec.PersistentVolumeClaimRetentionPolicy.WhenDeleted = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	}
	if spec.PersistentVolumeClaimRetentionPolicy.WhenScaled == "" {
		spec.PersistentVolumeClaimRetentionPolicy.WhenScaled = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	}
	if spec.Replicas == nil {
		spec.Replicas = utilptr.To[int32](1)
	}
	if spec.RevisionHistoryLimit == nil {
		spec.RevisionHistoryLimit = utilptr.To[int32](10)
	}
	core.DefaultPodTemplateSpec(&spec.Template)
	for i := range spec.VolumeClaimTemplates {
		claim := &spec.VolumeClaimTemplates[i]
		core.DefaultPersistentVolumeClaimSpec(&claim.Spec)
		if claim.Status.Phase == "" {
			claim.Status.Phase = corev1.ClaimPending
		}
	}
	setClaimTemplateKinds(obj)
}

func validateStatefulSet(obj *appsv1.StatefulSet) field.ErrorList {
	spec := &obj.Spec
	fldPath := field.NewPath("spec")
	var allErrs field.ErrorList

	switch spec.PodManagementPolicy {
	case "":
		allErrs = append(allErrs, field.Required(fldPath.Child("podManagementPolicy"), ""))
	case appsv1.OrderedReadyPodManagement, appsv1.ParallelPodManagement:
	default:
		allErrs = append(allErrs, field.Invalid(fldPath.Child("podManagementPolicy"), spec.PodManagementPolicy,
			fmt.Sprintf("must be '%s' or '%s'", appsv1.OrderedReadyPodManagement, appsv1.ParallelPodManagement)))
	}

	strategyPath := fldPath.Child("updateStrategy")
	switch spec.UpdateStrategy.Type {
	case "":
		allErrs = append(allErrs, field.Required(strategyPath, ""))
	case appsv1.OnDeleteStatefulSetStrategyType:
		if spec.UpdateStrategy.RollingUpdate != nil {
			allErrs = append(allErrs, field.Invalid(strategyPath.Child("rollingUpdate"), spec.UpdateStrategy.RollingUpdate,
				fmt.Sprintf("only allowed for updateStrategy '%s'", appsv1.RollingUpdateStatefulSetStrategyType)))
		}
	case appsv1.RollingUpdateStatefulSetStrategyType:
		if spec.UpdateStrategy.RollingUpdate != nil {
			allErrs = append(allErrs, validateRollingUpdateStatefulSet(spec.UpdateStrategy.RollingUpdate, strategyPath.Child("rollingUpdate"))...)
		}
	default:
		allErrs = append(allErrs, field.Invalid(strategyPath, spec.UpdateStrategy,
			fmt.Sprintf("must be '%s' or '%s'", appsv1.RollingUpdateStatefulSetStrategyType, appsv1.OnDeleteStatefulSetStrategyType)))
	}

	if policy := spec.PersistentVolumeClaimRetentionPolicy; policy != nil {
		policyPath := fldPath.Child("persistentVolumeClaimRetentionPolicy")
		allErrs = append(allErrs, validateClaimRetentionPolicyType(policy.WhenDeleted, policyPath.Child("whenDeleted"))...)
		allErrs = append(allErrs, validateClaimRetentionPolicyType(policy.WhenScaled, policyPath.Child("whenScaled"))...)
	}

	allErrs = append(allErrs, validateNonnegative(int64(int32Value(spec.Replicas, 1)), fldPath.Child("replicas"))...)
	allErrs = append(allErrs, validateNonnegative(int64(spec.MinReadySeconds), fldPath.Child("minReadySeconds"))...)
	if spec.Ordinals != nil {
		allErrs = append(allErrs, validateNonnegative(int64(spec.Ordinals.Start), fldPath.Child("ordinals", "start"))...)
	}

	selector, errs := validateControllerSelector(spec.Selector, "statefulset", "", fldPath.Child("selector"))
	allErrs = append(allErrs, errs...)
	if selector != nil {
		allErrs = append(allErrs, validateTemplateMatchesSelector(selector, &spec.Template, fldPath.Child("template"))...)
		allErrs = append(allErrs, validateStatefulSetPodTemplate(spec, fldPath.Child("template"))...)
	}
	allErrs = append(allErrs, validateReplicatedPodTemplate(&spec.Template, "StatefulSet", fldPath.Child("template"))...)

	for i := range spec.VolumeClaimTemplates {
		allErrs = append(allErrs, core.ValidatePersistentVolumeClaimSpec(&spec.VolumeClaimTemplates[i].Spec,
			fldPath.Child("volumeClaimTemplates").Index(i).Child("spec"))...)
	}
	return allErrs
}

// validateStatefulSetPodTemplate validates the template as the pods the
// controller will create from it: those get one volume per claim template,
// which containers mount by the template's name. Upstream skips pod
// validation altogether for this reason; adding the volumes instead keeps
// the remaining checks. Errors about the added volumes are dropped, since
// the user did not write them.
func validateStatefulSetPodTemplate(spec *appsv1.StatefulSetSpec, fldPath *field.Path) field.ErrorList {
	template := &spec.Template
	userVolumes := len(template.Spec.Volumes)
	if len(spec.VolumeClaimTemplates) > 0 {
		template = template.DeepCopy()
		present := map[string]bool{}
		for _, v := range template.Spec.Volumes {
			present[v.Name] = true
		}
		for _, claim := range spec.VolumeClaimTemplates {
			if claim.Name == "" || present[claim.Name] {
				continue
			}
			present[claim.Name] = true
			template.Spec.Volumes = append(template.Spec.Volumes, corev1.Volume{
				Name: claim.Name,
				VolumeSource: corev1.VolumeSource{
					PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim.Name},
				},
			})
		}
	}
	errs := core.ValidatePodTemplateSpec(template, fldPath)
	if len(template.Spec.Volumes) == userVolumes {
		return errs
	}
	volumesPath := fldPath.Child("spec", "volumes").String()
	var kept field.ErrorList
	for _, err := range errs {
		if idx, ok := volumeIndex(err.Field, volumesPath); ok && idx >= userVolumes {
			continue
		}
		kept = append(kept, err)
	}
	return kept
}

// volumeIndex reports which entry of the volumes list at volumesPath a
// field path points into.
func volumeIndex(fieldPath, volumesPath string) (int, bool) {
	rest, ok := strings.CutPrefix(fieldPath, volumesPath+"[")
	if !ok {
		return 0, false
	}
	var idx int
	if _, err := fmt.Sscanf(rest, "%d]", &idx); err != nil {
		return 0, false
	}
	return idx, true
}

func validateClaimRetentionPolicyType(policy appsv1.PersistentVolumeClaimRetentionPolicyType, fldPath *field.Path) field.ErrorList {
	switch policy {
	case appsv1.RetainPersistentVolumeClaimRetentionPolicyType, appsv1.DeletePersistentVolumeClaimRetentionPolicyType:
		return nil
	}
	return field.ErrorList{field.NotSupported(fldPath, policy, []appsv1.PersistentVolumeClaimRetentionPolicyType{
		appsv1.RetainPersistentVolumeClaimRetentionPolicyType, appsv1.DeletePersistentVolumeClaimRetentionPolicyType})}
}

func validateRollingUpdateStatefulSet(ru *appsv1.RollingUpdateStatefulSetStrategy, fldPath *field.Path) field.ErrorList {
	allErrs := validateNonnegative(int64(int32Value(ru.Partition, 0)), fldPath.Child("partition"))
	if ru.MaxUnavailable != nil {
		maxUnavailablePath := fldPath.Child("maxUnavailable")
		allErrs = append(allErrs, validatePositiveIntOrPercent(*ru.MaxUnavailable, maxUnavailablePath)...)
		// Unlike a Deployment a StatefulSet cannot surge, so zero would
		// stall every update.
		if intOrPercentValue(*ru.MaxUnavailable) == 0 {
			allErrs = append(allErrs, field.Invalid(maxUnavailablePath, *ru.MaxUnavailable, "cannot be 0"))
		}
		allErrs = append(allErrs, validateNotMoreThan100Percent(*ru.MaxUnavailable, maxUnavailablePath)...)
	}
	return allErrs
}

// Pods and their claims are named from the spec's identity fields, so
// everything but the fields below is fixed once the set exists.
func validateStatefulSetUpdate(obj, old *appsv1.StatefulSet) field.ErrorList {
	clone := obj.Spec.DeepCopy()
	clone.Replicas = old.Spec.Replicas
	clone.Ordinals = old.Spec.Ordinals
	clone.Template = old.Spec.Template
	clone.UpdateStrategy = old.Spec.UpdateStrategy
	clone.RevisionHistoryLimit = old.Spec.RevisionHistoryLimit
	clone.PersistentVolumeClaimRetentionPolicy = old.Spec.PersistentVolumeClaimRetentionPolicy
	clone.MinReadySeconds = old.Spec.MinReadySeconds
	if !apiequality.Semantic.DeepEqual(*clone, old.Spec) {
		return field.ErrorList{field.Forbidden(field.NewPath("spec"), "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden")}
	}
	return nil
}
