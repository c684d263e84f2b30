package core

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The resource-name tables below are upstream's pkg/apis/core/helper.

var standardContainerResources = sets.New(
	corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage)

var standardResources = sets.New(
	corev1.ResourceCPU,
	corev1.ResourceMemory,
	corev1.ResourceEphemeralStorage,
	corev1.ResourceRequestsCPU,
	corev1.ResourceRequestsMemory,
	corev1.ResourceRequestsEphemeralStorage,
	corev1.ResourceLimitsCPU,
	corev1.ResourceLimitsMemory,
	corev1.ResourceLimitsEphemeralStorage,
	corev1.ResourcePods,
	corev1.ResourceQuotas,
	corev1.ResourceServices,
	corev1.ResourceReplicationControllers,
	corev1.ResourceSecrets,
	corev1.ResourceConfigMaps,
	corev1.ResourcePersistentVolumeClaims,
	corev1.ResourceStorage,
	corev1.ResourceRequestsStorage,
	corev1.ResourceServicesNodePorts,
	corev1.ResourceServicesLoadBalancers,
)

var standardQuotaResources = sets.New(
	corev1.ResourceCPU,
	corev1.ResourceMemory,
	corev1.ResourceEphemeralStorage,
	corev1.ResourceRequestsCPU,
	corev1.ResourceRequestsMemory,
	corev1.ResourceRequestsStorage,
	corev1.ResourceRequestsEphemeralStorage,
	corev1.ResourceLimitsCPU,
	corev1.ResourceLimitsMemory,
	corev1.ResourceLimitsEphemeralStorage,
	corev1.ResourcePods,
	corev1.ResourceQuotas,
	corev1.ResourceServices,
	corev1.ResourceReplicationControllers,
	corev1.ResourceSecrets,
	corev1.ResourcePersistentVolumeClaims,
	corev1.ResourceConfigMaps,
	corev1.ResourceServicesNodePorts,
	corev1.ResourceServicesLoadBalancers,
)

var integerResources = sets.New(
	corev1.ResourcePods,
	corev1.ResourceQuotas,
	corev1.ResourceServices,
	corev1.ResourceReplicationControllers,
	corev1.ResourceSecrets,
	corev1.ResourceConfigMaps,
	corev1.ResourcePersistentVolumeClaims,
	corev1.ResourceServicesNodePorts,
	corev1.ResourceServicesLoadBalancers,
)

func isHugePageResourceName(name corev1.ResourceName) bool {
	return strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix)
}

func isQuotaHugePageResourceName(name corev1.ResourceName) bool {
	return strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix) ||
		strings.HasPrefix(string(name), corev1.ResourceRequestsHugePagesPrefix)
}

// isNativeResource: unprefixed names are implicitly in kubernetes.io/.
func isNativeResource(name corev1.ResourceName) bool {
	return !strings.Contains(string(name), "/") ||
		strings.Contains(string(name), corev1.ResourceDefaultNamespacePrefix)
}

// isExtendedResourceName: a fully qualified name outside kubernetes.io that
// still makes a valid quota name once "requests." is put in front of it.
func isExtendedResourceName(name corev1.ResourceName) bool {
	if isNativeResource(name) || strings.HasPrefix(string(name), corev1.DefaultResourceRequestsPrefix) {
		return false
	}
	return len(validation.IsQualifiedName(corev1.DefaultResourceRequestsPrefix+string(name))) == 0
}

// isOvercommitAllowed: extended resources and hugepages cannot be
// overcommitted, so their requests must equal their limits.
func isOvercommitAllowed(name corev1.ResourceName) bool {
	return isNativeResource(name) && !isHugePageResourceName(name)
}

func isStandardContainerResourceName(name corev1.ResourceName) bool {
	return standardContainerResources.Has(name) || isHugePageResourceName(name)
}

func isStandardResourceName(name corev1.ResourceName) bool {
	return standardResources.Has(name) || isQuotaHugePageResourceName(name)
}

func isStandardQuotaResourceName(name corev1.ResourceName) bool {
	return standardQuotaResources.Has(name) || isQuotaHugePageResourceName(name)
}

func isIntegerResourceName(name corev1.ResourceName) bool {
	return integerResources.Has(name) || isExtendedResourceName(name)
}

