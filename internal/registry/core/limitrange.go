package core

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
)

// Limitranges is the limitranges resource.
var Limitranges = &registry.Resource{
	Group: "", Version: "v1", Name: "limitranges", Singular: "limitrange", Kind: "LimitRange",
	Namespaced:     true,
	ShortNames:     []string{"limits"},
	New:            func() runtime.Object { return &corev1.LimitRange{} },
	NewList:        func() runtime.Object { return &corev1.LimitRangeList{} },
	Default:        registry.Typed(defaultLimitRange),
	Validate:       registry.TypedValidate(validateLimitRange),
	ValidateUpdate: registry.TypedValidateUpdate(validateLimitRangeUpdate),
	Table:          limitrangeTable,
	Fields:         limitrangeFields,
}

// defaultLimitRange fills in, for container limits only, the default limit
// from the max, and the default request from the default limit or else
// the min: a container that says nothing then gets the tightest values the
// range allows.
func defaultLimitRange(lr *corev1.LimitRange) {
	for i := range lr.Spec.Limits {
		item := &lr.Spec.Limits[i]
		if item.Type == corev1.LimitTypeContainer {
			if item.Default == nil {
				item.Default = corev1.ResourceList{}
			}
			if item.DefaultRequest == nil {
				item.DefaultRequest = corev1.ResourceList{}
			}
			for k, v := range item.Max {
				if _, ok := item.Default[k]; !ok {
					item.Default[k] = v.DeepCopy()
				}
			}
			for k, v := range item.Default {
				if _, ok := item.DefaultRequest[k]; !ok {
					item.DefaultRequest[k] = v.DeepCopy()
				}
			}
			for k, v := range item.Min {
				if _, ok := item.DefaultRequest[k]; !ok {
					item.DefaultRequest[k] = v.DeepCopy()
				}
			}
		}
		for _, l := range []corev1.ResourceList{item.Max, item.Min, item.Default, item.DefaultRequest, item.MaxLimitRequestRatio} {
			roundUpResourceList(l)
		}
	}
}

var standardLimitRangeTypes = sets.New(corev1.LimitTypePod, corev1.LimitTypeContainer, corev1.LimitTypePersistentVolumeClaim)

func validateLimitRangeTypeName(value corev1.LimitType, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, msg := range validation.IsQualifiedName(string(value)) {
		allErrs = append(allErrs, field.Invalid(fldPath, value, msg))
	}
	if len(allErrs) == 0 && !strings.Contains(string(value), "/") && !standardLimitRangeTypes.Has(value) {
		allErrs = append(allErrs, field.Invalid(fldPath, value, "must be a standard limit type or fully qualified"))
	}
	return allErrs
}

// validateLimitRangeResourceName: pod and container limits are about
// compute resources; other types (claims) may name storage.
func validateLimitRangeResourceName(t corev1.LimitType, name corev1.ResourceName, fldPath *field.Path) field.ErrorList {
	if t == corev1.LimitTypePod || t == corev1.LimitTypeContainer {
		return validateContainerResourceName(name, fldPath)
	}
	return validateResourceName(name, fldPath)
}

