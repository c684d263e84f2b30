package core

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
)

// Resourcequotas is the resourcequotas resource.
var Resourcequotas = &registry.Resource{
	Group: "", Version: "v1", Name: "resourcequotas", Singular: "resourcequota", Kind: "ResourceQuota",
	Namespaced:     true,
	ShortNames:     []string{"quota"},
	Status:         true,
	New:            func() runtime.Object { return &corev1.ResourceQuota{} },
	NewList:        func() runtime.Object { return &corev1.ResourceQuotaList{} },
	Default:        registry.Typed(defaultResourceQuota),
	Validate:       registry.TypedValidate(validateResourceQuota),
	ValidateUpdate: registry.TypedValidateUpdate(validateResourceQuotaUpdate),
	Table:          resourcequotaTable,
	Fields:         resourcequotaFields,
}

func defaultResourceQuota(rq *corev1.ResourceQuota) {
	roundUpResourceList(rq.Spec.Hard)
	roundUpResourceList(rq.Status.Hard)
	roundUpResourceList(rq.Status.Used)
}

func validateResourceQuota(rq *corev1.ResourceQuota) field.ErrorList {
	allErrs := validateResourceQuotaSpec(&rq.Spec, field.NewPath("spec"))
	allErrs = append(allErrs, validateQuotaList(rq.Status.Hard, field.NewPath("status", "hard"))...)
	allErrs = append(allErrs, validateQuotaList(rq.Status.Used, field.NewPath("status", "used"))...)
	return allErrs
}

func validateQuotaList(list corev1.ResourceList, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for k, v := range list {
		p := fldPath.Key(string(k))
		allErrs = append(allErrs, validateResourceQuotaResourceName(k, p)...)
		allErrs = append(allErrs, validateResourceQuantityValue(k, v, p)...)
	}
	return allErrs
}

var (
	standardResourceQuotaScopes = sets.New(
		corev1.ResourceQuotaScopeTerminating,
		corev1.ResourceQuotaScopeNotTerminating,
		corev1.ResourceQuotaScopeBestEffort,
		corev1.ResourceQuotaScopeNotBestEffort,
		corev1.ResourceQuotaScopePriorityClass,
		corev1.ResourceQuotaScopeCrossNamespacePodAffinity,
		corev1.ResourceQuotaScopeVolumeAttributesClass,
	)
	podObjectCountQuotaResources = sets.New(corev1.ResourcePods)
	podComputeQuotaResources     = sets.New(
		corev1.ResourceCPU, corev1.ResourceMemory,
		corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory,
		corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory)
	// Scopes that can never both hold.
	invalidScopePairs = [][2]corev1.ResourceQuotaScope{
		{corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort},
		{corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating},
	}
)

// isScopeValidForResource: pod scopes only make sense for quotas on pods
// and (except BestEffort, which has none) their compute resources, and the
// volume attributes class scope for claims and their storage.
func isScopeValidForResource(scope corev1.ResourceQuotaScope, name corev1.ResourceName) bool {
	switch scope {
	case corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating, corev1.ResourceQuotaScopeNotBestEffort,
		corev1.ResourceQuotaScopePriorityClass, corev1.ResourceQuotaScopeCrossNamespacePodAffinity:
		return podObjectCountQuotaResources.Has(name) || podComputeQuotaResources.Has(name)
	case corev1.ResourceQuotaScopeBestEffort:
		return podObjectCountQuotaResources.Has(name)
	case corev1.ResourceQuotaScopeVolumeAttributesClass:
		return name == corev1.ResourcePersistentVolumeClaims || name == corev1.ResourceRequestsStorage
	}
	return true
}

func validateResourceQuotaSpec(spec *corev1.ResourceQuotaSpec, fldPath *field.Path) field.ErrorList {
	allErrs := validateQuotaList(spec.Hard, fldPath.Child("hard"))
	hard := sets.List(sets.KeySet(spec.Hard))

	if len(spec.Scopes) > 0 {
		p := fldPath.Child("scopes")
		seen := sets.Set[corev1.ResourceQuotaScope]{}
		for _, scope := range spec.Scopes {
			if !standardResourceQuotaScopes.Has(scope) {
				allErrs = append(allErrs, field.Invalid(p, spec.Scopes, "unsupported scope"))
			}
			for _, k := range hard {
				if isStandardQuotaResourceName(k) && !isScopeValidForResource(scope, k) {
					allErrs = append(allErrs, field.Invalid(p, spec.Scopes, "unsupported scope applied to resource"))
				}
			}
			seen.Insert(scope)
		}
		for _, pair := range invalidScopePairs {
			if seen.HasAll(pair[0], pair[1]) {
				allErrs = append(allErrs, field.Invalid(p, spec.Scopes, "conflicting scopes"))
			}
		}
	}

	if spec.ScopeSelector != nil {
		p := fldPath.Child("scopeSelector").Child("matchExpressions")
		seen := sets.Set[corev1.ResourceQuotaScope]{}
		for _, req := range spec.ScopeSelector.MatchExpressions {
			if !standardResourceQuotaScopes.Has(req.ScopeName) {
				allErrs = append(allErrs, field.Invalid(p.Child("scopeName"), req.ScopeName, "unsupported scope"))
			}
			for _, k := range hard {
				if isStandardQuotaResourceName(k) && !isScopeValidForResource(req.ScopeName, k) {
					allErrs = append(allErrs, field.Invalid(p, spec.ScopeSelector, "unsupported scope applied to resource"))
				}
			}
			switch req.ScopeName {
			case corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort, corev1.ResourceQuotaScopeTerminating,
				corev1.ResourceQuotaScopeNotTerminating, corev1.ResourceQuotaScopeCrossNamespacePodAffinity:
				if req.Operator != corev1.ScopeSelectorOpExists {
					allErrs = append(allErrs, field.Invalid(p.Child("operator"), req.Operator,
						"must be 'Exists' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity"))
				}
			}
			switch req.Operator {
			case corev1.ScopeSelectorOpIn, corev1.ScopeSelectorOpNotIn:
				if len(req.Values) == 0 {
					allErrs = append(allErrs, field.Required(p.Child("values"), "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector"))
				}
			case corev1.ScopeSelectorOpExists, corev1.ScopeSelectorOpDoesNotExist:
				if len(req.Values) != 0 {
					allErrs = append(allErrs, field.Invalid(p.Child("values"), req.Values, "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector"))
				}
			default:
				allErrs = append(allErrs, field.Invalid(p.Child("operator"), req.Operator, "not a valid selector operator"))
			}
			seen.Insert(req.ScopeName)
		}
		for _, pair := range invalidScopePairs {
			if seen.HasAll(pair[0], pair[1]) {
				allErrs = append(allErrs, field.Invalid(p, spec.Scopes, "conflicting scopes"))
			}
		}
	}
	return allErrs
}

// validateResourceQuotaUpdate: scopes decide which objects a quota counts,
// so they are fixed; changing them would make its usage meaningless.
func validateResourceQuotaUpdate(rq, old *corev1.ResourceQuota) field.ErrorList {
	oldScopes, newScopes := sets.New(old.Spec.Scopes...), sets.New(rq.Spec.Scopes...)
	if !oldScopes.Equal(newScopes) {
		return field.ErrorList{field.Invalid(field.NewPath("spec", "scopes"), rq.Spec.Scopes, fieldImmutableErrorMsg)}
	}
	return nil
}