// validateResourceName checks a compute resource name: qualified, and if
// unprefixed, one the system knows.
func validateResourceName(value corev1.ResourceName, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, msg := range validation.IsQualifiedName(string(value)) {
		allErrs = append(allErrs, field.Invalid(fldPath, value, msg))
	}
	if len(allErrs) != 0 {
		return allErrs
	}
	if !strings.Contains(string(value), "/") && !isStandardResourceName(value) {
		return append(allErrs, field.Invalid(fldPath, value, "must be a standard resource type or fully qualified"))
	}
	return allErrs
}

func validateContainerResourceName(value corev1.ResourceName, fldPath *field.Path) field.ErrorList {
	allErrs := validateResourceName(value, fldPath)
	if !strings.Contains(string(value), "/") {
		if !isStandardContainerResourceName(value) {
			return append(allErrs, field.Invalid(fldPath, value, "must be a standard resource for containers"))
		}
	} else if !isNativeResource(value) && !isExtendedResourceName(value) {
		return append(allErrs, field.Invalid(fldPath, value, "doesn't follow extended resource name standard"))
	}
	return allErrs
}

// supportedPodLevelResources are the names the pod-level resources field
// accepts (besides hugepages-*).
var supportedPodLevelResources = sets.New(corev1.ResourceCPU, corev1.ResourceMemory)

func validatePodResourceName(value corev1.ResourceName, fldPath *field.Path) field.ErrorList {
	allErrs := validateResourceName(value, fldPath)
	if len(allErrs) != 0 {
		return allErrs
	}
	if !supportedPodLevelResources.Has(value) && !isHugePageResourceName(value) {
		supported := append(sets.List(supportedPodLevelResources), corev1.ResourceHugePagesPrefix+"*")
		return append(allErrs, field.NotSupported(fldPath, value, supported))
	}
	return allErrs
}

func validateResourceQuotaResourceName(value corev1.ResourceName, fldPath *field.Path) field.ErrorList {
	allErrs := validateResourceName(value, fldPath)
	if !strings.Contains(string(value), "/") && !isStandardQuotaResourceName(value) {
		return append(allErrs, field.Invalid(fldPath, value, isInvalidQuotaResource))
	}
	return allErrs
}

// validateResourceQuantityValue: non-negative, and whole for resources that
// are counted rather than measured.
func validateResourceQuantityValue(name corev1.ResourceName, value resource.Quantity, fldPath *field.Path) field.ErrorList {
	allErrs := validateNonnegativeQuantity(value, fldPath)
	if isIntegerResourceName(name) && value.MilliValue()%1000 != 0 {
		allErrs = append(allErrs, field.Invalid(fldPath, value, isNotIntegerErrorMsg))
	}
	return allErrs
}

func validateBasicResource(quantity resource.Quantity, fldPath *field.Path) field.ErrorList {
	if quantity.Value() < 0 {
		return field.ErrorList{field.Invalid(fldPath, quantity.Value(), "must be a valid resource quantity")}
	}
	return nil
}

// validateHugePageValue: a hugepages amount must be a whole number of pages
// of the size the resource name gives.
func validateHugePageValue(name corev1.ResourceName, quantity resource.Quantity) error {
	pageSize, err := resource.ParseQuantity(strings.TrimPrefix(string(name), corev1.ResourceHugePagesPrefix))
	if err != nil || pageSize.Value() <= 0 || quantity.Value() <= 0 || quantity.Value()%pageSize.Value() != 0 {
		return fmt.Errorf("%s is not positive integer multiple of %s", quantity.String(), name)
	}
	return nil
}

var supportedQoSComputeResources = sets.New(corev1.ResourceCPU, corev1.ResourceMemory)