// validateLimitRange: one item per type, names right for the type, and for
// every resource min <= defaultRequest <= default <= max, with a
// limit/request ratio of at least 1 that max/min can honour.
func validateLimitRange(lr *corev1.LimitRange) field.ErrorList {
	var allErrs field.ErrorList
	fldPath := field.NewPath("spec", "limits")
	seenTypes := sets.Set[corev1.LimitType]{}
	for i := range lr.Spec.Limits {
		p := fldPath.Index(i)
		limit := &lr.Spec.Limits[i]
		allErrs = append(allErrs, validateLimitRangeTypeName(limit.Type, p.Child("type"))...)
		if seenTypes.Has(limit.Type) {
			allErrs = append(allErrs, field.Duplicate(p.Child("type"), limit.Type))
		}
		seenTypes.Insert(limit.Type)

		keys := sets.Set[corev1.ResourceName]{}
		check := func(list corev1.ResourceList, name string) {
			for k := range list {
				allErrs = append(allErrs, validateLimitRangeResourceName(limit.Type, k, p.Child(name).Key(string(k)))...)
				keys.Insert(k)
			}
		}
		check(limit.Max, "max")
		check(limit.Min, "min")
		if limit.Type == corev1.LimitTypePod {
			// Pods get no defaults: those go to their containers.
			if len(limit.Default) > 0 {
				allErrs = append(allErrs, field.Forbidden(p.Child("default"), "may not be specified when `type` is 'Pod'"))
			}
			if len(limit.DefaultRequest) > 0 {
				allErrs = append(allErrs, field.Forbidden(p.Child("defaultRequest"), "may not be specified when `type` is 'Pod'"))
			}
		} else {
			check(limit.Default, "default")
			check(limit.DefaultRequest, "defaultRequest")
		}
		if limit.Type == corev1.LimitTypePersistentVolumeClaim {
			_, hasMin := limit.Min[corev1.ResourceStorage]
			_, hasMax := limit.Max[corev1.ResourceStorage]
			if !hasMin && !hasMax {
				allErrs = append(allErrs, field.Required(p.Child("limits"), "either minimum or maximum storage value is required, but neither was provided"))
			}
		}
		check(limit.MaxLimitRequestRatio, "maxLimitRequestRatio")
		defaults := limit.Default
		defaultRequests := limit.DefaultRequest
		if limit.Type == corev1.LimitTypePod {
			defaults, defaultRequests = nil, nil
		}

		for _, k := range sets.List(keys) {
			key := string(k)
			minQ, hasMin := limit.Min[k]
			maxQ, hasMax := limit.Max[k]
			defQ, hasDef := defaults[k]
			defReqQ, hasDefReq := defaultRequests[k]
			ratio, hasRatio := limit.MaxLimitRequestRatio[k]

			if hasMin && hasMax && minQ.Cmp(maxQ) > 0 {
				allErrs = append(allErrs, field.Invalid(p.Child("min").Key(key), minQ, fmt.Sprintf("min value %s is greater than max value %s", minQ.String(), maxQ.String())))
			}
			if hasDefReq && hasMin && minQ.Cmp(defReqQ) > 0 {
				allErrs = append(allErrs, field.Invalid(p.Child("defaultRequest").Key(key), defReqQ, fmt.Sprintf("min value %s is greater than default request value %s", minQ.String(), defReqQ.String())))
			}
			if hasDefReq && hasMax && defReqQ.Cmp(maxQ) > 0 {
				allErrs = append(allErrs, field.Invalid(p.Child("defaultRequest").Key(key), defReqQ, fmt.Sprintf("default request value %s is greater than max value %s", defReqQ.String(), maxQ.String())))
			}
			if hasDefReq && hasDef && defReqQ.Cmp(defQ) > 0 {
				allErrs = append(allErrs, field.Invalid(p.Child("defaultRequest").Key(key), defReqQ, fmt.Sprintf("default request value %s is greater than default limit value %s", defReqQ.String(), defQ.String())))
			}
			if hasDef && hasMin && minQ.Cmp(defQ) > 0 {
				allErrs = append(allErrs, field.Invalid(p.Child("default").Key(key), minQ, fmt.Sprintf("min value %s is greater than default value %s", minQ.String(), defQ.String())))
			}
			if hasDef && hasMax && defQ.Cmp(maxQ) > 0 {
				allErrs = append(allErrs, field.Invalid(p.Child("default").Key(key), maxQ, fmt.Sprintf("default value %s is greater than max value %s", defQ.String(), maxQ.String())))
			}
			if hasRatio && ratio.Cmp(*resource.NewQuantity(1, resource.DecimalSI)) < 0 {
				allErrs = append(allErrs, field.Invalid(p.Child("maxLimitRequestRatio").Key(key), ratio, fmt.Sprintf("ratio %s is less than 1", ratio.String())))
			}
			if hasRatio && hasMin && hasMax {
				ratioValue := float64(ratio.Value())
				minValue, maxValue := minQ.Value(), maxQ.Value()
				// Milli precision where it fits, so that cpu ratios work.
				if ratio.Value() < resource.MaxMilliValue && minValue < resource.MaxMilliValue && maxValue < resource.MaxMilliValue {
					ratioValue = float64(ratio.MilliValue()) / 1000
					minValue, maxValue = minQ.MilliValue(), maxQ.MilliValue()
				}
				if limitRatio := float64(maxValue) / float64(minValue); ratioValue > limitRatio {
					allErrs = append(allErrs, field.Invalid(p.Child("maxLimitRequestRatio").Key(key), ratio, fmt.Sprintf("ratio %s is greater than max/min = %f", ratio.String(), limitRatio)))
				}
			}
			// Resources that cannot be overcommitted (extended ones,
			// hugepages) must request exactly their limit.
			if !isOvercommitAllowed(k) && hasDef && hasDefReq && defQ.Cmp(defReqQ) != 0 {
				allErrs = append(allErrs, field.Invalid(p.Child("defaultRequest").Key(key), defReqQ, fmt.Sprintf("default value %s must equal to defaultRequest value %s in %s", defQ.String(), defReqQ.String(), key)))
			}
		}
	}
	return allErrs
}

// validateLimitRangeUpdate adds nothing: a limit range may be rewritten.
func validateLimitRangeUpdate(lr, old *corev1.LimitRange) field.ErrorList { return nil }
