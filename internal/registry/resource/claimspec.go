package resource

import (
	"context"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// defaultClaimSpec is upstream's defaulting of a claim's requests: one
// device unless told otherwise, and tolerations that compare values.
func defaultClaimSpec(spec *resourcev1.ResourceClaimSpec) {
	for i := range spec.Devices.Requests {
		r := &spec.Devices.Requests[i]
		if r.Exactly != nil {
			defaultAllocationMode(&r.Exactly.AllocationMode, &r.Exactly.Count)
			defaultTolerations(r.Exactly.Tolerations)
		}
		for j := range r.FirstAvailable {
			sub := &r.FirstAvailable[j]
			defaultAllocationMode(&sub.AllocationMode, &sub.Count)
			defaultTolerations(sub.Tolerations)
		}
	}
}

func defaultAllocationMode(mode *resourcev1.DeviceAllocationMode, count *int64) {
	if *mode == "" {
		*mode = resourcev1.DeviceAllocationModeExactCount
	}
	if *mode == resourcev1.DeviceAllocationModeExactCount && *count == 0 {
		*count = 1
	}
}

func defaultTolerations(tolerations []resourcev1.DeviceToleration) {
	for i := range tolerations {
		if tolerations[i].Operator == "" {
			tolerations[i].Operator = resourcev1.DeviceTolerationOpEqual
		}
	}
}

// dropDisabledClaimSpecFields clears what upstream's v1.37 drops by
// default: derived attributes (DRADerivedAttributes is alpha), unless the
// stored spec already uses them.
func dropDisabledClaimSpecFields(spec, old *resourcev1.ResourceClaimSpec) {
	if old != nil && usesDerivedAttributes(old) {
		return
	}
	for i := range spec.Devices.Requests {
		r := &spec.Devices.Requests[i]
		if r.Exactly != nil {
			r.Exactly.DerivedAttributes = nil
		}
		for j := range r.FirstAvailable {
			r.FirstAvailable[j].DerivedAttributes = nil
		}
	}
}

func usesDerivedAttributes(spec *resourcev1.ResourceClaimSpec) bool {
	for _, r := range spec.Devices.Requests {
		if r.Exactly != nil && len(r.Exactly.DerivedAttributes) > 0 {
			return true
		}
		for _, sub := range r.FirstAvailable {
			if len(sub.DerivedAttributes) > 0 {
				return true
			}
		}
	}
	return false
}

// validateClaimSpec checks a claim's spec, standalone or in a template.
func validateClaimSpec(spec *resourcev1.ResourceClaimSpec, fldPath *field.Path) field.ErrorList {
	allErrs := validateDeviceClaim(&spec.Devices, fldPath.Child("devices"))
	return append(allErrs, declarative(resourcev1.Validate_ResourceClaimSpec(context.Background(), createOp(), fldPath, spec, nil))...)
}

// validateDeviceClaim is upstream's handwritten half: the list sizes and
// uniqueness are the generated rules', and a list past its size is not
// looked into, as upstream does not.
func validateDeviceClaim(dc *resourcev1.DeviceClaim, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	names := gatherRequestNames(dc)
	if len(dc.Requests) <= resourcev1.DeviceRequestsMaxSize {
		for i, r := range dc.Requests {
			allErrs = append(allErrs, validateDeviceRequest(r, fldPath.Child("requests").Index(i))...)
		}
	}
	if len(dc.Constraints) <= resourcev1.DeviceConstraintsMaxSize {
		for i, c := range dc.Constraints {
			allErrs = append(allErrs, validateDeviceConstraint(c, fldPath.Child("constraints").Index(i), names)...)
		}
	}
	if len(dc.Config) <= resourcev1.DeviceConfigMaxSize {
		for i, c := range dc.Config {
			p := fldPath.Child("config").Index(i)
			allErrs = append(allErrs, validateRequestRefs(c.Requests, p.Child("requests"), names)...)
			allErrs = append(allErrs, validateDeviceConfiguration(c.DeviceConfiguration, p)...)
		}
	}
	return allErrs
}

func validateDeviceRequest(r resourcev1.DeviceRequest, fldPath *field.Path) field.ErrorList {
	allErrs := validateRequestName(r.Name, fldPath.Child("name"))
	switch {
	case r.Exactly == nil && len(r.FirstAvailable) == 0:
		allErrs = append(allErrs, field.Required(fldPath, "exactly one of `exactly` or `firstAvailable` is required"))
	case r.Exactly != nil && len(r.FirstAvailable) > 0:
		allErrs = append(allErrs, field.Invalid(fldPath, nil, "exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set"))
	case r.Exactly != nil:
		e, p := r.Exactly, fldPath.Child("exactly")
		if e.DeviceClassName == "" {
			allErrs = append(allErrs, field.Required(p.Child("deviceClassName"), ""))
		} else {
			allErrs = append(allErrs, validateDeviceClassName(e.DeviceClassName, p.Child("deviceClassName"))...)
		}
		allErrs = append(allErrs, validateSelectors(e.Selectors, p.Child("selectors"))...)
		allErrs = append(allErrs, validateAllocationMode(e.AllocationMode, e.Count, p.Child("count"))...)
		allErrs = append(allErrs, validateDeviceTolerations(e.Tolerations, p.Child("tolerations"))...)
	case len(r.FirstAvailable) <= resourcev1.FirstAvailableDeviceRequestMaxSize:
		for i, sub := range r.FirstAvailable {
			p := fldPath.Child("firstAvailable").Index(i)
			// The class name of a subrequest is the generated rules'.
			allErrs = append(allErrs, validateRequestName(sub.Name, p.Child("name"))...)
			allErrs = append(allErrs, validateSelectors(sub.Selectors, p.Child("selectors"))...)
			allErrs = append(allErrs, validateAllocationMode(sub.AllocationMode, sub.Count, p.Child("count"))...)
			allErrs = append(allErrs, validateDeviceTolerations(sub.Tolerations, p.Child("tolerations"))...)
		}
	}
	return allErrs
}

// validateAllocationMode checks the count against the mode; an unknown
// mode is the generated rules' to report.
func validateAllocationMode(mode resourcev1.DeviceAllocationMode, count int64, countPath *field.Path) field.ErrorList {
	switch mode {
	case resourcev1.DeviceAllocationModeAll:
		if count != 0 {
			return field.ErrorList{field.Invalid(countPath, count, "must not be specified when allocationMode is 'All'")}
		}
	case resourcev1.DeviceAllocationModeExactCount:
		if count <= 0 {
			return field.ErrorList{field.Invalid(countPath, count, "must be greater than zero")}
		}
	}
	return nil
}

func validateDeviceConstraint(c resourcev1.DeviceConstraint, fldPath *field.Path, names requestNames) field.ErrorList {
	allErrs := validateRequestRefs(c.Requests, fldPath.Child("requests"), names)
	// The attribute names' format is the generated rules'; upstream's
	// message for neither is as it is (with consumable capacity on).
	if c.MatchAttribute == nil && c.DistinctAttribute == nil {
		allErrs = append(allErrs, field.Required(fldPath, `exactly one of "matchAttribute" or "distinctAttribute" is required, but multiple fields are set`))
	}
	return allErrs
}

// requestNames maps each request of a claim to the names of its
// subrequests (nil for a request without).
type requestNames map[string]map[string]bool

func gatherRequestNames(dc *resourcev1.DeviceClaim) requestNames {
	names := requestNames{}
	for _, r := range dc.Requests {
		if len(r.FirstAvailable) == 0 {
			names[r.Name] = nil
			continue
		}
		subs := map[string]bool{}
		for _, sub := range r.FirstAvailable {
			subs[sub.Name] = true
		}
		names[r.Name] = subs
	}
	return names
}

// has reports whether ref names a request ("req") or one of its
// subrequests ("req/sub").
func (n requestNames) has(ref string) bool {
	req, sub, isSub := strings.Cut(ref, "/")
	subs, ok := n[req]
	if !ok {
		return false
	}
	return !isSub || subs[sub]
}

const requestRefMessage = "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'"

// validateRequestRefs checks references to requests; their count and
// uniqueness are the generated rules'.
func validateRequestRefs(refs []string, fldPath *field.Path, names requestNames) field.ErrorList {
	if len(refs) > resourcev1.DeviceRequestsMaxSize {
		return nil
	}
	var allErrs field.ErrorList
	for i, ref := range refs {
		allErrs = append(allErrs, validateRequestRef(ref, fldPath.Index(i), names)...)
	}
	return allErrs
}

func validateRequestRef(ref string, fldPath *field.Path, names requestNames) field.ErrorList {
	segments := strings.Split(ref, "/")
	if len(segments) > 2 {
		return field.ErrorList{field.Invalid(fldPath, ref, requestRefMessage)}
	}
	var allErrs field.ErrorList
	for _, s := range segments {
		allErrs = append(allErrs, validateRequestName(s, fldPath)...)
	}
	if !names.has(ref) {
		allErrs = append(allErrs, field.Invalid(fldPath, ref, requestRefMessage))
	}
	return allErrs
}