// validateResourceRequirements checks names and quantities, that requests do
// not exceed limits (and equal them where overcommit is not allowed), and
// that claims name entries of the pod's resourceClaims.
func validateResourceRequirements(req *corev1.ResourceRequirements, nameFn func(corev1.ResourceName, *field.Path) field.ErrorList, podClaimNames sets.Set[string], fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	limPath := fldPath.Child("limits")
	reqPath := fldPath.Child("requests")
	limContainsCPUOrMemory, reqContainsCPUOrMemory := false, false
	limContainsHugePages, reqContainsHugePages := false, false
	for name, quantity := range req.Limits {
		p := limPath.Key(string(name))
		allErrs = append(allErrs, nameFn(name, p)...)
		allErrs = append(allErrs, validateResourceQuantityValue(name, quantity, p)...)
		if isHugePageResourceName(name) {
			limContainsHugePages = true
			if err := validateHugePageValue(name, quantity); err != nil {
				allErrs = append(allErrs, field.Invalid(p, quantity.String(), err.Error()))
			}
		}
		if supportedQoSComputeResources.Has(name) {
			limContainsCPUOrMemory = true
		}
	}
	for name, quantity := range req.Requests {
		p := reqPath.Key(string(name))
		allErrs = append(allErrs, nameFn(name, p)...)
		allErrs = append(allErrs, validateResourceQuantityValue(name, quantity, p)...)
		if limit, ok := req.Limits[name]; ok {
			if quantity.Cmp(limit) != 0 && !isOvercommitAllowed(name) {
				allErrs = append(allErrs, field.Invalid(reqPath, quantity.String(), fmt.Sprintf("must be equal to %s limit of %s", name, limit.String())))
			} else if quantity.Cmp(limit) > 0 {
				allErrs = append(allErrs, field.Invalid(reqPath, quantity.String(), fmt.Sprintf("must be less than or equal to %s limit of %s", name, limit.String())))
			}
		} else if !isOvercommitAllowed(name) {
			allErrs = append(allErrs, field.Required(limPath, "Limit must be set for non overcommitable resources"))
		}
		if isHugePageResourceName(name) {
			reqContainsHugePages = true
			if err := validateHugePageValue(name, quantity); err != nil {
				allErrs = append(allErrs, field.Invalid(p, quantity.String(), err.Error()))
			}
		}
		if supportedQoSComputeResources.Has(name) {
			reqContainsCPUOrMemory = true
		}
	}
	if !limContainsCPUOrMemory && !reqContainsCPUOrMemory && (reqContainsHugePages || limContainsHugePages) {
		allErrs = append(allErrs, field.Forbidden(fldPath, "HugePages require cpu or memory"))
	}
	return append(allErrs, validateResourceClaimNames(req.Claims, podClaimNames, fldPath.Child("claims"))...)
}

func validateResourceClaimNames(claims []corev1.ResourceClaim, podClaimNames sets.Set[string], fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	names := sets.Set[string]{}
	for i, claim := range claims {
		name := claim.Name
		if name == "" {
			allErrs = append(allErrs, field.Required(fldPath.Index(i), ""))
			continue
		}
		if names.Has(name) {
			// Every request of that claim is already referenced.
			allErrs = append(allErrs, field.Duplicate(fldPath.Index(i), name))
		} else {
			key := name
			if claim.Request != "" {
				allErrs = append(allErrs, validateDNS1123Label(claim.Request, fldPath.Index(i).Child("request"))...)
				key += "/" + claim.Request
			}
			if names.Has(key) {
				allErrs = append(allErrs, field.Duplicate(fldPath.Index(i), key))
			} else if claim.Request == "" {
				// A whole claim overlaps any of its requests seen before.
				for seen := range names {
					if before, _, ok := strings.Cut(seen, "/"); ok && before == name {
						allErrs = append(allErrs, field.Duplicate(fldPath.Index(i), name))
					}
				}
			}
			names.Insert(key)
		}
		if !podClaimNames.Has(name) {
			err := field.NotFound(fldPath.Index(i), name)
			err.Detail = "must be one of the names in pod.spec.resourceClaims"
			if len(podClaimNames) == 0 {
				err.Detail += " which is empty"
			} else {
				err.Detail += ": " + strings.Join(sets.List(podClaimNames), ", ")
			}
			allErrs = append(allErrs, err)
		}
	}
	return allErrs
}

// roundUpResourceList rounds every quantity up to milli precision, as
// upstream's SetDefaults_ResourceList does for API compatibility.
func roundUpResourceList(list corev1.ResourceList) {
	for name, q := range list {
		q.RoundUp(-3)
		list[name] = q
	}
}

func roundUpResourceRequirements(r *corev1.ResourceRequirements) {
	roundUpResourceList(r.Limits)
	roundUpResourceList(r.Requests)
}
